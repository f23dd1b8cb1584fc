// Agent server figures: events emitted by an agent (persisted, numbered, fanned out), a new
// WebSocket client's full replay against a resume after a sequence number, and what a stalled client
// costs the others (the per-client bounded queue should make that ratio about 1).
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { WebSocket } from 'ws';
import type { AgentHost, CreateAgent } from '../src/agent/types.ts';
import { newEventBase, type Event } from '../src/api/events/index.ts';
import { startAgentServer } from '../src/agent-server/server.ts';
import { createLogger } from '../src/util/log.ts';

type Record = (name: string, value: number, unit: string, note?: string) => void;

const KEY = 'bench-key';
const N = 10_000;

function message(text: string): Event {
  return { ...newEventBase('agent'), llm_message: { role: 'assistant', content: [{ type: 'text', text }] }, llm_response_id: 'r', kind: 'MessageEvent' };
}

/** Opens a socket and resolves with the time until the event `lastId` arrived, and the frames seen. */
function receive(url: string, lastId: string): { ws: WebSocket; done: Promise<{ ms: number; frames: number }> } {
  const t0 = performance.now();
  const ws = connect(url);
  let frames = 0;
  const done = new Promise<{ ms: number; frames: number }>((resolve, reject) => {
    ws.on('message', (data) => {
      frames++;
      if ((JSON.parse(data.toString()) as { id?: string }).id === lastId) resolve({ ms: performance.now() - t0, frames });
    });
    ws.on('error', reject);
  });
  return { ws, done };
}

const connect = (url: string) => new WebSocket(url, { headers: { 'x-session-api-key': KEY } });
const opened = (ws: WebSocket) => new Promise((resolve) => ws.once('open', resolve));

export async function benchAgentServer(dir: string, record: Record): Promise<void> {
  const hosts: AgentHost[] = [];
  const createAgent: CreateAgent = (host) => {
    hosts.push(host);
    return { run: async () => {}, close: async () => {} };
  };
  const server = await startAgentServer({ port: 0, workspaceDir: join(dir, 'as-ws'), dataDir: join(dir, 'as-data'), sessionKeys: [KEY], createAgent, log: createLogger('bench', 'error') });
  try {
    const res = await fetch(`${server.url}/api/conversations`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-session-api-key': KEY },
      // A message without a run: the conversation's agent (this bench's emitter) exists from it on.
      body: JSON.stringify({ workspace: { kind: 'LocalWorkspace', working_dir: join(dir, 'as-ws') }, agent: { llm: { model: 'bench/model' } }, initial_message: { role: 'user', content: [{ type: 'text', text: 'bench' }], run: false } }),
    });
    const { id } = (await res.json()) as { id: string };
    const socket = `${server.url.replace('http', 'ws')}/sockets/events/${id}`;
    const host = await waitForHost(hosts);
    const emitAll = (prefix: string, count: number): string => {
      let last = '';
      for (let i = 0; i < count; i++) {
        const e = message(`${prefix} ${i}`);
        host.emit(e);
        last = e.id;
      }
      return last;
    };
    // As an agent emits: a few events per step, the event loop turning between steps (a burst of
    // more than a client's queue in one tick would cut even a fast client off, by design).
    const emitLive = async (prefix: string, count: number, ws: WebSocket): Promise<void> => {
      const events = Array.from({ length: count }, (_, i) => message(`${prefix} ${i}`));
      const received = receiveLast(ws, events.at(-1)!.id);
      for (let i = 0; i < count; i += 10) {
        for (const e of events.slice(i, i + 10)) host.emit(e);
        await new Promise((r) => setImmediate(r));
      }
      await received;
    };

    const t0 = performance.now();
    const lastId = emitAll('event', N);
    const emit = performance.now() - t0;
    record('agent server: emit (persist + number)', (emit * 1000) / N, 'µs/event', `${N} events, no client`);

    const full = receive(`${socket}?resend_mode=all`, lastId);
    const fullRun = await full.done;
    full.ws.close();
    record('agent server: replay to a new socket', fullRun.ms, 'ms', `${fullRun.frames} frames`);
    const resume = receive(`${socket}?after_seq=${fullRun.frames - 101}`, lastId);
    const resumeRun = await resume.done;
    resume.ws.close();
    record('agent server: resume after seq', resumeRun.ms, 'ms', `${resumeRun.frames} frames; full replay / resume = ${(fullRun.ms / resumeRun.ms).toFixed(0)}x`);

    // Live delivery to one client, alone and beside a client that never reads.
    const LIVE = 2_000;
    const timeLive = async (prefix: string): Promise<number> => {
      const client = connect(socket);
      await opened(client);
      const t = performance.now();
      await emitLive(prefix, LIVE, client);
      const ms = performance.now() - t;
      client.close();
      return ms;
    };
    const aloneMs = await timeLive('live');
    const stalled = connect(socket);
    await opened(stalled);
    stalled.pause(); // reads nothing: its queue fills, then the server cuts it off
    const besideMs = await timeLive('beside');
    stalled.terminate();
    record('agent server: live delivery, one client', (aloneMs * 1000) / LIVE, 'µs/event', `${LIVE} events emitted and received`);
    record('agent server: live delivery beside a stalled client', (besideMs * 1000) / LIVE, 'µs/event', `with / without the stalled client = ${(besideMs / aloneMs).toFixed(2)}`);
  } finally {
    await server.close();
  }
}

/** Resolves when `lastId` arrives on an open socket (emitting happens before this is awaited). */
function receiveLast(ws: WebSocket, lastId: string): Promise<void> {
  return new Promise((resolve) => {
    const onMessage = (data: unknown) => {
      if ((JSON.parse(String(data)) as { id?: string }).id === lastId) {
        ws.off('message', onMessage);
        resolve();
      }
    };
    ws.on('message', onMessage);
  });
}

async function waitForHost(hosts: AgentHost[]): Promise<AgentHost> {
  for (let i = 0; i < 100 && hosts.length === 0; i++) await new Promise((r) => setTimeout(r, 20));
  if (!hosts[0]) throw new Error('the agent server never created the conversation agent');
  return hosts[0];
}
