// Shared fixtures for the facade's tests: a real SqliteStore file, a real AppDb file, a manual
// clock, users with API keys, a listening API server, and helpers that play the controller.
import type { GitHosts } from '../controller/conversation/repository.ts';
import type { ObjectStore } from '../objstore/types.ts';
import type { InstalledLicense } from '../license/license.ts';
import type { SupportUploadSettings } from './support-bundle.ts';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Conversation, StartTaskStatus } from '../api/conversation.ts';
import { API_VERSION, LABEL_OWNER, LABEL_START_TASK } from '../api/meta.ts';
import { SandboxKind, type Sandbox, type SandboxPhase } from '../api/sandbox.ts';
import { SecretKind } from '../api/secret.ts';
import { ConversationKind } from '../api/conversation.ts';
import { ManualClock } from '../controller/clock.ts';
import { SqliteStore } from '../store/sqlite/sqlite-store.ts';
import { freshConnections } from '../testing/fresh-connections.ts';
import { createLogger } from '../util/log.ts';
import { SqliteAppStore } from './db/app-db.ts';
import type { AppStore, AppUser } from './db/types.ts';
import type { DefaultSandboxSpec, FacadeSettings } from './deps.ts';
import type { ModelUpstream } from './model-gateway/upstream.ts';
import type { LoginSettings } from './login/config.ts';
import { startApiServer, type ApiServer } from './server.ts';
import { startAgentServer, type AgentServer } from '../agent-server/server.ts';
import { FakeAgents, startRequest } from '../agent-server/test-support.ts';
import { eventSinkUrl } from './routes/webhooks.ts';

export const NS = 'default';

export interface Harness {
  dir: string;
  store: SqliteStore;
  db: AppStore;
  clock: ManualClock;
  server: ApiServer;
  alice: { user: AppUser; key: string };
  bob: { user: AppUser; key: string };
  /** fetch against the API with a user's key (or none / a raw header). */
  call(method: string, path: string, opts?: { key?: string | null; body?: unknown; rawBody?: string; headers?: Record<string, string> }): Promise<{ status: number; body: any; headers: Headers }>;
  close(): Promise<void>;
}

export async function startHarness(
  settings: Partial<FacadeSettings> = {},
  opts: { deliveryRetryMs?: number; /** Default: a SQLite file in the harness dir. */ appStore?: (clock: ManualClock) => Promise<AppStore>; modelUpstream?: ModelUpstream; sandboxSpec?: DefaultSandboxSpec; login?: LoginSettings; objects?: ObjectStore; license?: InstalledLicense; supportUpload?: SupportUploadSettings; gitHosts?: GitHosts } = {},
): Promise<Harness> {
  const dir = mkdtempSync(join(tmpdir(), 'facade-'));
  const clock = new ManualClock('2026-03-01T10:00:00Z');
  const store = new SqliteStore(join(dir, 'store.db'), { clock });
  const db = opts.appStore ? await opts.appStore(clock) : new SqliteAppStore(join(dir, 'app.db'), { clock });
  const mk = async (name: string) => {
    const user = await db.createUser(name);
    return { user, key: await db.createApiKey(user.id) };
  };
  const alice = await mk('alice');
  const bob = await mk('bob');
  const server = await startApiServer({
    store,
    db,
    clock,
    namespace: NS,
    settings: { capacity: 10, ...settings },
    log: createLogger('facade-test'),
    port: 0,
    host: '127.0.0.1',
    deliveryRetryMs: opts.deliveryRetryMs ?? 50,
    ...(opts.modelUpstream ? { modelUpstream: opts.modelUpstream } : {}),
    ...(opts.sandboxSpec ? { sandboxSpec: opts.sandboxSpec } : {}),
    ...(opts.login ? { login: opts.login } : {}),
    ...(opts.objects ? { objects: opts.objects } : {}),
    ...(opts.license ? { license: opts.license } : {}),
    ...(opts.supportUpload ? { supportUpload: opts.supportUpload } : {}),
    ...(opts.gitHosts ? { gitHosts: opts.gitHosts } : {}),
  });
  const call: Harness['call'] = async (method, path, o = {}) => {
    const headers: Record<string, string> = { ...o.headers };
    const key = o.key === undefined ? alice.key : o.key;
    if (key !== null) headers['authorization'] = `Bearer ${key}`;
    let body: string | undefined = o.rawBody;
    if (o.body !== undefined) body = JSON.stringify(o.body);
    if (body !== undefined) headers['content-type'] ??= 'application/json';
    // A connection of its own: the facade runs in this process (why: testing/fresh-connections.ts).
    const res = await fetch(server.url + path, { method, headers, ...(body !== undefined ? { body } : {}), dispatcher: freshConnections } as RequestInit);
    const text = await res.text();
    let parsed: unknown = text;
    try {
      parsed = JSON.parse(text);
    } catch {
      // not JSON
    }
    return { status: res.status, body: parsed, headers: res.headers };
  };
  return {
    dir,
    store,
    db,
    clock,
    server,
    alice,
    bob,
    call,
    async close() {
      await server.close();
      store.close();
      await db.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Plays the controller: a Sandbox of `owner` in `phase`, with a session key Secret. */
export async function makeSandbox(
  store: SqliteStore,
  owner: AppUser,
  name: string,
  phase: SandboxPhase | undefined,
  opts: { url?: string; key?: string; paused?: boolean } = {},
): Promise<Sandbox> {
  const sb = await store.create(SandboxKind, {
    apiVersion: API_VERSION,
    kind: 'Sandbox',
    metadata: { name, namespace: NS, labels: { [LABEL_OWNER]: owner.id } },
    spec: { owner: owner.id, paused: opts.paused ?? phase === 'PAUSED' },
  });
  await store.create(SecretKind, {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: `${name}-session`, namespace: NS },
    data: { key: Buffer.from(opts.key ?? `key-of-${name}`).toString('base64') },
  });
  return phase ? setSandboxPhase(store, name, phase, opts.url) : sb;
}

export async function setSandboxPhase(store: SqliteStore, name: string, phase: SandboxPhase, url?: string): Promise<Sandbox> {
  const sb = (await store.get(SandboxKind, NS, name))!;
  return store.updateStatus(SandboxKind, { ...sb, status: { ...sb.status, phase, ...(url ? { url } : {}) } });
}

/** Plays the controller: place a conversation and move its start task. */
export async function setStartTask(store: SqliteStore, id: string, status: StartTaskStatus, sandboxName?: string, at?: string): Promise<Conversation> {
  const c = (await store.get(ConversationKind, NS, id))!;
  return store.updateStatus(ConversationKind, {
    ...c,
    status: { ...c.status, startTask: { status, ...(at ? { updatedAt: at } : {}) }, ...(sandboxName ? { sandboxName } : {}) },
  });
}

export interface FakeAgentServer {
  url: string;
  received: { path: string; key: string | undefined; body: any }[];
  /** Status to answer with next (default 200). */
  failWith: number | undefined;
  close(): Promise<void>;
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

/** A tiny agent server: records POST /api/conversations/{id}/events; checks the session key. */
export async function startFakeAgentServer(expectedKey: string): Promise<FakeAgentServer> {
  const fake: FakeAgentServer = { url: '', received: [], failWith: undefined, close: async () => {} };
  const server: Server = createServer((req, res) => {
    void readBody(req).then((text) => {
      const key = req.headers['x-session-api-key'] as string | undefined;
      if (key !== expectedKey) {
        res.writeHead(401).end('{"detail":"Unauthorized"}');
        return;
      }
      if (fake.failWith) {
        res.writeHead(fake.failWith).end('{"detail":"nope"}');
        return;
      }
      fake.received.push({ path: req.url ?? '', key, body: JSON.parse(text) });
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"success":true}');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  fake.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  fake.close = () =>
    new Promise<void>((r) => {
      server.close(() => r());
      server.closeAllConnections();
    });
  return fake;
}

/** Waits for a condition driven by background loops (no timing assumptions beyond a generous cap). */
export async function eventually(check: () => Promise<boolean> | boolean, what: string, capMs = 5000): Promise<void> {
  const until = Date.now() + capMs;
  while (!(await check())) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

export function messageEvent(id: string, text: string, timestamp = '2026-03-01T10:00:00.000Z'): Record<string, unknown> {
  return { id, timestamp, source: 'user', llm_message: { role: 'user', content: [{ type: 'text', text }] }, kind: 'MessageEvent' };
}

export function pauseEvent(id: string, timestamp = '2026-03-01T10:00:00.000Z'): Record<string, unknown> {
  return { id, timestamp, source: 'user', kind: 'PauseEvent' };
}

/** Starts a conversation over HTTP and returns the Conversation id behind the start task. */
export async function startConversationId(h: Harness, body: Record<string, unknown> = {}, key = h.alice.key): Promise<string> {
  const r = await h.call('POST', '/api/v1/app-conversations', { key, body });
  if (r.status !== 200) throw new Error(`start failed: ${r.status} ${JSON.stringify(r.body)}`);
  const { items } = await h.store.list(ConversationKind, NS, { labelSelector: `${LABEL_START_TASK}=${r.body.id}` });
  return items[0]!.metadata.name;
}

/**
 * A harness with a real agent server (fake agents) as alice's RUNNING sandbox `sb-1`, its workspace
 * at `workspace`, for the workspace reads (file, files, skills, hooks).
 */
export interface WorkspaceHarness extends Harness {
  agent: AgentServer;
  workspace: string;
  /** A READY conversation in sb-1, created on the agent server with this working dir. */
  conversation(workingDir: string, extra?: Record<string, unknown>): Promise<string>;
}

/** `sink`: the agent server pushes its events and status into the app's event log, as a sandbox does. */
export async function startWorkspaceHarness(settings: Partial<FacadeSettings> = {}, opts: Parameters<typeof startHarness>[1] & { sink?: boolean } = {}): Promise<WorkspaceHarness> {
  const h = await startHarness(settings, opts);
  const workspace = join(h.dir, 'ws');
  const agent = await startAgentServer({
    port: 0,
    workspaceDir: workspace,
    sessionKeys: ['sk-1'],
    createAgent: new FakeAgents().createAgent,
    log: createLogger('agent-server-test'),
    ...(opts.sink ? { sink: { url: eventSinkUrl(h.server.url, 'sb-1'), key: 'sk-1' }, tuning: { sink: { retryInitialMs: 20, retryMaxMs: 100 } } } : {}),
  });
  await makeSandbox(h.store, h.alice.user, 'sb-1', 'RUNNING', { url: agent.url, key: 'sk-1' });
  return {
    ...h,
    agent,
    workspace,
    async conversation(workingDir, extra = {}) {
      const id = await startConversationId(h, { sandbox_id: 'sb-1' });
      // Playing the controller: the conversation exists on the agent server, then its task is READY.
      const created = await fetch(`${agent.url}/api/conversations`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-session-api-key': 'sk-1' },
        body: JSON.stringify(startRequest(workingDir, { conversation_id: id, ...extra })),
      });
      if (created.status >= 300) throw new Error(`the agent server answered ${created.status} to the conversation create`);
      await setStartTask(h.store, id, 'READY', 'sb-1');
      return id;
    },
    async close() {
      await agent.close();
      await h.close();
    },
  };
}

/**
 * Every page of an app-API search, following next_page_id (at most `maxPages`, so a cursor that
 * never ends fails the test instead of hanging it); a page that is not a 200 throws with its body.
 */
export async function walkPages(h: Harness, path: string, key?: string, maxPages = 60): Promise<{ pages: number; items: any[] }> {
  const items: any[] = [];
  let pages = 0;
  let next: string | null = null;
  do {
    const r = await h.call('GET', `${path}${next ? `&page_id=${next}` : ''}`, key ? { key } : {});
    if (r.status !== 200) throw new Error(`GET ${path} page ${pages + 1}: ${r.status} ${JSON.stringify(r.body)}`);
    items.push(...r.body.items);
    next = r.body.next_page_id;
    pages++;
  } while (next && pages < maxPages);
  return { pages, items };
}

/** The public hosts of github, gitlab and bitbucket and no forgejo host, with `over` on top. */
export function testGitHosts(over: Partial<GitHosts>): GitHosts {
  return { github: 'https://github.com', gitlab: 'https://gitlab.com', bitbucket: 'https://bitbucket.org', forgejo: undefined, ...over };
}
