// The two servers of the differential suite, each with its own scripted model (the same script is
// pushed to both): the real OpenHands agent server (Python, installed by hack/openhands-server.sh
// into a cached virtualenv) and ours, both on loopback with the same session key.
import { spawn, type ChildProcess } from 'node:child_process';
import { appendFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { homedir, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { createAgent, createAgentWith } from '../../src/agent/agent.ts';
import { keyRefreshFromEnv } from '../../src/agent/llm/key-refresh.ts';
import { startAgentServer, type AgentServer } from '../../src/agent-server/server.ts';
import { startDeferredAgentServer } from '../../src/agent-server/deferred.ts';
import { Fernet } from '../../src/agent-server/fernet.ts';
import { extensionsConfigFromEnv } from '../../src/agent/skills/extensions-repo.ts';
import { stopGroup } from '../../src/runtime/process/processes.ts';
import { startScriptedLlm, type ScriptedLlm } from '../../src/testing/scripted-llm/server.ts';
import { requiredForTests } from '../../src/testing/required/required.ts';
import { createLogger } from '../../src/util/log.ts';
import { freePort } from '../../src/testing/ports.ts';

export const OPENHANDS_VERSION = '1.58.2';
export const KEY = 'parity-session-key';
/** Both servers' OH_SECRET_KEY: stored secrets (LLM profile keys) sealed at rest; also the init key of /api/init. */
export const SECRET_KEY = 'parity-secret-key';
/**
 * The GraySwan key both servers' deployments give (GRAYSWAN_API_KEY, which 1.58 prefers to the
 * settings' field): 1.58 loses a key sent in the request (its round trip stores the mask), so the
 * side-by-side GraySwan flow (flows-security.ts) goes through the environment.
 */
export const GRAYSWAN_PARITY_KEY = 'gs-parity-key';

/**
 * The extensions repository both servers read (e2e/parity/flows-extensions.ts builds it): a local
 * git checkout named by EXTENSIONS_PATH (public skills), and the target of a git `insteadOf` for
 * OpenHands' github.com/OpenHands/extensions URL (the clone that sync and the marketplace catalogs
 * use), given to both servers' git alike. Until the flow builds it, it does not exist: no public
 * skills, as without network.
 */
export const PARITY_EXTENSIONS = join(tmpdir(), `parity-extensions-${process.pid}`);
export const EXTENSIONS_ENV = {
  EXTENSIONS_PATH: PARITY_EXTENSIONS,
  GIT_CONFIG_COUNT: '1',
  GIT_CONFIG_KEY_0: `url.${PARITY_EXTENSIONS}.insteadOf`,
  GIT_CONFIG_VALUE_0: 'https://github.com/OpenHands/extensions',
};

/** The installed OpenHands agent server, or undefined (the suite skips unless the cluster suites are required). */
export function openhandsBinary(): string | undefined {
  const cache = process.env['AGENTYARD_CACHE'] ?? join(homedir(), '.cache/agentyard');
  const bin = join(cache, 'venv', `openhands-agent-server-${OPENHANDS_VERSION}`, 'bin', 'agent-server');
  return requiredForTests(existsSync(bin) ? bin : undefined, `the OpenHands agent server ${OPENHANDS_VERSION} (${bin})`, 'run hack/openhands-server.sh (make test does)');
}

export interface Side {
  name: 'openhands' | 'agentyard';
  url: string;
  llm: ScriptedLlm;
  /** Replaces `llm` with a fresh scripted model (no steps, no requests). */
  renewLlm(): Promise<void>;
  /** A directory the server may use as a conversation's working directory. */
  workDir: string;
  /** The server's user home (HOME on OpenHands' side): user skills under it. */
  home: string;
  /** The Canvas App backend ingress (OH_APP_BACKEND_PUBLIC_URL): the server's own address, under the name 127.0.0.1. */
  ingress: string;
  /**
   * Makes the side's scripted model the one the OpenAI-compatible gateway offers as
   * `openhands_default`: OpenHands stores it as the LLM profile `default`; ours offers its configured
   * model (LLM_MODEL, ...), which follows the scripted model already.
   */
  gatewayModel(): Promise<void>;
  api(path: string, init?: { method?: string; body?: unknown; key?: string | null; rawBody?: string; headers?: Record<string, string> }): Promise<{ status: number; body: any }>;
  close(): Promise<void>;
}

/** A Side's `llm` and `renewLlm`, on a scripted model that can be replaced between flows. */
async function scripted(): Promise<Pick<Side, 'llm' | 'renewLlm'>> {
  const side = { llm: await startScriptedLlm(), renewLlm: async () => {} };
  side.renewLlm = async () => {
    await side.llm.close();
    side.llm = await startScriptedLlm();
  };
  return side;
}


/**
 * No kept-alive connections between requests: a connection a server dropped (uvicorn closes it after an
 * unhandled exception) must not be reused by the next request, which may belong to the next flow and
 * would fail with ECONNRESET. Flows stay independent of how the previous one ended.
 */
const noKeepAlive = new Agent({ keepAlive: false });

function apiOf(url: string): Side['api'] {
  return async (path, init = {}) => {
    const headers: Record<string, string> = { ...init.headers };
    const key = init.key === undefined ? KEY : init.key;
    if (key !== null) headers['x-session-api-key'] = key;
    const body = init.body !== undefined ? JSON.stringify(init.body) : init.rawBody;
    if (body !== undefined) headers['content-type'] = 'application/json';
    const { status, text } = await new Promise<{ status: number; text: string }>((resolve, reject) => {
      const req = request(url + path, { agent: noKeepAlive, method: init.method ?? 'GET', headers: { ...headers, ...(body !== undefined ? { 'content-length': String(Buffer.byteLength(body)) } : {}) } }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
      });
      req.on('error', reject);
      req.end(body);
    });
    try {
      return { status, body: JSON.parse(text) };
    } catch {
      return { status, body: text };
    }
  };
}

async function waitReady(url: string, child: ChildProcess, log: () => string, ms: number): Promise<void> {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    if (child.exitCode !== null) throw new Error(`the OpenHands agent server exited (${child.exitCode}) while starting:\n${log().slice(-4000)}`);
    const status = await apiOf(url)('/ready', { key: null }).then((r) => r.status, () => 0);
    if (status === 200) return;
    await new Promise((r) => setTimeout(r, 500));
  }
  throw new Error(`the OpenHands agent server was not ready within ${ms / 1000} s:\n${log().slice(-4000)}`);
}

/**
 * The environment the OpenHands agent server runs with here (bench/agent-steps.ts starts it the same
 * way): paths under `dir`, session key KEY, VS Code, tool preloading, browser and telemetry off.
 * It also needs `dir/tmux` to exist.
 */
export function openhandsEnv(dir: string, workDir: string): NodeJS.ProcessEnv {
  return {
    PATH: process.env['PATH'] ?? '/usr/bin:/bin',
    HOME: dir,
    OH_SESSION_API_KEYS_0: KEY,
    OH_SECRET_KEY: SECRET_KEY,
    OH_ENABLE_VSCODE: 'false',
    OH_PRELOAD_TOOLS: 'false',
    OH_ENABLE_BROWSER: 'false',
    OH_WORKSPACE_PATH: workDir,
    OH_CONVERSATIONS_PATH: join(dir, 'conversations'),
    OH_BASH_EVENTS_DIR: join(dir, 'bash_events'),
    OH_CONVERSATION_WORKTREE_ROOT: join(dir, 'worktrees'),
    TMUX_TMPDIR: join(dir, 'tmux'),
    // No telemetry and no LLM-catalogue fetches from a test.
    OH_TELEMETRY__EXPORTER: 'none',
    LITELLM_LOCAL_MODEL_COST_MAP: 'True',
    PYTHONUNBUFFERED: '1',
    GRAYSWAN_API_KEY: GRAYSWAN_PARITY_KEY,
  };
}

/**
 * The real server in `dir` on a free loopback port, with the environment `env(url)` gives; ready
 * when it answers (240 s: its imports are heavy and the machine may be loaded). `close` stops its
 * process group. The last 20,000 characters of its output go into a failed start's error, and all
 * of it to PARITY_OPENHANDS_LOG while working on the suite.
 */
async function launchOpenHands(bin: string, dir: string, env: (url: string) => NodeJS.ProcessEnv): Promise<{ url: string; close(): Promise<void> }> {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  let out = '';
  const child = spawn(bin, ['--host', '127.0.0.1', '--port', String(port)], { cwd: dir, detached: true, stdio: ['ignore', 'pipe', 'pipe'], env: env(url) });
  const logFile = process.env['PARITY_OPENHANDS_LOG'];
  const keep = (d: Buffer) => {
    out = (out + d.toString()).slice(-20_000);
    if (logFile) appendFileSync(logFile, d);
  };
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  const close = async () => {
    if (child.exitCode === null && child.pid) await stopGroup(child.pid, 10_000);
  };
  try {
    await waitReady(url, child, () => out, 240_000);
  } catch (err) {
    await close();
    throw err;
  }
  return { url, close };
}

/**
 * The real OpenHands agent server. Its paths (conversations, bash events, default workspace) are
 * relative to its working directory, so it runs in a throwaway one; VS Code, tool preloading and the
 * browser are off (nothing a flow here uses). Starting takes 20-60 s: its imports are heavy.
 * `env`: added to its environment (server settings of flows-server-env.ts; the GitHub side-by-side test's proxy and CA).
 */
export async function startOpenHands(bin: string, env: Record<string, string> = {}): Promise<Side> {
  // While working on the suite: reuse a server already running (started with OH_SESSION_API_KEYS_0=KEY).
  const running = process.env['PARITY_OPENHANDS_URL'];
  if (running) {
    const workDir = mkdtempSync(join(tmpdir(), 'parity-openhands-work-'));
    const side = await scripted();
    const api = apiOf(running);
    return Object.assign(side, { name: 'openhands' as const, url: running, ingress: running, workDir, home: homedir(), api, gatewayModel: () => saveProfile(api, side.llm.url), close: async () => (await side.llm.close(), rmSync(workDir, { recursive: true, force: true })) });
  }
  const dir = mkdtempSync(join(tmpdir(), 'parity-openhands-'));
  const workDir = join(dir, 'work');
  mkdirSync(workDir);
  const side = await scripted();
  mkdirSync(join(dir, 'tmux'));
  let server: Awaited<ReturnType<typeof launchOpenHands>>;
  try {
    server = await launchOpenHands(bin, dir, (url) => ({ ...openhandsEnv(dir, workDir), ...EXTENSIONS_ENV, OH_APP_BACKEND_PUBLIC_URL: url, ...env }));
  } catch (err) {
    await side.llm.close();
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
  const { url } = server;
  const close = async () => {
    await server.close();
    await side.llm.close();
    rmSync(dir, { recursive: true, force: true });
  };
  const api = apiOf(url);
  return Object.assign(side, { name: 'openhands' as const, url, ingress: url, workDir, home: dir, api, gatewayModel: () => saveProfile(api, side.llm.url), close });
}

/** OpenHands' LLM profile `default` (the gateway's `openhands_default`) on the scripted model at `llmUrl`. */
async function saveProfile(api: Side['api'], llmUrl: string): Promise<void> {
  const r = await api('/api/profiles/default', { method: 'POST', body: { llm: { model: 'openai/scripted', base_url: llmUrl, api_key: 'sk-parity', usage_id: 'agent' }, include_secrets: true } });
  if (r.status !== 201) throw new Error(`saving the LLM profile: ${r.status} ${JSON.stringify(r.body)}`);
}

/**
 * Ours, in this process, with the real agent. `env`: server settings read from the environment as
 * src/agent-server/main.ts reads them (managed LLM key refresh, OH_REGISTERED_MARKETPLACES), for the
 * flows that start a server of their own (flows-server-env.ts). `githubHost`: where its GitHub
 * repository search asks (default github.com).
 */
export async function startAgentyard(env: Record<string, string> = {}, opts: { githubHost?: string } = {}): Promise<Side> {
  const dir = mkdtempSync(join(tmpdir(), 'parity-agentyard-'));
  const workDir = join(dir, 'work');
  mkdirSync(workDir);
  const side = await scripted();
  // The configured model (LLM_MODEL, ...): the OpenAI-compatible gateway's openhands_default. Read
  // at each use, so it follows the scripted model renewed for each flow.
  const llmDefaults = { model: 'openai/scripted', baseUrl: side.llm.url, apiKey: 'sk-parity' };
  const renew = side.renewLlm;
  side.renewLlm = async () => {
    await renew();
    llmDefaults.baseUrl = side.llm.url;
  };
  const port = await freePort();
  const keyRefresh = keyRefreshFromEnv({ OH_SESSION_API_KEYS_0: KEY, ...env });
  const server: AgentServer = await startAgentServer({
    port,
    appBackends: { publicUrl: `http://127.0.0.1:${port}` },
    workspaceDir: workDir,
    dataDir: join(dir, 'data'),
    // Its own home for user and installed skills and plugins: the side's directory, as OpenHands' side
    // runs with HOME=its dir (and as the extensions repository's home below).
    home: dir,
    sessionKeys: [KEY],
    createAgent: keyRefresh ? createAgentWith({ model: { keyRefresh } }) : createAgent,
    llmDefaults,
    // As OpenHands' OH_SECRET_KEY: seals stored secrets (without one ours refuses to store a profile's key).
    secretKey: SECRET_KEY,
    // As OpenHands here: its home is the side's directory (HOME=dir), the same extensions repository.
    extensions: { ...extensionsConfigFromEnv({ HOME: dir, EXTENSIONS_PATH: PARITY_EXTENSIONS, ...env }), home: dir, gitEnv: { GIT_CONFIG_COUNT: EXTENSIONS_ENV.GIT_CONFIG_COUNT, GIT_CONFIG_KEY_0: EXTENSIONS_ENV.GIT_CONFIG_KEY_0, GIT_CONFIG_VALUE_0: EXTENSIONS_ENV.GIT_CONFIG_VALUE_0 } },
    log: createLogger('agent-server', 'silent'),
    ...(opts.githubHost ? { githubHost: opts.githubHost } : {}),
  });
  return Object.assign(side, {
    name: 'agentyard' as const,
    url: server.url,
    ingress: server.url,
    workDir,
    home: dir,
    api: apiOf(server.url),
    gatewayModel: async () => {},
    close: async () => {
      await server.close();
      await side.llm.close();
      rmSync(dir, { recursive: true, force: true });
      for (const d of [PARITY_EXTENSIONS, `${PARITY_EXTENSIONS}-market`]) rmSync(d, { recursive: true, force: true });
    },
  });
}

/** A server started, stopped and started again on the same data (key rotation: each start with other keys). */
export interface Restartable {
  start(keys: { secret: string; previous?: string[] }): Promise<{ api: Side['api']; close(): Promise<void> }>;
  remove(): void;
}

/**
 * A server of `name`'s kind whose data outlives each start: OpenHands keeps its settings and secrets
 * files under its working directory, ours its SQLite file under the data dir. OH_PREVIOUS_SECRET_KEYS
 * goes to OpenHands as the JSON list, to ours as its server option (src/agent-server/main.ts reads
 * the same variable; settings-restart.test.ts starts our process with it).
 */
export function restartable(name: Side['name']): Restartable {
  const dir = mkdtempSync(join(tmpdir(), `parity-rotation-${name}-`));
  const workDir = join(dir, 'work');
  mkdirSync(workDir);
  mkdirSync(join(dir, 'tmux'));
  const remove = () => rmSync(dir, { recursive: true, force: true });
  if (name === 'agentyard') {
    return {
      remove,
      async start(keys) {
        const server = await startAgentServer({ port: 0, workspaceDir: workDir, dataDir: join(dir, 'data'), home: join(dir, 'home'), sessionKeys: [KEY], createAgent, secretKey: keys.secret, previousSecretKeys: keys.previous ?? [], log: createLogger('agent-server', 'silent') });
        return { api: apiOf(server.url), close: () => server.close() };
      },
    };
  }
  return {
    remove,
    async start(keys) {
      const { url, close } = await launchOpenHands(openhandsBinary()!, dir, () => ({ ...openhandsEnv(dir, workDir), OH_SECRET_KEY: keys.secret, ...(keys.previous ? { OH_PREVIOUS_SECRET_KEYS: JSON.stringify(keys.previous) } : {}) }));
      return { api: apiOf(url), close };
    },
  };
}

/** A server started deferred (OH_DEFERRED_INIT), one start, over a store seeded with a secret sealed with an earlier key. */
export interface DeferredServer {
  /** A settings secret `name` = `value` in the store, sealed with `key` (what an earlier server left). */
  seed(o: { key: string; name: string; value: string }): Promise<void>;
  /** The dormant server: its secret key `dormantKey` is the X-Init-API-Key. */
  start(o: { dormantKey: string }): Promise<{ url: string; api: Side['api']; close(): Promise<void> }>;
  /** Whether the stored secret `name` now opens with `key` alone (sealed again with it at the initialization). */
  opensWith(o: { key: string; name: string }): Promise<boolean>;
  remove(): void;
}

/**
 * OpenHands' side: the secret is written into its secrets file (~/.openhands/secrets.json, a Fernet
 * token of the key, as 1.58 writes it) rather than through a first start, so that the flow costs
 * one start of the real server; whether the initialization sealed it again is read from that file.
 * Ours: a first start in this process (fast) stores it, and a start with only the new key reads it.
 */
export function deferredServer(name: Side['name']): DeferredServer {
  const dir = mkdtempSync(join(tmpdir(), `parity-deferred-${name}-`));
  const workDir = join(dir, 'work');
  mkdirSync(workDir);
  mkdirSync(join(dir, 'tmux'));
  const remove = () => rmSync(dir, { recursive: true, force: true });
  if (name === 'agentyard') {
    const base = { port: 0, workspaceDir: workDir, dataDir: join(dir, 'data'), home: join(dir, 'home'), sessionKeys: [KEY], createAgent, log: createLogger('agent-server', 'silent') };
    return {
      remove,
      async seed(o) {
        const server = await startAgentServer({ ...base, secretKey: o.key });
        const r = await apiOf(server.url)('/api/settings/secrets', { method: 'PUT', body: { name: o.name, value: o.value } });
        await server.close();
        if (r.status !== 200) throw new Error(`seeding the secret: ${r.status} ${JSON.stringify(r.body)}`);
      },
      async start(o) {
        const server = await startDeferredAgentServer({ ...base, secretKey: o.dormantKey });
        return { url: server.url, api: apiOf(server.url), close: () => server.close() };
      },
      async opensWith(o) {
        const server = await startAgentServer({ ...base, secretKey: o.key });
        try {
          return (await apiOf(server.url)(`/api/settings/secrets/${o.name}`)).status === 200;
        } finally {
          await server.close();
        }
      },
    };
  }
  const secretsFile = join(dir, '.openhands', 'secrets.json');
  return {
    remove,
    async seed(o) {
      mkdirSync(dirname(secretsFile), { recursive: true, mode: 0o700 });
      writeFileSync(secretsFile, JSON.stringify({ custom_secrets: { [o.name]: { name: o.name, secret: new Fernet(o.key).encrypt(o.value), description: null } } }), { mode: 0o600 });
    },
    async start(o) {
      const { url, close } = await launchOpenHands(openhandsBinary()!, dir, () => ({ ...openhandsEnv(dir, workDir), OH_SECRET_KEY: o.dormantKey, OH_DEFERRED_INIT: 'true' }));
      return { url, api: apiOf(url), close };
    },
    async opensWith(o) {
      const stored = JSON.parse(readFileSync(secretsFile, 'utf8')) as { custom_secrets?: Record<string, { secret?: string }> };
      const token = stored.custom_secrets?.[o.name]?.secret;
      return typeof token === 'string' && new Fernet(o.key).decrypt(token) !== undefined;
    },
  };
}
