// `agentyard up`: the whole service on one machine. API facade + controller in this process,
// resources in SQLite, every sandbox an agent-server child process.
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { randomBytes } from 'node:crypto';
import { parseArgs } from 'node:util';
import { modelGatewayUrl } from '../api/model-gateway.ts';
import { SandboxKind } from '../api/sandbox.ts';
import { ConversationKind } from '../api/conversation.ts';
import { objectStoreFromEnv } from '../objstore/config.ts';
import { licenseFromEnv } from '../license/license.ts';
import { supportUploadFromEnv } from '../facade/support-bundle.ts';
import { systemClock } from '../controller/clock.ts';
import { createController } from '../controller/embedded.ts';
import { githubHostEnv, gitHostsFromEnv, gitSettingsFromEnv } from '../controller/conversation/repository.ts';
import { loadLifecycleSettings } from '../controller/lifecycle.ts';
import { openAppStore, startApiServer } from '../facade/index.ts';
import { modelUpstreamFromEnv } from '../facade/model-gateway/upstream.ts';
import { telemetryFromEnv } from '../facade/telemetry/provider.ts';
import { loadPluginCatalog } from '../facade/web/catalog.ts';
import { isLoopbackHttp, LOGIN_FLAGS, loginSettings } from '../facade/login/config.ts';
import { createSandboxLauncher } from '../runtime/process/isolation/launcher.ts';
import { loadIsolationSettings } from '../runtime/process/isolation/settings.ts';
import { ProcessRuntime } from '../runtime/process/process-runtime.ts';
import { SqliteStore } from '../store/sqlite/sqlite-store.ts';
import { MIN_FREE_DISK_ENV } from '../util/disk-space.ts';
import { subscriptionEndpointEnv } from '../agent-server/subscription/endpoints-env.ts';
import { createLogger } from '../util/log.ts';
import { appBackendEnv } from '../facade/app-backend-relay.ts';

const NAMESPACE = 'default';
const ADMIN_USER_ID = 'admin';

interface AdminKey {
  key: string;
  /** Where it came from: the operator's variable, the data dir, or made now (and stored there). */
  source: 'env' | 'stored' | 'generated';
  file: string;
}

/** The admin key: AGENTYARD_API_KEY, else the one stored in the data dir, else a new one stored there. */
function adminApiKey(dataDir: string, env: NodeJS.ProcessEnv): AdminKey {
  const file = join(dataDir, 'api-key');
  if (env.AGENTYARD_API_KEY) return { key: env.AGENTYARD_API_KEY, source: 'env', file };
  if (existsSync(file)) return { key: readFileSync(file, 'utf8').trim(), source: 'stored', file };
  const key = `ay_${randomBytes(24).toString('base64url')}`;
  writeFileSync(file, `${key}\n`, { mode: 0o600 });
  return { key, source: 'generated', file };
}

/**
 * What start-up says about the admin key. Standard output of a service ends up in logs (journald,
 * container logs), so the key itself is printed only the one time it is made; an operator who
 * chose it (AGENTYARD_API_KEY) already has it, and later starts say where it is kept.
 */
function adminKeyNotice(admin: AdminKey): string {
  switch (admin.source) {
    case 'generated':
      return `API key: ${admin.key}\n(the admin user's key, shown only this once; also stored in ${admin.file})\n`;
    case 'stored':
      return `The admin API key is stored in ${admin.file} (it was printed at the first start only)\n`;
    case 'env':
      return 'The admin API key is the one AGENTYARD_API_KEY holds\n';
  }
}

/** What agent servers inherit. Not the LLM_* variables: agents reach the model through the gateway. */
function agentServerEnv(env: NodeJS.ProcessEnv): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of ['AGENTYARD_LOG_LEVEL', MIN_FREE_DISK_ENV]) {
    const value = env[name];
    if (value) out[name] = value;
  }
  // The ChatGPT subscription's addresses (a proxy in front of OpenAI): every sandbox signs in through them.
  return { ...out, ...subscriptionEndpointEnv(env), ...githubHostEnv(env) };
}

/**
 * AGENTYARD_AGENT_SERVER_COMMAND: a JSON array that runs the agent server instead of this CLI, e.g.
 * through a wrapper (nice, a sandboxing tool). The runtime appends `--port ... --workspace ...`; the
 * command line must contain "agent-server" (how a restarted `up` recognises its sandboxes' processes).
 */
function agentServerCommand(env: NodeJS.ProcessEnv): string[] | undefined {
  const raw = env.AGENTYARD_AGENT_SERVER_COMMAND;
  if (!raw) return undefined;
  let cmd: unknown;
  try {
    cmd = JSON.parse(raw);
  } catch {
    cmd = undefined;
  }
  if (!Array.isArray(cmd) || cmd.length === 0 || !cmd.every((a) => typeof a === 'string')) {
    throw new Error('AGENTYARD_AGENT_SERVER_COMMAND must be a JSON array of strings, e.g. ["nice", "agentyard", "agent-server"]');
  }
  if (!cmd.join(' ').includes('agent-server')) throw new Error('AGENTYARD_AGENT_SERVER_COMMAND must contain "agent-server" (a restarted service recognises its agent servers by it)');
  return cmd as string[];
}

export async function runUp(argv: string[], env: NodeJS.ProcessEnv = process.env): Promise<number> {
  const { values } = parseArgs({
    args: argv,
    options: { port: { type: 'string' }, host: { type: 'string' }, 'data-dir': { type: 'string' }, ...LOGIN_FLAGS },
    strict: true,
  });
  const port = Number(values.port ?? env.AGENTYARD_PORT ?? '3000');
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error(`--port must be an integer 0..65535, got '${values.port ?? env.AGENTYARD_PORT}'`);
  const host = values.host ?? env.AGENTYARD_HOST ?? '127.0.0.1';
  const dataDir = resolve(values['data-dir'] ?? env.AGENTYARD_DATA_DIR ?? '.data');
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  chmodSync(dataDir, 0o700);
  const settings = loadLifecycleSettings(env);
  const isolationSettings = loadIsolationSettings(env);
  const command = agentServerCommand(env);
  const agentEnv = agentServerEnv(env); // refuses a subscription address that is no URL, now
  const pluginCatalog = loadPluginCatalog(env);
  const modelUpstream = modelUpstreamFromEnv(env); // refuses a model it could never reach, now
  // OpenID Connect login (README, "Login"); without --public-url the callback is at this service's own
  // address, which browsers can reach only when it listens on loopback.
  const login = loginSettings(env, values);
  if (login && !login.publicUrl && !isLoopbackHttp(new URL(`http://${host.includes(':') ? `[${host}]` : host}`))) {
    throw new Error(`--public-url (AGENTYARD_PUBLIC_URL) is required with OpenID Connect login when listening on ${host}: the address browsers use, e.g. https://agentyard.example.com`);
  }
  const log = createLogger('agentyard');

  // Sandboxes as users of their own in namespaces of their own, or (when the host cannot) one user only.
  const isolation = await createSandboxLauncher(dataDir, isolationSettings);

  // Workspace archives and conversation files (src/objstore): <dataDir>/objects unless
  // AGENTYARD_OBJECT_STORE says otherwise; a wrong setting or an unreachable bucket stops us here.
  const objects = objectStoreFromEnv(env, dataDir);
  await objects.init();
  // A license that is malformed or not the vendor's stops us here, naming what is wrong.
  const license = licenseFromEnv(env);

  const clock = systemClock;
  const store = new SqliteStore(join(dataDir, 'resources.db'), { clock });
  // The app store follows AGENTYARD_DATABASE_URL as `agentyard api` and `agentyard users` do; resources stay in SQLite.
  const db = await openAppStore({ databaseUrl: env.AGENTYARD_DATABASE_URL || undefined, sqlitePath: join(dataDir, 'app.db'), clock, log });
  await db.setSingleUser(isolation.reason);
  if (!(await db.getUser(ADMIN_USER_ID))) await db.createUser('admin', ADMIN_USER_ID);
  const users = await db.countUsers();
  if (!isolation.isolated && users > 1) {
    await db.close();
    store.close();
    throw new Error(`this installation has ${users} users, but its sandboxes cannot be isolated from each other here (${isolation.reason}); refusing to start. Run it as root with bubblewrap installed (README, "Sandbox isolation").`);
  }
  await db.setUserAdmin(ADMIN_USER_ID, true); // manages users through the API (/api/v1/users)
  const admin = adminApiKey(dataDir, env);
  await db.addApiKey(ADMIN_USER_ID, admin.key);

  const telemetry = await telemetryFromEnv(env, 'agentyard', log);
  const api = await startApiServer({ store, db, clock, namespace: NAMESPACE, settings: { capacity: settings.capacity, idleTimeMs: settings.idleTimeMs, deletionTimeMs: settings.deletionTimeMs, marketplaceListing: 'any-host' }, gitHosts: gitHostsFromEnv(process.env), pluginCatalog, webConnectSrc: ['ws://127.0.0.1:*'], dataDir, objects, ...(license ? { license } : {}), supportUpload: supportUploadFromEnv(env), port, host, log, sandboxSpec: { runtime: 'process', readAt: new Date().toISOString() }, ...(modelUpstream ? { modelUpstream } : {}), ...(telemetry ? { telemetry } : {}), ...(login ? { login } : {}), appIngress: appIngressOf(env, host, login?.publicUrl) });
  if (login) login.publicUrl ??= api.url; // read at each login, so filling it once listening is enough
  // The model gateway is a route of this same API (see README): agent servers already reach it for the event sink.
  const model = modelUpstream ? { model: modelUpstream.model, gatewayUrl: modelGatewayUrl(api.url) } : undefined;
  // A deleted sandbox's conversation files are kept only for conversations that still exist.
  const keepConversation = async (id: string) => {
    const c = await store.get(ConversationKind, NAMESPACE, id);
    return c !== undefined && !c.metadata.deletionTimestamp;
  };
  const runtime = new ProcessRuntime({ dataDir, objects, keepConversation, env: agentEnv, ...(api.appIngress ? { sandboxEnv: (name: string) => appBackendEnv(api.appIngress!, name) } : {}), sinkBaseUrl: api.url, log, launcher: isolation.launcher, ...(model ? { model } : {}), ...(command ? { command } : {}) });
  const controller = createController({ store, runtime, clock, settings, namespace: NAMESPACE, log, git: gitSettingsFromEnv(process.env) });
  await controller.start();

  // Before the "is up" line, which is what scripts wait for.
  process.stdout.write(`${isolation.summary}\n`);
  log[isolation.isolated ? 'info' : 'warn']({ isolated: isolation.isolated, ...(isolation.reason ? { reason: isolation.reason } : {}) }, isolation.summary);
  process.stdout.write(adminKeyNotice(admin));
  if (login) process.stdout.write(`Sign-in: OpenID Connect at ${login.issuer} (redirect URI ${login.publicUrl}/auth/callback), or with an API key\n`);
  if (api.appIngress) process.stdout.write(`Canvas App backends of sandboxes are reached at ${api.appIngress.publicUrl}/sandboxes/<sandbox>/app-backends/<app>/\n`);
  process.stdout.write(`agentyard is up at ${api.url}\n`);
  if (!env.LLM_MODEL) {
    process.stdout.write('No model configured: set LLM_MODEL, LLM_BASE_URL and LLM_API_KEY for the agent to work.\n');
  }

  return new Promise<number>((resolveExit) => {
    const stop = async (signal: NodeJS.Signals) => {
      process.off('SIGTERM', onSignal);
      process.off('SIGINT', onSignal);
      log.info({ signal }, 'shutting down');
      try {
        await controller.stop();
        const { items } = await store.list(SandboxKind, NAMESPACE);
        await runtime.stopAll(items.map((sb) => sb.metadata.name));
        await api.close();
        await telemetry?.shutdown();
        store.close();
        await db.close();
        resolveExit(0);
      } catch (err) {
        log.error({ err }, 'shutdown failed');
        resolveExit(1);
      }
    };
    const onSignal = (signal: NodeJS.Signals) => void stop(signal);
    process.on('SIGTERM', onSignal);
    process.on('SIGINT', onSignal);
  });
}

/**
 * The app-backend ingress of `agentyard up`: a second port on the same host (a browser origin of its
 * own), AGENTYARD_APP_PORT or any free one; AGENTYARD_APP_PUBLIC_URL when browsers reach it through
 * a proxy. The web app's origin: its public URL (OIDC login), else the API's own (server.ts).
 */
function appIngressOf(env: NodeJS.ProcessEnv, host: string, publicUrl: string | undefined): { port: number; host: string; publicUrl?: string; webOrigins?: string[] } {
  const appPort = Number(env.AGENTYARD_APP_PORT ?? '0');
  if (!Number.isInteger(appPort) || appPort < 0 || appPort > 65535) throw new Error(`AGENTYARD_APP_PORT must be an integer 0..65535, got '${env.AGENTYARD_APP_PORT}'`);
  return { port: appPort, host, ...(env.AGENTYARD_APP_PUBLIC_URL ? { publicUrl: env.AGENTYARD_APP_PUBLIC_URL } : {}), ...(publicUrl ? { webOrigins: [new URL(publicUrl).origin] } : {}) };
}
