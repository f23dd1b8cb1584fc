// `agentyard preflight`: checks a cluster for what agentyard needs, and says how to fix what is
// missing. Each check is independent; all of them run, so one run shows every problem.
import { ApiextensionsV1Api, AuthorizationV1Api, CoreV1Api, StorageV1Api, type KubeConfig } from '@kubernetes/client-node';
import { loadRuntimeAddressing } from '../../runtime/kubernetes/addressing.ts';

export interface CheckResult {
  name: string;
  ok: boolean;
  detail: string;
  fix?: string;
}

export interface PreflightSettings {
  namespace: string;
  sandboxNamespace: string;
  storageClass: string | undefined;
  secrets: { name: string; key: string }[];
  env: NodeJS.ProcessEnv;
}

const CRDS = ['sandboxes.agentyard.dev', 'conversations.agentyard.dev'];

/** What the controller must be allowed to do in the sandbox namespace. */
const CONTROLLER_ACCESS: [group: string, resource: string, verb: string][] = [
  ['agentyard.dev', 'sandboxes', 'watch'],
  ['agentyard.dev', 'conversations', 'update'],
  ['', 'pods', 'create'],
  ['', 'persistentvolumeclaims', 'create'],
  ['', 'services', 'create'],
  ['', 'secrets', 'create'],
  ['networking.k8s.io', 'ingresses', 'create'],
  ['coordination.k8s.io', 'leases', 'update'],
];

function status(err: unknown): number | undefined {
  return (err as { code?: number }).code;
}

export async function runChecks(kc: KubeConfig, s: PreflightSettings): Promise<CheckResult[]> {
  const core = kc.makeApiClient(CoreV1Api);
  const results: CheckResult[] = [];
  const check = async (name: string, fn: () => Promise<Omit<CheckResult, 'name'>>) => {
    try {
      results.push({ name, ...(await fn()) });
    } catch (err) {
      results.push({ name, ok: false, detail: `could not check: ${(err as Error).message}`, fix: 'Check that the cluster is reachable with this kubeconfig' });
    }
  };

  await check('CRDs installed', async () => {
    const api = kc.makeApiClient(ApiextensionsV1Api);
    const missing: string[] = [];
    for (const name of CRDS) await api.readCustomResourceDefinition({ name }).catch((e: unknown) => (status(e) === 404 ? missing.push(name) : Promise.reject(e)));
    return missing.length
      ? { ok: false, detail: `missing: ${missing.join(', ')}`, fix: 'kubectl apply -f crds/ (or install the Helm chart, which ships them)' }
      : { ok: true, detail: CRDS.join(', ') };
  });

  for (const ns of [...new Set([s.namespace, s.sandboxNamespace])]) {
    await check(`namespace ${ns}`, async () => {
      const found = await core.readNamespace({ name: ns }).then(() => true, (e: unknown) => (status(e) === 404 ? false : Promise.reject(e)));
      return found ? { ok: true, detail: 'exists' } : { ok: false, detail: 'does not exist', fix: `kubectl create namespace ${ns}` };
    });
  }

  await check('storage class', async () => {
    if (!s.storageClass) return { ok: false, detail: 'STORAGE_CLASS is not set', fix: 'Set STORAGE_CLASS (chart: runtime.storageClass) to one of `kubectl get storageclass`' };
    const found = await kc
      .makeApiClient(StorageV1Api)
      .readStorageClass({ name: s.storageClass })
      .then(() => true, (e: unknown) => (status(e) === 404 ? false : Promise.reject(e)));
    return found
      ? { ok: true, detail: `${s.storageClass} exists` }
      : { ok: false, detail: `StorageClass '${s.storageClass}' does not exist; sandboxes would never start`, fix: 'Pick one of `kubectl get storageclass`' };
  });

  await check('sandbox URL settings', async () => {
    try {
      const a = loadRuntimeAddressing(s.env);
      return { ok: true, detail: `sandbox hosts look like ${a.urlFor('<runtime_id>')}` };
    } catch (err) {
      return { ok: false, detail: (err as Error).message, fix: 'Make RUNTIME_URL_PATTERN equal {runtime_id}<RUNTIME_URL_SEPARATOR><RUNTIME_BASE_URL>, or leave it unset' };
    }
  });

  for (const ref of s.secrets) {
    await check(`secret ${ref.name}`, async () => {
      const secret = await core.readNamespacedSecret({ name: ref.name, namespace: s.namespace }).catch((e: unknown) => (status(e) === 404 ? undefined : Promise.reject(e)));
      if (!secret) return { ok: false, detail: `missing in namespace ${s.namespace}`, fix: `kubectl -n ${s.namespace} create secret generic ${ref.name} --from-literal=${ref.key}=...` };
      return secret.data?.[ref.key] ? { ok: true, detail: `has key ${ref.key}` } : { ok: false, detail: `has no key '${ref.key}'`, fix: `Add the key ${ref.key} to Secret ${ref.name}` };
    });
  }

  await check('RBAC for the controller', async () => {
    const authz = kc.makeApiClient(AuthorizationV1Api);
    const denied: string[] = [];
    for (const [group, resource, verb] of CONTROLLER_ACCESS) {
      const review = await authz.createSelfSubjectAccessReview({ body: { spec: { resourceAttributes: { group, resource, verb, namespace: s.sandboxNamespace } } } });
      if (!review.status?.allowed) denied.push(`${verb} ${resource}${group ? `.${group}` : ''}`);
    }
    return denied.length
      ? { ok: false, detail: `not allowed in ${s.sandboxNamespace}: ${denied.join(', ')}`, fix: 'Bind the agentyard-controller Role (the Helm chart creates it) to this identity' }
      : { ok: true, detail: `allowed in ${s.sandboxNamespace}` };
  });

  return results;
}

export function formatResults(results: CheckResult[]): string {
  const lines = results.map((r) => `${r.ok ? 'ok  ' : 'FAIL'}  ${r.name}: ${r.detail}${!r.ok && r.fix ? `\n      fix: ${r.fix}` : ''}`);
  const failed = results.filter((r) => !r.ok).length;
  lines.push(failed ? `${failed} of ${results.length} checks failed` : `all ${results.length} checks passed`);
  return `${lines.join('\n')}\n`;
}
