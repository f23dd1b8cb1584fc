// `agentyard support-bundle [--output <file>]`: one archive a support engineer can read — versions,
// the state of every agentyard resource, recent events and container logs — with secrets redacted.
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { parseArgs } from 'node:util';
import { ApiextensionsV1Api, AppsV1Api, CoordinationV1Api, CoreV1Api, CustomObjectsApi, KubeConfig, NetworkingV1Api, VersionApi, type CoreV1Event, type V1Pod } from '@kubernetes/client-node';
import { bundleWriter, type BundleWriter } from './bundle-writer.ts';
import { UPLOAD_SECRET, UPLOAD_SECRET_KEY, UPLOAD_TOKEN_ENV, UploadError, uploadBundle, uploadUrl } from './support-upload.ts';

/** Lines kept from the end of each container's log. */
export const LOG_LINES_KEPT = 2000;

/**
 * The last LOG_LINES_KEPT lines of every container of every Pod in `namespace`, redacted, as
 * `<namespace>/logs/<pod>-<container>.log`: what the CLI's bundle holds, and the admin console's in
 * cluster mode. A namespace whose Pods cannot be listed gets `<namespace>/logs.error.txt` instead.
 */
export async function collectPodLogs(core: CoreV1Api, namespace: string, { write, attempt }: BundleWriter): Promise<void> {
  let pods: V1Pod[];
  try {
    pods = (await core.listNamespacedPod({ namespace })).items;
  } catch (err) {
    write(`${namespace}/logs.error.txt`, `could not list the Pods: ${(err as Error).message.split('\n')[0]}\n`);
    return;
  }
  for (const pod of pods) {
    for (const c of pod.spec?.containers ?? []) {
      await attempt(`${namespace}/logs/${pod.metadata?.name}-${c.name}.log`, () => core.readNamespacedPodLog({ name: pod.metadata!.name!, namespace, container: c.name, tailLines: LOG_LINES_KEPT }));
    }
  }
}

/** Events kept per namespace, newest first; a busy namespace has thousands within the event TTL. */
export const EVENTS_KEPT = 500;
// Events listed per namespace before choosing the newest: the API server lists in name order, not
// time order, so a limit on the list itself would keep arbitrary events.
const EVENTS_SCANNED = 20_000;

/** When an event last happened: the series, lastTimestamp or eventTime, else its creation. */
export function eventTime(e: CoreV1Event): number {
  for (const t of [e.series?.lastObservedTime, e.lastTimestamp, e.eventTime, e.metadata?.creationTimestamp]) {
    const ms = t ? new Date(t).getTime() : NaN;
    if (!Number.isNaN(ms)) return ms;
  }
  return 0;
}

/** The `limit` most recent events, newest first. */
export function recentEvents(events: CoreV1Event[], limit = EVENTS_KEPT): CoreV1Event[] {
  return [...events].sort((a, b) => eventTime(b) - eventTime(a)).slice(0, limit);
}

async function namespaceEvents(core: CoreV1Api, namespace: string): Promise<{ order: string; scanned: number; truncated: boolean; items: CoreV1Event[] }> {
  const all: CoreV1Event[] = [];
  let next: string | undefined;
  do {
    const page = await core.listNamespacedEvent({ namespace, limit: 1000, ...(next ? { _continue: next } : {}) });
    all.push(...page.items);
    next = page.metadata?._continue || undefined;
  } while (next && all.length < EVENTS_SCANNED);
  return { order: `newest first, at most ${EVENTS_KEPT}`, scanned: all.length, truncated: next !== undefined, items: recentEvents(all) };
}

/** The upload token from the installation's Secret; an UploadError saying how to provide one. */
async function uploadToken(core: CoreV1Api, namespace: string, name: string): Promise<string> {
  const fix = `set ${UPLOAD_TOKEN_ENV}, or create the Secret: kubectl -n ${namespace} create secret generic ${name} --from-literal=${UPLOAD_SECRET_KEY}=...`;
  let data: Record<string, string> | undefined;
  try {
    data = (await core.readNamespacedSecret({ name, namespace })).data;
  } catch (e) {
    const code = (e as { code?: number }).code;
    throw new UploadError(code === 404 ? `--upload needs the installation's upload token: Secret ${namespace}/${name} does not exist; ${fix}` : `--upload: cannot read Secret ${namespace}/${name} (${(e as Error).message.split('\n')[0]}); ${fix}`);
  }
  const token = data?.[UPLOAD_SECRET_KEY] ? Buffer.from(data[UPLOAD_SECRET_KEY], 'base64').toString('utf8').trim() : '';
  if (!token) throw new UploadError(`--upload: Secret ${namespace}/${name} has no key "${UPLOAD_SECRET_KEY}"; ${fix}`);
  return token;
}

function packageVersion(): string {
  return (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version;
}

export async function runSupportBundleCli(argv: string[], env: NodeJS.ProcessEnv = process.env, out: (s: string) => void = (s) => process.stdout.write(s)): Promise<number> {
  const { values } = parseArgs({
    args: argv,
    options: { output: { type: 'string', short: 'o' }, namespace: { type: 'string', short: 'n' }, 'sandbox-namespace': { type: 'string' }, upload: { type: 'string' }, 'ca-file': { type: 'string' }, 'upload-secret': { type: 'string' } },
    strict: true,
  });
  const err = (s: string) => process.stderr.write(s);
  const kc = new KubeConfig();
  kc.loadFromDefault();
  const core = kc.makeApiClient(CoreV1Api);
  const namespace = values.namespace ?? env.AGENTYARD_NAMESPACE ?? 'agentyard';
  // Upload settings are checked before anything is collected: a refused URL or a missing token
  // should not cost a bundle's worth of API calls first.
  let upload: { url: URL; token: string } | undefined;
  if (values.upload !== undefined) {
    try {
      const url = uploadUrl(values.upload);
      const token = env[UPLOAD_TOKEN_ENV] || (await uploadToken(core, namespace, values['upload-secret'] ?? UPLOAD_SECRET));
      upload = { url, token };
    } catch (e) {
      err(`support-bundle: ${(e as Error).message}\n`);
      return 2;
    }
  }
  const apps = kc.makeApiClient(AppsV1Api);
  const networking = kc.makeApiClient(NetworkingV1Api);
  const custom = kc.makeApiClient(CustomObjectsApi);
  const namespaces = [...new Set([namespace, values['sandbox-namespace'] ?? env.AGENTYARD_SANDBOX_NAMESPACE ?? 'agentyard-sandboxes'])];
  const work = mkdtempSync(join(tmpdir(), 'agentyard-bundle-'));
  const root = join(work, 'agentyard-support');
  mkdirSync(root);
  const { write, attempt } = bundleWriter(root);
  try {
    await attempt('versions.json', async () => ({ agentyard: packageVersion(), node: process.version, kubernetes: await kc.makeApiClient(VersionApi).getCode() }));
    await attempt('crds.json', async () => {
      const crds = await kc.makeApiClient(ApiextensionsV1Api).listCustomResourceDefinition();
      return crds.items.filter((c) => c.metadata?.name?.endsWith('.agentyard.dev')).map((c) => ({ name: c.metadata?.name, versions: c.spec.versions.map((v) => v.name), status: c.status }));
    });
    for (const ns of namespaces) {
      for (const plural of ['sandboxes', 'conversations', 'sandboxconfigurations']) {
        await attempt(`${ns}/${plural}.json`, () => custom.listNamespacedCustomObject({ group: 'agentyard.dev', version: 'v1alpha1', namespace: ns, plural }));
      }
      await attempt(`${ns}/deployments.json`, () => apps.listNamespacedDeployment({ namespace: ns }));
      await attempt(`${ns}/pods.json`, () => core.listNamespacedPod({ namespace: ns }));
      await attempt(`${ns}/persistentvolumeclaims.json`, () => core.listNamespacedPersistentVolumeClaim({ namespace: ns }));
      await attempt(`${ns}/services.json`, () => core.listNamespacedService({ namespace: ns }));
      await attempt(`${ns}/ingresses.json`, () => networking.listNamespacedIngress({ namespace: ns }));
      await attempt(`${ns}/leases.json`, () => kc.makeApiClient(CoordinationV1Api).listNamespacedLease({ namespace: ns }));
      await attempt(`${ns}/events.json`, () => namespaceEvents(core, ns));
      // Names, types and key names only: a Secret's values never enter the bundle.
      await attempt(`${ns}/secrets.json`, async () =>
        (await core.listNamespacedSecret({ namespace: ns })).items.map((sec) => ({ name: sec.metadata?.name, type: sec.type, keys: Object.keys(sec.data ?? {}) })),
      );
      await collectPodLogs(core, ns, { write, attempt });
    }
    const output = resolve(values.output ?? `agentyard-support-${new Date().toISOString().replace(/[:.]/g, '-')}.tar.gz`);
    await promisify(execFile)('tar', ['-czf', output, '-C', work, 'agentyard-support']);
    out(`support bundle written to ${output}\n`);
    if (!upload) return 0;
    try {
      const res = await uploadBundle(output, upload.url, { token: upload.token, ...(values['ca-file'] ? { caFile: values['ca-file'] } : {}), log: (l) => err(`support-bundle: ${l}\n`) });
      out(`support bundle uploaded to ${upload.url.origin}${upload.url.pathname} (HTTP ${res.status}${res.attempts > 1 ? `, after ${res.attempts} attempts` : ''})${res.body.trim() ? `: ${res.body.trim().slice(0, 300)}` : ''}\n`);
      return 0;
    } catch (e) {
      if (!(e instanceof UploadError)) throw e;
      err(`support-bundle: ${e.message}\n`);
      return 1;
    }
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}
