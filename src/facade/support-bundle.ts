// POST /api/v1/admin/support-bundle: the admin console's "send a support bundle". The API collects
// what it can see in either mode — versions, settings that matter to support, every Sandbox and
// Conversation resource, users without their keys, the license status — redacted as the CLI's
// bundle is (src/cli/support-bundle.ts: Secret values, sensitive env values, keys in free text),
// and POSTs it over HTTPS to the installation's receiver with its upload token
// (src/cli/support-upload.ts: retries, no redirects, token never in a message). In cluster mode it
// holds the Pod logs of the release and sandbox namespaces too (`podLogs`, the CLI's collector, read
// with the API's own service account); the rest of the cluster-wide bundle (Deployments, events,
// Leases) stays `agentyard support-bundle`, which has a kubeconfig.
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { promisify } from 'node:util';
import { readFileSync } from 'node:fs';
import type { SupportBundleUpload } from '../api/app/admin.ts';
import { BadGateway, Conflict } from '../api/errors.ts';
import { ConversationKind } from '../api/conversation.ts';
import { SandboxKind } from '../api/sandbox.ts';
import { bundleWriter } from '../cli/bundle-writer.ts';
import { UPLOAD_SECRET, UPLOAD_SECRET_KEY, UPLOAD_TOKEN_ENV, UploadError, uploadBundle, uploadUrl } from '../cli/support-upload.ts';
import { licenseStatus } from '../license/license.ts';
import type { FacadeDeps } from './deps.ts';

/** Where bundles go: AGENTYARD_SUPPORT_UPLOAD_URL, its token and an optional CA file. */
export interface SupportUploadSettings {
  url?: string;
  token?: string;
  caFile?: string;
}

export function supportUploadFromEnv(env: NodeJS.ProcessEnv): SupportUploadSettings {
  return {
    ...(env.AGENTYARD_SUPPORT_UPLOAD_URL ? { url: env.AGENTYARD_SUPPORT_UPLOAD_URL } : {}),
    ...(env[UPLOAD_TOKEN_ENV] ? { token: env[UPLOAD_TOKEN_ENV] } : {}),
    ...(env.AGENTYARD_SUPPORT_UPLOAD_CA_FILE ? { caFile: env.AGENTYARD_SUPPORT_UPLOAD_CA_FILE } : {}),
  };
}

const version = () => (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version;

async function collect(d: FacadeDeps, root: string): Promise<void> {
  const bundle = bundleWriter(root);
  const { write, attempt } = bundle;
  const users = await d.db.listUsers();
  write('versions.json', { agentyard: version(), node: process.version, collected_at: d.clock.now().toISO() });
  write('installation.json', {
    runtime: d.sandboxSpec?.runtime ?? 'process',
    namespace: d.namespace,
    settings: d.settings,
    object_store: d.objects ? { kind: d.objects.kind, location: d.objects.location } : null,
    model_gateway: d.modelUpstream ? { model: d.modelUpstream.model } : null,
    license: licenseStatus(d.license, d.clock.now().toJSDate(), users.filter((u) => !u.disabled_at).length),
  });
  await attempt('sandboxes.json', async () => (await d.store.list(SandboxKind, d.namespace)).items);
  await attempt('conversations.json', async () => (await d.store.list(ConversationKind, d.namespace)).items);
  write('users.json', users.map((u) => ({ id: u.id, name: u.name, admin: u.admin, disabled_at: u.disabled_at })));
  await d.podLogs?.(bundle);
}

export async function uploadSupportBundle(d: FacadeDeps, s: SupportUploadSettings): Promise<SupportBundleUpload> {
  if (!s.url) throw new Conflict('No support upload URL is configured: set support.uploadUrl in the chart (AGENTYARD_SUPPORT_UPLOAD_URL), or run agentyard support-bundle --upload <url>');
  if (!s.token) throw new Conflict(`No support upload token is configured: create the Secret ${UPLOAD_SECRET} (key ${UPLOAD_SECRET_KEY}) in the release namespace (${UPLOAD_TOKEN_ENV})`);
  let url: URL;
  try {
    url = uploadUrl(s.url);
  } catch (err) {
    throw new Conflict((err as Error).message.replace(/^--upload: /, 'support.uploadUrl: '));
  }
  const work = mkdtempSync(join(tmpdir(), 'agentyard-bundle-'));
  try {
    const root = join(work, 'agentyard-support');
    mkdirSync(root);
    await collect(d, root);
    const file = join(work, `agentyard-support-${d.clock.now().toISO()!.replace(/[:.]/g, '-')}.tar.gz`);
    await promisify(execFile)('tar', ['-czf', file, '-C', work, 'agentyard-support']);
    const files = readdirSync(root, { recursive: true, withFileTypes: true }).filter((e) => e.isFile()).map((e) => relative(root, join(e.parentPath, e.name))).sort();
    try {
      const res = await uploadBundle(file, url, { token: s.token, ...(s.caFile ? { caFile: s.caFile } : {}), log: (line) => d.log?.warn({ line }, 'support bundle upload') });
      return { uploaded_to: `${url.origin}${url.pathname}`, status: res.status, attempts: res.attempts, bytes: statSync(file).size, files, receipt: res.body.trim().slice(0, 300) };
    } catch (err) {
      if (err instanceof UploadError) throw new BadGateway(err.message);
      throw err;
    }
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}
