// WebSocket fan-out (issue #16): FANOUT_SUBSCRIBERS clients (default 100) on one conversation's
// event socket of an agent server; the conversation's agent emits FANOUT_EVENTS events (default
// 300), ten every 10 ms, as an agent's steps do. Delivery latency = arrival at a client − emit,
// over every (event, client) pair; target p99 ≤ 20 ms. The floor: a bare `ws` server (the same
// library) sending the same frames to as many clients. Clients run in this process beside the
// server, for both alike. The agent server admits 50 subscribers per conversation by default
// (tuning.sockets.maxSubscribers); this bench raises that to FANOUT_SUBSCRIBERS.
//   node bench/ws-fanout.ts
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { WebSocket, WebSocketServer } from 'ws';
import type { AgentHost, CreateAgent } from '../src/agent/types.ts';
import { newEventBase, type Event } from '../src/api/events/index.ts';
import { startAgentServer } from '../src/agent-server/server.ts';
import { createLogger } from '../src/util/log.ts';

type Record = (name: string, value: number, unit: string, note?: string) => void;

const KEY = 'bench-key';

const message = (i: number): Event => ({ ...newEventBase('agent'), llm_message: { role: 'assistant', content: [{ type: 'text', text: `event ${i}: ${'x'.repeat(200)}` }] }, llm_response_id: `r${i}`, kind: 'MessageEvent' }) as Event;

/** Opens `n` clients on `url`; resolves them once all are open. Each notes when each event id arrived. */
async function subscribe(url: string, n: number, headers: { [k: string]: string }): Promise<{ clients: WebSocket[]; arrivals: Map<string, number[]> }> {
  const arrivals = new Map<string, number[]>();
  const clients = await Promise.all(
    Array.from({ length: n }, () => {
      const ws = new WebSocket(url, { headers });
      ws.on('message', (data) => {
        const at = performance.now();
        const id = (JSON.parse(String(data)) as { id?: string }).id;
        if (id) (arrivals.get(id) ?? arrivals.set(id, []).get(id)!).push(at);
      });
      return new Promise<WebSocket>((resolve, reject) => (ws.once('open', () => resolve(ws)), ws.once('error', reject)));
    }),
  );
  return { clients, arrivals };
}

/** Emits `count` events ten at a time, the loop turning 10 ms between; returns emit times by id. */
async function emitPaced(count: number, emit: (e: Event) => void): Promise<Map<string, number>> {
  const sent = new Map<string, number>();
  for (let i = 0; i < count; i += 10) {
    for (let j = i; j < Math.min(count, i + 10); j++) {
      const e = message(j);
      sent.set(e.id, performance.now());
      emit(e);
    }
    await new Promise((r) => setTimeout(r, 10));
  }
  return sent;
}

async function settle(arrivals: Map<string, number[]>, sent: Map<string, number>, n: number): Promise<number[]> {
  const until = performance.now() + 30_000;
  const complete = () => [...sent.keys()].every((id) => (arrivals.get(id)?.length ?? 0) >= n);
  while (!complete() && performance.now() < until) await new Promise((r) => setTimeout(r, 20));
  const lat: number[] = [];
  for (const [id, t] of sent) for (const a of arrivals.get(id) ?? []) lat.push(a - t);
  if (lat.length < sent.size * n) throw new Error(`fan-out: ${lat.length} of ${sent.size * n} deliveries arrived`);
  return lat.sort((a, b) => a - b);
}

const pct = (sorted: number[], q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;

export async function benchWsFanout(record: Record): Promise<void> {
  const n = Number(process.env.FANOUT_SUBSCRIBERS ?? 100);
  const count = Number(process.env.FANOUT_EVENTS ?? 300);
  const dir = mkdtempSync(join(tmpdir(), 'agentyard-fanout-'));
  const hosts: AgentHost[] = [];
  const createAgent: CreateAgent = (host) => {
    hosts.push(host);
    return { run: async () => {}, close: async () => {} };
  };
  const server = await startAgentServer({ port: 0, workspaceDir: join(dir, 'ws'), dataDir: join(dir, 'data'), sessionKeys: [KEY], createAgent, log: createLogger('bench', 'error'), tuning: { sockets: { maxSubscribers: n } } });
  const bare = new WebSocketServer({ port: 0, host: '127.0.0.1' });
  try {
    // The floor: the same frames, sent as they come to every client of a bare ws server.
    await new Promise((r) => bare.once('listening', r));
    const floorSub = await subscribe(`ws://127.0.0.1:${(bare.address() as { port: number }).port}`, n, {});
    const floorSent = await emitPaced(count, (e) => {
      const frame = JSON.stringify(e);
      for (const c of bare.clients) c.send(frame);
    });
    const floor = await settle(floorSub.arrivals, floorSent, n);
    floorSub.clients.forEach((c) => c.terminate());

    const res = await fetch(`${server.url}/api/conversations`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-session-api-key': KEY },
      body: JSON.stringify({ workspace: { kind: 'LocalWorkspace', working_dir: join(dir, 'ws') }, agent: { llm: { model: 'bench/model' } }, initial_message: { role: 'user', content: [{ type: 'text', text: 'bench' }], run: false } }),
    });
    const { id } = (await res.json()) as { id: string };
    for (let i = 0; i < 100 && hosts.length === 0; i++) await new Promise((r) => setTimeout(r, 20));
    const host = hosts[0]!;
    const sub = await subscribe(`${server.url.replace('http', 'ws')}/sockets/events/${id}`, n, { 'x-session-api-key': KEY });
    const sent = await emitPaced(count, (e) => host.emit(e));
    const ours = await settle(sub.arrivals, sent, n);
    sub.clients.forEach((c) => c.terminate());
    const p99 = pct(ours, 0.99);
    record('ws fan-out: bare ws server (floor) p50 / p99', pct(floor, 0.5), 'ms', `p99 ${pct(floor, 0.99).toFixed(2)} ms; ${n} clients x ${count} events`);
    record('ws fan-out: agent server p50', pct(ours, 0.5), 'ms', `${n} subscribers to one conversation, ${count} events (persisted, numbered, sent)`);
    record('ws fan-out: agent server p99', p99, 'ms', `${p99 <= 20 ? 'met' : `MISSED by ${(p99 - 20).toFixed(1)} ms`} (target ≤ 20 ms); floor p99 ${pct(floor, 0.99).toFixed(2)} ms, ${(p99 / pct(floor, 0.99)).toFixed(2)}x`);
  } finally {
    bare.close();
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const rows: string[] = [];
  await benchWsFanout((name, value, unit, note = '') => rows.push(`${name.padEnd(46)} ${`${value.toFixed(2)} ${unit}`.padStart(10)}  ${note}`));
  console.log(rows.join('\n'));
}
