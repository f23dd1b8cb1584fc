// `make bench`: figures for the hot paths, printed as a table, each beside its floor or peer measured
// in the same run (a bare Node server, raw SQLite inserts, a bare Koa route, a bare ws server, the
// real OpenHands agent server) with the ratio and, where issue #16 sets one, the target: met, or
// MISSED by how much. Numbers, not pass/fail: compare runs.
// BENCH_PARTS=a,b,... runs only those parts (names below); the sizes have knobs of their own.
//   store      SqliteStore create / updateStatus / list / watch delivery
//   sink       event ingestion through the API's event sink over HTTP (what agent servers push)
//   events     app events search (one page) and count over a large transcript
//   cold start agent server spawn → /alive and idle RSS beside a bare Node HTTP server (bench/cold-start.ts)
//   agent      agent server: emit, WebSocket replay against resume, a stalled client beside another
//   fanout     WebSocket fan-out to 100 subscribers of one conversation (bench/ws-fanout.ts)
//   facade     app-conversations/search requests/s beside a bare Koa route (bench/facade-search.ts)
//   scale-events  events search / count at 100,000 events vs 1,000, ingest vs raw SQLite (bench/events-scale.ts)
//   steps      agent servers side by side, ours and OpenHands: start, RSS, create, per step (10 vs
//              1,000 steps), search, replay (bench/agent-steps.ts)
//   controller 10,000 Sandboxes on SQLite and a kube-apiserver: deadline lateness, RSS (bench/controller-scale.ts;
//              BENCH_KUBE=0 leaves the kube-apiserver out)
//   config     a Sandbox Configuration change taken up by a running controller (bench/config-takeup.ts)
//   web        the web app's transcript at 10,000 events in Chromium: first row, whole history, live append (bench/web-transcript.ts)
//   warm-pool  start → READY from a SandboxWarmPool beside a cold start, embedded (bench/warm-pool.ts)
//   warm-pool-node  start → READY from a SandboxWarmPool on the real node, through the ingress
//              (bench/warm-pool-node.ts; skipped with a message without `make k8s-node`; takes the node's lock)
//   soak       memory: agent-server and `up` RSS every 100 steps over 1,000-step conversations (bench/soak.ts)
// sink and events run on both app stores: the bundled SQLite file and, when Debian's postgresql is
// installed, a throwaway local PostgreSQL server (fsync off: compare the stores' query work, not disks).
import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { API_VERSION, LABEL_OWNER } from '../src/api/meta.ts';
import { SandboxKind, type Sandbox } from '../src/api/sandbox.ts';
import { ConversationKind } from '../src/api/conversation.ts';
import { SecretKind } from '../src/api/secret.ts';
import { systemClock } from '../src/controller/clock.ts';
import { PostgresAppStore, SqliteAppStore, startApiServer, type AppStore } from '../src/facade/index.ts';
import { postgresBinDir, startPostgres } from '../src/testing/postgres/server.ts';
import { SqliteStore } from '../src/store/sqlite/sqlite-store.ts';
import { benchAgentServer } from './agent-server.ts';
import { benchAgentSteps } from './agent-steps.ts';
import { benchColdStart } from './cold-start.ts';
import { benchControllerScale } from './controller-scale.ts';
import { benchEventsScale } from './events-scale.ts';
import { benchFacadeSearch } from './facade-search.ts';
import { benchWsFanout } from './ws-fanout.ts';
import { benchConfigTakeup } from './config-takeup.ts';
import { soak } from './soak.ts';
import { benchWarmPool } from './warm-pool.ts';
import { benchWarmPoolNode } from './warm-pool-node.ts';
import { benchWebTranscript } from './web-transcript.ts';

const rows: [string, string, string][] = [];
function record(name: string, value: number, unit: string, note = ''): void {
  rows.push([name, Number.isNaN(value) ? '-' : `${value.toFixed(value < 10 ? 2 : 0)} ${unit}`, note]);
  // Also as it comes: a run of the whole bench takes most of an hour, and an interrupted one keeps what it measured.
  console.log(`  ${rows.at(-1)!.join('  ')}`);
}

async function time<T>(fn: () => Promise<T> | T): Promise<[T, number]> {
  const t0 = performance.now();
  const out = await fn();
  return [out, performance.now() - t0];
}

const sandbox = (name: string): Sandbox => ({ apiVersion: API_VERSION, kind: 'Sandbox', metadata: { name, namespace: 'default', labels: { [LABEL_OWNER]: `u${name.length % 7}` } }, spec: { paused: false } });

async function benchStore(dir: string): Promise<void> {
  const store = new SqliteStore(join(dir, 'store.db'), { clock: systemClock });
  const N = 5_000;
  const [, create] = await time(async () => {
    for (let i = 0; i < N; i++) await store.create(SandboxKind, sandbox(`sb-${i}`));
  });
  record('store: create', (create * 1000) / N, 'µs/op', `${N} Sandboxes`);
  const { items } = await store.list(SandboxKind, 'default');
  const [, status] = await time(async () => {
    for (const sb of items.slice(0, 2_000)) await store.updateStatus(SandboxKind, { ...sb, status: { phase: 'RUNNING' } });
  });
  record('store: updateStatus', (status * 1000) / 2_000, 'µs/op');
  const [, list] = await time(() => store.list(SandboxKind, 'default'));
  record('store: list all', list, 'ms', `${N} objects`);
  const [, selected] = await time(() => store.list(SandboxKind, 'default', { labelSelector: `${LABEL_OWNER}=u3` }));
  record('store: list by label', selected, 'ms');

  const abort = new AbortController();
  const latencies: number[] = [];
  const sentAt = new Map<string, number>();
  const watching = (async () => {
    for await (const e of store.watch(SandboxKind, 'default', { signal: abort.signal })) {
      const t = sentAt.get(e.object.metadata.name);
      if (t !== undefined) latencies.push(performance.now() - t);
      if (latencies.length === 500) return;
    }
  })();
  for (let i = 0; i < 500; i++) {
    sentAt.set(`w-${i}`, performance.now());
    await store.create(SandboxKind, sandbox(`w-${i}`));
    await new Promise((r) => setImmediate(r));
  }
  await watching;
  abort.abort();
  latencies.sort((a, b) => a - b);
  record('store: watch delivery p50', latencies[250]! * 1000, 'µs');
  record('store: watch delivery p99', latencies[495]! * 1000, 'µs');
  store.close();
}

async function benchSink(dir: string, backend: string, db: AppStore): Promise<void> {
  const store = new SqliteStore(join(dir, `sink-${backend}.db`), { clock: systemClock });
  const user = await db.createUser('bench');
  const api = await startApiServer({ store, db, clock: systemClock, namespace: 'default', settings: { capacity: 10 }, port: 0, host: '127.0.0.1' });
  await store.create(SandboxKind, { ...sandbox('sb'), spec: { owner: user.id, paused: false } });
  await store.create(SecretKind, { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'sb-session', namespace: 'default' }, data: { key: Buffer.from('k').toString('base64') } });
  const conv = 'c'.repeat(32);
  await store.create(ConversationKind, { apiVersion: API_VERSION, kind: 'Conversation', metadata: { name: conv, namespace: 'default', labels: { [LABEL_OWNER]: user.id, 'agentyard.dev/sandbox': 'sb' } }, spec: { owner: user.id } });
  const total = 20_000;
  const batch = 500;
  const [, took] = await time(async () => {
    for (let seq = 1; seq <= total; seq += batch) {
      const items = Array.from({ length: batch }, (_, i) => ({
        seq: seq + i,
        event: { id: `e-${seq + i}`, timestamp: new Date(Date.UTC(2026, 0, 1, 0, 0, 0, seq + i)).toISOString(), source: 'user', kind: 'MessageEvent', llm_message: { role: 'user', content: [{ type: 'text', text: `message ${seq + i}` }] } },
      }));
      const res = await fetch(`${api.url}/api/v1/webhooks/sb/events/${conv}`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-session-api-key': 'k' }, body: JSON.stringify({ items }) });
      if (!res.ok) throw new Error(`sink answered ${res.status}: ${await res.text()}`);
    }
  });
  record(`sink (${backend}): ingest over HTTP`, total / (took / 1000), 'events/s', `${total} events, batches of ${batch}`);

  const key = await db.createApiKey(user.id);
  const get = async (path: string) => (await fetch(`${api.url}${path}`, { headers: { authorization: `Bearer ${key}` } })).json();
  const [, page] = await time(() => get(`/api/v1/conversation/${conv}/events/search?limit=100&page_id=15000`));
  record(`events (${backend}): one search page`, page, 'ms', `page of 100 at seq 15000 of ${total}`);
  const [, count] = await time(() => get(`/api/v1/conversation/${conv}/events/count?kind__eq=MessageEvent`));
  record(`events (${backend}): count by kind`, count, 'ms');
  await api.close();
  store.close();
  await db.close();
}

const parts = new Set((process.env.BENCH_PARTS ?? 'cold-start,store,config,agent,warm-pool,warm-pool-node,web,sink,events,fanout,facade,scale-events,steps,controller,soak').split(',').map((p) => p.trim()));
const dir = mkdtempSync(join(tmpdir(), 'agentyard-bench-'));
const started = Date.now();
const failed: string[] = [];
/** One part: a part that fails is reported in the table and the run goes on to the next (one `make bench` in one go). */
async function part(name: string, fn: () => Promise<unknown>): Promise<void> {
  const t0 = Date.now();
  try {
    await fn();
  } catch (err) {
    failed.push(name);
    rows.push([`${name}: FAILED`, '-', (err instanceof Error ? (err.stack ?? err.message) : String(err)).split('\n').slice(0, 3).join(' | ')]);
  }
  rows.push([`(${name}: part took)`, `${((Date.now() - t0) / 1000).toFixed(0)} s`, `load average ${loadavg()[0]!.toFixed(1)} at its end`]);
  console.log(`  ${rows.at(-1)!.join('  ')}`);
}
try {
  if (parts.has('cold-start')) await part('cold-start', () => benchColdStart(record));
  if (parts.has('store')) await part('store', () => benchStore(dir));
  if (parts.has('config')) await part('config', () => benchConfigTakeup(record));
  if (parts.has('agent')) await part('agent', () => benchAgentServer(dir, record));
  if (parts.has('warm-pool')) await part('warm-pool', () => benchWarmPool(record));
  if (parts.has('warm-pool-node')) await part('warm-pool-node', () => benchWarmPoolNode(record));
  if (parts.has('web')) await part('web', () => benchWebTranscript(record));
  if (parts.has('sink') || parts.has('events')) await part('sink', () => benchSink(dir, 'sqlite', new SqliteAppStore(join(dir, 'app.db'))));
  if ((parts.has('sink') || parts.has('events')) && postgresBinDir()) {
    await part('sink (postgresql)', async () => {
      const pg = await startPostgres();
      try {
        await benchSink(dir, 'postgresql', await PostgresAppStore.open(pg.url));
      } finally {
        await pg.stop();
      }
    });
  } else if (parts.has('sink') || parts.has('events')) {
    rows.push(['sink/events (postgresql)', 'skipped', 'PostgreSQL server binaries not found under /usr/lib/postgresql']);
  }
  if (parts.has('fanout')) await part('fanout', () => benchWsFanout(record));
  if (parts.has('facade')) await part('facade', () => benchFacadeSearch(record));
  if (parts.has('scale-events')) await part('scale-events', () => benchEventsScale(record));
  if (parts.has('steps')) await part('steps', () => benchAgentSteps(record));
  if (parts.has('controller')) await part('controller', () => benchControllerScale(record, process.env.BENCH_KUBE === '0' ? ['sqlite'] : ['sqlite', 'kube']));
  const width = Math.max(...rows.map((r) => r[0].length));
  console.log(`agentyard bench (node ${process.version}, ${new Date().toISOString()}, ${cpus().length} x ${cpus()[0]?.model ?? 'cpu'}, load average ${loadavg().map((l) => l.toFixed(1)).join(' ')}, ${((Date.now() - started) / 60_000).toFixed(1)} min)`);
  for (const [name, value, note] of rows) console.log(`${name.padEnd(width)}  ${value.padStart(16)}  ${note}`);
  console.log(`rss ${(process.memoryUsage().rss / 1024 / 1024).toFixed(0)} MiB`);
  if (failed.length > 0) {
    console.log(`FAILED parts: ${failed.join(', ')}`);
    process.exitCode = 1;
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
if (parts.has('soak')) {
  try {
    await soak();
  } catch (err) {
    console.log(`soak: FAILED ${err instanceof Error ? err.message : String(err)}`);
    process.exitCode = 1;
  }
}
console.log(`bench: ${((Date.now() - started) / 60_000).toFixed(1)} min in all`);
