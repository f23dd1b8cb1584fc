// `agentyard preflight`: checks a cluster for what agentyard needs, and says how to fix what is
// missing. Each check is independent; all of them run, so one run shows every problem.
import { ApiextensionsV1Api, CoreV1Api, NetworkingV1Api, StorageV1Api, type KubeConfig } from '@kubernetes/client-node';
import { loadRuntimeAddressing } from '../../runtime/kubernetes/addressing.ts';
import { allowedAccessText, apiAccess, apiForbidden, controllerAccess, deniedAccess } from './access.ts';
import { checkAppDatabase } from './database.ts';
import { clusterRanges, uncovered } from './ranges.ts';
import { checkFreeDisk } from './disk.ts';
import type { PreflightSettings } from './settings.ts';

export interface CheckResult {
  name: string;
  ok: boolean;
  detail: string;
  fix?: string;
}

type Outcome = Omit<CheckResult, 'name'>;

// Helm installs crds/ on the first install only: an upgrade that brings a new kind (SandboxConfiguration)
// needs `kubectl apply` of the directory, which this check names.
export const CRDS = ['sandboxes.agentyard.dev', 'conversations.agentyard.dev', 'sandboxconfigurations.agentyard.dev'];

function statusOf(err: unknown): number | undefined {
  return (err as { code?: number }).code;
}

/** The API server's own message when there is one, not the client's whole dump. */
function messageOf(err: unknown): string {
  const body = (err as { body?: unknown }).body;
  try {
    const parsed = (typeof body === 'string' ? JSON.parse(body) : body) as { message?: string } | undefined;
    if (parsed?.message) return parsed.message;
  } catch {
    // not JSON: fall through
  }
  return err instanceof Error ? err.message.split('\n')[0]! : String(err);
}

/** Resolves to undefined on 404, so "missing" reads as a value, not an error. */
async function orMissing<T>(p: Promise<T>): Promise<T | undefined> {
  return p.catch((e: unknown) => (statusOf(e) === 404 ? undefined : Promise.reject(e)));
}

async function attempt(name: string, fn: () => Promise<Outcome>): Promise<CheckResult> {
  try {
    return { name, ...(await fn()) };
  } catch (err) {
    const code = statusOf(err);
    if (code === 401 || code === 403) {
      return { name, ok: false, detail: `not allowed to look: ${messageOf(err)}`, fix: 'Run preflight as a cluster administrator, or through `helm test <release>` (its Pod has the rights it needs)' };
    }
    return { name, ok: false, detail: `could not check: ${messageOf(err)}`, fix: 'Check that the cluster is reachable with this kubeconfig (KUBECONFIG, or in-cluster credentials)' };
  }
}

export async function runChecks(kc: KubeConfig, s: PreflightSettings): Promise<CheckResult[]> {
  const core = kc.makeApiClient(CoreV1Api);
  const checks: [string, () => Promise<Outcome>][] = [];

  checks.push([
    'CRDs installed',
    async () => {
      const api = kc.makeApiClient(ApiextensionsV1Api);
      const missing: string[] = [];
      for (const name of CRDS) if (!(await orMissing(api.readCustomResourceDefinition({ name })))) missing.push(name);
      return missing.length
        ? { ok: false, detail: `missing: ${missing.join(', ')}`, fix: 'kubectl apply --server-side -f charts/agentyard/crds/ (helm install applies them on first install)' }
        : { ok: true, detail: CRDS.join(', ') };
    },
  ]);

  for (const [ns, role] of [[s.namespace, 'release'], [s.sandboxNamespace, 'sandbox']] as const) {
    checks.push([
      `${role} namespace ${ns}`,
      async () => {
        if (role === 'sandbox' && ns === s.namespace) {
          return { ok: false, detail: 'is the release namespace; sandboxes run agent-written code and must live apart from the application', fix: `Set sandboxNamespace.name to another namespace, e.g. ${ns}-sandboxes` };
        }
        const found = await orMissing(core.readNamespace({ name: ns }));
        if (!found) return { ok: false, detail: 'does not exist', fix: `kubectl create namespace ${ns}` };
        const enforce = found.metadata?.labels?.['pod-security.kubernetes.io/enforce'];
        return { ok: true, detail: role === 'sandbox' ? `exists (pod security: ${enforce ?? 'not enforced; restricted is recommended'})` : 'exists' };
      },
    ]);
  }

  checks.push([
    'storage class',
    async () => {
      if (!s.storageClass) return { ok: false, detail: 'STORAGE_CLASS (runtime.storageClass) is not set', fix: 'Set runtime.storageClass to one of `kubectl get storageclass`' };
      const found = await orMissing(kc.makeApiClient(StorageV1Api).readStorageClass({ name: s.storageClass }));
      return found
        ? { ok: true, detail: `${s.storageClass} exists (provisioner ${found.provisioner})` }
        : { ok: false, detail: `StorageClass '${s.storageClass}' does not exist; sandboxes would never start`, fix: 'Set runtime.storageClass to one of `kubectl get storageclass`' };
    },
  ]);

  checks.push([
    'sandbox URL settings',
    async () => {
      try {
        const url = loadRuntimeAddressing(s.runtimeEnv).urlFor('<runtime_id>');
        if (url.startsWith('https:') && !s.tlsSecret) {
          return { ok: false, detail: `sandbox URLs look like ${url}, but no wildcard TLS Secret is set (ingress.tlsSecret, RUNTIME_TLS_SECRET)`, fix: 'Set ingress.tlsSecret to the kubernetes.io/tls Secret of *.<baseDomain>, or runtime.disableSsl=true' };
        }
        return { ok: true, detail: `sandbox URLs look like ${url}` };
      } catch (err) {
        return { ok: false, detail: (err as Error).message, fix: 'Leave runtime.urlPattern (RUNTIME_URL_PATTERN) empty, or make it {runtime_id}<runtime.urlSeparator><runtime.baseUrl>' };
      }
    },
  ]);

  for (const ref of s.secrets) {
    checks.push([
      `secret ${ref.namespace}/${ref.name} (${ref.what})`,
      async () => {
        const secret = await orMissing(core.readNamespacedSecret({ name: ref.name, namespace: ref.namespace }));
        if (!secret) return { ok: false, detail: 'missing', fix: `kubectl -n ${ref.namespace} create secret generic ${ref.name} --from-literal=${ref.key}=...` };
        return secret.data?.[ref.key] ? { ok: true, detail: `has key ${ref.key}` } : { ok: false, detail: `has no key '${ref.key}'`, fix: `Add the key ${ref.key} to Secret ${ref.namespace}/${ref.name}` };
      },
    ]);
  }

  if (s.dataDir) {
    const dir = s.dataDir;
    checks.push([`free disk at ${dir} (AGENTYARD_DATA_DIR)`, async () => checkFreeDisk(dir, s.minFreeDiskBytes)]);
  }

  if (s.databaseUrl) {
    const url = s.databaseUrl;
    checks.push(['app database (AGENTYARD_DATABASE_URL)', () => checkAppDatabase(url)]);
  }

  // Only the release namespace: the API's service account may read Secrets in the sandbox
  // namespace, so the private key stays out of it (sandbox hosts get the ingress controller's
  // default certificate).
  if (s.tlsSecret) {
    const ns = s.namespace;
    checks.push([
      `TLS secret ${ns}/${s.tlsSecret} (ingress.tlsSecret)`,
      async () => {
        const secret = await orMissing(core.readNamespacedSecret({ name: s.tlsSecret, namespace: ns }));
        if (!secret) return { ok: false, detail: 'missing; an Ingress reads its certificate from its own namespace', fix: `kubectl -n ${ns} create secret tls ${s.tlsSecret} --cert=wildcard.crt --key=wildcard.key` };
        return secret.data?.['tls.crt'] ? { ok: true, detail: 'has tls.crt' } : { ok: false, detail: 'has no tls.crt', fix: `Recreate it with kubectl -n ${ns} create secret tls` };
      },
    ]);
  }

  for (const [who, account, wanted] of [
    ['controller', s.controllerServiceAccount, controllerAccess(s)],
    ['API', s.apiServiceAccount, apiAccess(s)],
  ] as const) {
    checks.push([
      `RBAC for the ${who}`,
      async () => {
        const denied = await deniedAccess(kc, s.namespace, account, wanted);
        return denied.length
          ? { ok: false, detail: `service account ${s.namespace}/${account} may not: ${denied.join(', ')}`, fix: `Install the chart (it binds these Roles to ${account}), or grant them as in charts/agentyard/templates/rbac-*.yaml` }
          : { ok: true, detail: `service account ${s.namespace}/${account} has what it needs` };
      },
    ]);
  }

  if (s.deniedRanges) {
    const denied = s.deniedRanges;
    checks.push([
      'cluster ranges denied to sandboxes',
      async () => {
        const nodes = (await core.listNode()).items;
        // ServiceCIDR objects exist from Kubernetes 1.33 on; before, only the setting says.
        const serviceCidrs = await kc
          .makeApiClient(NetworkingV1Api)
          .listServiceCIDR()
          .then((l) => l.items)
          .catch((e: unknown) => (statusOf(e) === 404 ? [] : Promise.reject(e)));
        const missing = uncovered(clusterRanges(nodes, serviceCidrs), denied);
        if (missing.length) {
          return { ok: false, detail: `sandboxes could reach ${missing.map((m) => `${m.range} (not in networkPolicy.${m.value})`).join(', ')}`, fix: 'Add each range, or one that covers it, to the value named beside it' };
        }
        return { ok: true, detail: `the Pod ranges and addresses of ${nodes.length} node(s) and ${serviceCidrs.length} ServiceCIDR(s) are denied` };
      },
    ]);
  }

  // The API may read every Secret of the sandbox namespace (RBAC cannot narrow that to its own),
  // so the installation's keys must be elsewhere and out of its reach.
  checks.push([
    "installation secrets out of the API's reach",
    async () => {
      const names = [...s.secrets.map((r) => r.name), ...(s.tlsSecret ? [s.tlsSecret] : [])];
      const beside: string[] = [];
      for (const name of names) if (await orMissing(core.readNamespacedSecret({ name, namespace: s.sandboxNamespace }))) beside.push(name);
      if (beside.length) {
        return { ok: false, detail: `in the sandbox namespace, whose Secrets the API may read: ${beside.join(', ')}`, fix: `Keep them in ${s.namespace} only: kubectl -n ${s.sandboxNamespace} delete secret ${beside.join(' ')}` };
      }
      const allowed = await allowedAccessText(kc, s.namespace, s.apiServiceAccount, apiForbidden(s));
      return allowed.length
        ? { ok: false, detail: `service account ${s.namespace}/${s.apiServiceAccount} may: ${allowed.join(', ')}`, fix: `Remove the Role or ClusterRole binding that grants it; the chart grants the API Secrets in ${s.sandboxNamespace} only` }
        : { ok: true, detail: `none in ${s.sandboxNamespace}, and ${s.namespace}/${s.apiServiceAccount} may read none of them` };
    },
  ]);

  const results: CheckResult[] = [];
  for (const [name, fn] of checks) results.push(await attempt(name, fn));
  return results;
}

export function formatResults(results: CheckResult[]): string {
  const lines = results.map((r) => `${r.ok ? 'ok  ' : 'FAIL'}  ${r.name}: ${r.detail}${!r.ok && r.fix ? `\n      fix: ${r.fix}` : ''}`);
  const failed = results.filter((r) => !r.ok).length;
  lines.push(failed ? `${failed} of ${results.length} checks failed` : `all ${results.length} checks passed`);
  return `${lines.join('\n')}\n`;
}
