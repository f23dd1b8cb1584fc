// Test support for the agent server: temp dirs, a started server, a small fake agent, a JSON
// client and a WebSocket frame collector. Not a test file itself.
import { mkdtempSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, expect } from 'vitest';
import { WebSocket } from 'ws';
import type { AgentHost, ConversationAgent, CreateAgent } from '../agent/types.ts';
import { newEventBase, type Event } from '../api/events/index.ts';
import { freshConnections } from '../testing/fresh-connections.ts';
import { startScriptedLlm, type ScriptedLlm } from '../testing/scripted-llm/server.ts';
import { startAgentServer, type AgentServer, type AgentServerOptions } from './server.ts';

export function tempDir(prefix = 'agent-server-'): { path: string; remove(): void } {
  const path = mkdtempSync(join(tmpdir(), prefix));
  return { path, remove: () => rmSync(path, { recursive: true, force: true }) };
}

export type Script = (host: AgentHost, signal: AbortSignal) => Promise<void>;

/** Replies with "echo: <last user text>" and finishes. */
export const echoScript: Script = async (host) => {
  const last = [...host.events()].reverse().find((e) => e.kind === 'MessageEvent' && e.source === 'user');
  const text = last?.kind === 'MessageEvent' ? (last.llm_message.content ?? []).map((c) => ('text' in c ? c.text : '')).join('') : '';
  host.emit(agentMessage(`echo: ${text}`));
  host.setExecutionStatus('finished');
};

export function agentMessage(text: string): Event {
  return {
    ...newEventBase('agent'),
    llm_message: { role: 'assistant', content: [{ type: 'text', text }] },
    llm_response_id: 'resp-1',
    kind: 'MessageEvent',
  };
}

/** A CreateAgent whose runs follow `script`; records hosts, runs and closes. */
export class FakeAgents {
  script: Script;
  readonly hosts: AgentHost[] = [];
  runs = 0;
  closed = 0;
  #gate: { promise: Promise<void>; open: () => void } | undefined;

  constructor(script: Script = echoScript) {
    this.script = script;
  }

  readonly createAgent: CreateAgent = (host) => {
    this.hosts.push(host);
    const agent: ConversationAgent = {
      run: async (signal) => {
        this.runs++;
        if (this.#gate) await Promise.race([this.#gate.promise, aborted(signal)]);
        if (signal.aborted) return;
        await this.script(host, signal);
      },
      close: async () => void this.closed++,
    };
    return agent;
  };

  /** Holds every run before its script until the returned function is called. */
  hold(): () => void {
    let open!: () => void;
    const promise = new Promise<void>((r) => (open = r));
    this.#gate = { promise, open };
    return () => {
      this.#gate = undefined;
      open();
    };
  }
}

function aborted(signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => (signal.aborted ? resolve() : signal.addEventListener('abort', () => resolve(), { once: true })));
}

export interface TestServer extends AgentServer {
  dir: string;
  agents: FakeAgents;
  /** fetch with JSON in and out, on a connection of its own (testing/fresh-connections.ts); the session key is sent unless `key: null`. */
  api(path: string, init?: { method?: string; body?: unknown; key?: string | null; rawBody?: string }): Promise<{ status: number; body: any }>;
}

export const TEST_KEY = 'test-session-key';


export async function startTestServer(
  dir: string,
  overrides: Partial<AgentServerOptions> & { agents?: FakeAgents } = {},
): Promise<TestServer> {
  const agents = overrides.agents ?? new FakeAgents();
  const server = await startAgentServer({
    port: 0,
    workspaceDir: join(dir, 'workspace'),
    dataDir: join(dir, 'data'),
    sessionKeys: [TEST_KEY],
    createAgent: agents.createAgent,
    // Never the network from a test: the extensions repository is a local path that does not exist
    // (no public skills, sync fails), unless the test gives its own.
    extensions: {
      repoUrl: join(dir, 'no-extensions-repo'),
      ref: 'main',
      localPath: null,
      // Beside the install routes' directories when the test gives the server a home.
      persistenceDir: overrides.home !== undefined ? join(overrides.home, '.openhands') : join(dir, 'openhands-home'),
      ...(overrides.home !== undefined ? { home: overrides.home } : {}),
      registeredMarketplaces: [],
    },
    ...overrides,
  });
  const api: TestServer['api'] = async (path, init = {}) => {
    const headers: Record<string, string> = {};
    const key = init.key === undefined ? TEST_KEY : init.key;
    if (key !== null) headers['x-session-api-key'] = key;
    let body: string | undefined = init.rawBody;
    if (init.body !== undefined) body = JSON.stringify(init.body);
    if (body !== undefined) headers['content-type'] = 'application/json';
    const method = init.method ?? 'GET';
    // fetch refuses a GET with a body; OpenHands' batch event read is exactly that.
    const res = method === 'GET' && body !== undefined ? await getWithBody(server.url + path, headers, body) : await fetch(server.url + path, { method, headers, ...(body !== undefined ? { body } : {}), dispatcher: freshConnections } as RequestInit);
    const text = await res.text();
    let parsed: unknown = text;
    try {
      parsed = JSON.parse(text);
    } catch {
      // not JSON: keep the text
    }
    return { status: res.status, body: parsed };
  };
  return { ...server, dir, agents, api };
}

function getWithBody(url: string, headers: Record<string, string>, body: string): Promise<{ status: number; text(): Promise<string> }> {
  return new Promise((resolve, reject) => {
    // agent: false: a connection of its own (why: testing/fresh-connections.ts).
    const req = request(url, { method: 'GET', agent: false, headers: { ...headers, 'content-length': String(Buffer.byteLength(body)) } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text: async () => Buffer.concat(chunks).toString('utf8') }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

export function startRequest(workingDir: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { workspace: { kind: 'LocalWorkspace', working_dir: workingDir }, agent: { llm: { model: 'test/model' } }, ...extra };
}

export function userText(text: string, run?: boolean): Record<string, unknown> {
  return { role: 'user', content: [{ type: 'text', text }], ...(run === undefined ? {} : { run }) };
}

/** Polls `fn` until it returns a truthy value (or throws after `ms`). */
export async function eventually<T>(fn: () => T | Promise<T>, ms = 5000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > deadline) throw new Error('eventually: condition not met in time');
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** A ws client that records frames and its close code. */
export class FrameCollector {
  readonly ws: WebSocket;
  readonly frames: any[] = [];
  /** Frames that came as binary WebSocket frames (the event socket sends text only). */
  binaryFrames = 0;
  closed: { code: number; reason: string } | undefined;
  readonly opened: Promise<void>;
  readonly done: Promise<{ code: number; reason: string }>;

  constructor(url: string, headers: Record<string, string> = {}, opts: { autoPong?: boolean } = {}) {
    this.ws = new WebSocket(url, { headers, ...opts });
    this.opened = new Promise((resolve, reject) => {
      this.ws.once('open', () => resolve());
      this.ws.once('error', reject);
    });
    this.ws.on('error', () => undefined);
    this.ws.on('message', (d, isBinary) => {
      if (isBinary) this.binaryFrames++;
      this.frames.push(JSON.parse(d.toString()));
    });
    this.done = new Promise((resolve) =>
      this.ws.on('close', (code, reason) => {
        this.closed = { code, reason: reason.toString() };
        resolve(this.closed);
      }),
    );
  }

  /** Waits until `n` frames (or one matching `pred`) arrived. */
  async until(pred: number | ((frames: any[]) => boolean), ms = 5000): Promise<any[]> {
    const test = typeof pred === 'number' ? (f: any[]) => f.length >= pred : pred;
    await eventually(() => test(this.frames) || this.closed !== undefined, ms);
    if (!test(this.frames)) throw new Error(`socket closed (${JSON.stringify(this.closed)}) after ${this.frames.length} frames`);
    return this.frames;
  }

  /** Closes (a peer that does not answer within a second is cut off). */
  async close(): Promise<void> {
    if (this.closed) return;
    this.ws.resume();
    this.ws.close();
    const timer = setTimeout(() => this.ws.terminate(), 1000);
    await this.done;
    clearTimeout(timer);
  }
}

export interface RealAgentServer {
  llm: ScriptedLlm;
  s: TestServer;
  dir: ReturnType<typeof tempDir>;
  /** Stops the server and starts a new one on the same data dir (what a restart keeps). */
  restart(): Promise<void>;
}

/** A fresh agent server with fake agents for each test of the calling file; fields set while a test runs. */
export function useTestServer(overrides?: () => Partial<AgentServerOptions> & { agents?: FakeAgents }): { s: TestServer; dir: ReturnType<typeof tempDir> } {
  const ctx = {} as { s: TestServer; dir: ReturnType<typeof tempDir> };
  beforeEach(async () => {
    ctx.dir = tempDir();
    ctx.s = await startTestServer(ctx.dir.path, overrides?.());
  });
  afterEach(async () => {
    await ctx.s.close();
    ctx.dir.remove();
  });
  return ctx;
}

/**
 * Agent servers started one after another on one data dir (a fresh dir for each test of the calling
 * file), for what a restart keeps; every one started and not stopped is closed after the test.
 */
export function useServersOnOneDir(): {
  readonly dir: ReturnType<typeof tempDir>;
  start(overrides?: Partial<AgentServerOptions> & { agents?: FakeAgents }): Promise<TestServer>;
  restart(s: TestServer, overrides?: Partial<AgentServerOptions> & { agents?: FakeAgents }): Promise<TestServer>;
  /** Closes `s` now (a clean shutdown), no more after the test. */
  stop(s: TestServer): Promise<void>;
} {
  const servers: TestServer[] = [];
  const ctx = {
    dir: undefined as unknown as ReturnType<typeof tempDir>,
    async start(overrides: Partial<AgentServerOptions> & { agents?: FakeAgents } = {}) {
      const s = await startTestServer(ctx.dir.path, overrides);
      servers.push(s);
      return s;
    },
    async stop(s: TestServer) {
      await s.close();
      servers.splice(servers.indexOf(s), 1);
    },
    async restart(s: TestServer, overrides: Partial<AgentServerOptions> & { agents?: FakeAgents } = {}) {
      await ctx.stop(s);
      return ctx.start(overrides);
    },
  };
  beforeEach(() => void (ctx.dir = tempDir()));
  afterEach(async () => {
    await Promise.all(servers.splice(0).map((s) => s.close()));
    ctx.dir.remove();
  });
  return ctx;
}

/**
 * Registers the hooks for tests of the real agent (`createAgent`, passed in so that files with the
 * fake agent do not load it) over HTTP: one scripted model for the file, a
 * fresh server per test whose default model is it, and after each test a check that the script was
 * used up without failed expectations. The returned object's fields are set while a test runs.
 */
export function useRealAgentServer(opts: { createAgent: CreateAgent; overrides?: () => Partial<AgentServerOptions> }): RealAgentServer {
  const start = async () => {
    const llmDefaults = { model: 'openai/scripted', baseUrl: ctx.llm.url, apiKey: 'sk-default' };
    ctx.s = await startTestServer(ctx.dir.path, { createAgent: opts.createAgent, llmDefaults, ...opts.overrides?.() });
  };
  const ctx = {
    restart: async () => {
      await ctx.s.close();
      await start();
    },
  } as RealAgentServer;
  beforeAll(async () => void (ctx.llm = await startScriptedLlm()));
  afterAll(() => ctx.llm.close());
  beforeEach(async () => {
    ctx.dir = tempDir();
    await start();
  });
  afterEach(async () => {
    await ctx.s.close();
    ctx.dir.remove();
    ctx.llm.requests.length = 0;
    expect(ctx.llm.failures).toEqual([]);
    expect(ctx.llm.remaining()).toBe(0);
  });
  return ctx;
}

/**
 * A second scripted model server for the whole file (a profile's or a switched LLM's endpoint), checked
 * after each test like useRealAgentServer's own: no failed expectation, the script used up.
 */
export function useOtherScriptedLlm(): { readonly llm: ScriptedLlm } {
  const ctx = {} as { llm: ScriptedLlm };
  beforeAll(async () => void (ctx.llm = await startScriptedLlm()));
  afterAll(() => ctx.llm.close());
  afterEach(() => {
    expect(ctx.llm.failures).toEqual([]);
    expect(ctx.llm.remaining()).toBe(0);
    ctx.llm.requests.length = 0;
  });
  return ctx;
}
