// WebSocket fan-out (issue #16): FANOUT_SUBSCRIBERS clients (default 100) on one conversation's
// event socket of an agent server; the conversation's agent emits FANOUT_EVENTS events (default
// 300), ten every 10 ms, as an agent's steps do. Delivery latency = arrival at a client − emit,
// over every (event, client) pair; target p99 ≤ 20 ms. The floor: a bare `ws` server (the same
// library) sending the same frames to as many clients. The clients run in a worker thread, for both
// alike: in the server's own thread, their 30,000 receptions and parses shared its event loop and
// were measured as the server's delay. Both sides read process.hrtime (CLOCK_MONOTONIC, one clock for
// every thread). The agent server admits 50 subscribers per conversation by default
// (tuning.sockets.maxSubscribers); this bench raises that to FANOUT_SUBSCRIBERS.
//   node bench/ws-fanout.ts
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';
import { WebSocket, WebSocketServer } from 'ws';
import type { AgentHost, CreateAgent } from '../src/agent/types.ts';
import { newEventBase, type Event } from '../src/api/events/index.ts';
import { startAgentServer } from '../src/agent-server/server.ts';
import { createLogger } from '../src/util/log.ts';

type Record = (name: string, value: number, unit: string, note?: string) => void;

const KEY = 'bench-key';

const message = (i: number): Event => ({ ...newEventBase('agent'), llm_message: { role: 'assistant', content: [{ type: 'text', text: `event ${i}: ${'x'.repeat(200)}` }] }, llm_response_id: `r${i}`, kind: 'MessageEvent' }) as Event;

/** Milliseconds on the system's monotonic clock, the same in every thread. */
const now = () => Number(process.hrtime.bigint()) / 1e6;

interface ClientsJob {
  fanoutClients: { url: string; n: number; headers: { [k: string]: string } };
}

/** The worker: opens the clients, notes when each event id arrived, hands the arrivals over when asked. */
function runClients({ url, n, headers }: ClientsJob['fanoutClients']): void {
  const arrivals = new Map<string, number[]>();
  const clients = Array.from({ length: n }, () => {
    const ws = new WebSocket(url, { headers });
    ws.on('message', (data) => {
      const at = now();
      const id = (JSON.parse(String(data)) as { id?: string }).id;
      if (id) (arrivals.get(id) ?? arrivals.set(id, []).get(id)!).push(at);
    });
    return new Promise<void>((resolve, reject) => (ws.once('open', () => resolve()), ws.once('error', reject)));
  });
  Promise.all(clients).then(
    () => parentPort!.postMessage({ open: true }),
    (err: Error) => parentPort!.postMessage({ error: err.message }),
  );
  parentPort!.on('message', (m: { ids?: string[] }) => {
    if (m.ids) parentPort!.postMessage({ counts: m.ids.map((id) => arrivals.get(id)?.length ?? 0) });
    else parentPort!.postMessage({ arrivals: [...arrivals] });
  });
}

if (!isMainThread && (workerData as Partial<ClientsJob> | null)?.fanoutClients) runClients((workerData as ClientsJob).fanoutClients);

/** `n` clients of `url` in a worker thread, open once this resolves. */
async function subscribe(url: string, n: number, headers: { [k: string]: string }): Promise<{ worker: Worker; ask<T>(m: object): Promise<T> }> {
  const worker = new Worker(new URL(import.meta.url), { workerData: { fanoutClients: { url, n, headers } } satisfies ClientsJob });
  const next = <T>() => new Promise<T>((resolve, reject) => (worker.once('message', resolve), worker.once('error', reject)));
  const opened = await next<{ open?: true; error?: string }>();
  if (opened.error) throw new Error(`fan-out clients: ${opened.error}`);
  return { worker, ask: <T>(m: object) => (worker.postMessage(m), next<T>()) };
}

/** Emits `count` events ten at a time, the loop turning 10 ms between; returns emit times by id. */
async function emitPaced(count: number, emit: (e: Event) => void): Promise<Map<string, number>> {
  const sent = new Map<string, number>();
  for (let i = 0; i < count; i += 10) {
    for (let j = i; j < Math.min(count, i + 10); j++) {
      const e = message(j);
      sent.set(e.id, now());
      emit(e);
    }
    await new Promise((r) => setTimeout(r, 10));
  }
  return sent;
}

/** Latencies of every (event, client) pair, sorted, once all have arrived (or 30 s have passed). */
async function settle(clients: Awaited<ReturnType<typeof subscribe>>, sent: Map<string, number>, n: number): Promise<number[]> {
  const until = now() + 30_000;
  const ids = [...sent.keys()];
  while (now() < until) {
    const { counts } = await clients.ask<{ counts: number[] }>({ ids });
    if (counts.every((c) => c >= n)) break;
    await new Promise((r) => setTimeout(r, 20));
  }
  const { arrivals } = await clients.ask<{ arrivals: [string, number[]][] }>({});
  await clients.worker.terminate();
  const lat: number[] = [];
  for (const [id, times] of arrivals) {
    const t = sent.get(id);
    if (t !== undefined) for (const a of times) lat.push(a - t);
  }
  if (lat.length < sent.size * n) throw new Error(`fan-out: ${lat.length} of ${sent.size * n} deliveries arrived`);
  return lat.sort((a, b) => a - b);
}

const cpuMs = (u: NodeJS.CpuUsage) => (u.user + u.system) / 1000;

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
    let cpu = process.threadCpuUsage();
    const floorSent = await emitPaced(count, (e) => {
      const frame = JSON.stringify(e);
      for (const c of bare.clients) c.send(frame);
    });
    const floor = await settle(floorSub, floorSent, n);
    const floorCpu = cpuMs(process.threadCpuUsage(cpu));

    const res = await fetch(`${server.url}/api/conversations`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-session-api-key': KEY },
      body: JSON.stringify({ workspace: { kind: 'LocalWorkspace', working_dir: join(dir, 'ws') }, agent: { llm: { model: 'bench/model' } }, initial_message: { role: 'user', content: [{ type: 'text', text: 'bench' }], run: false } }),
    });
    const { id } = (await res.json()) as { id: string };
    for (let i = 0; i < 100 && hosts.length === 0; i++) await new Promise((r) => setTimeout(r, 20));
    const host = hosts[0]!;
    const sub = await subscribe(`${server.url.replace('http', 'ws')}/sockets/events/${id}`, n, { 'x-session-api-key': KEY });
    cpu = process.threadCpuUsage();
    const sent = await emitPaced(count, (e) => host.emit(e));
    const ours = await settle(sub, sent, n);
    const oursCpu = cpuMs(process.threadCpuUsage(cpu));
    const p99 = pct(ours, 0.99);
    record('ws fan-out: bare ws server (floor) p50 / p99', pct(floor, 0.5), 'ms', `p99 ${pct(floor, 0.99).toFixed(2)} ms; ${n} clients x ${count} events`);
    record('ws fan-out: agent server p50', pct(ours, 0.5), 'ms', `${n} subscribers to one conversation, ${count} events (persisted, numbered, sent)`);
    // The server thread's own CPU time per event (all its subscribers): what the code costs, whatever
    // the machine's load does to the wall-clock figures above.
    record('ws fan-out: server thread CPU per event', (oursCpu / count) * 1000, 'us', `floor ${((floorCpu / count) * 1000).toFixed(0)} us, ${(oursCpu / floorCpu).toFixed(2)}x; ${n} subscribers`);
    record('ws fan-out: agent server p99', p99, 'ms', `${p99 <= 20 ? 'met' : `MISSED by ${(p99 - 20).toFixed(1)} ms`} (target ≤ 20 ms); floor p99 ${pct(floor, 0.99).toFixed(2)} ms, ${(p99 / pct(floor, 0.99)).toFixed(2)}x`);
  } finally {
    bare.close();
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

if (isMainThread && process.argv[1] === fileURLToPath(import.meta.url)) {
  const rows: string[] = [];
  await benchWsFanout((name, value, unit, note = '') => rows.push(`${name.padEnd(46)} ${`${value.toFixed(2)} ${unit}`.padStart(10)}  ${note}`));
  console.log(rows.join('\n'));
}
