// The controller at scale (issue #16, item 3): SCALE_SANDBOXES Sandboxes (default 10,000) in the
// store, half running (an idle pause due) and half paused (a deletion due), as a controller left
// them (statuses converged), when a controller starts. SCALE_DUE of them (default 1,000) fall due
// within SCALE_WINDOW_S seconds (default 60: 17 a second, three times what 10,000 sandboxes with
// a 30-minute Idle Time give), SCALE_LEAD_S (default 20 s) after the controller starts, while its
// first pass over all 10,000 may still run; the others later, so it holds all their deadlines. Measured: how late each pause / deletion lands after its deadline (p50/p99/max,
// target ≤ 1 s) and the controller process's RSS (target ≤ 300 MiB), on the SQLite store and on a
// real kube-apiserver (e2e/kube's binaries; skipped when they are not built).
//
// The runtime is an in-memory one (every running sandbox is up, a pause succeeds): the figure is
// the controller's scheduling and store work, not process or Pod start-up.
// The controller runs in a child process of its own (this file with `--child`), so that its RSS is
// the controller's, not the seeding's; the seed is written by the parent before it starts.
//   node bench/controller-scale.ts [sqlite|kube]
import { spawn } from 'node:child_process';
import { copyFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { pino } from 'pino';
import { ANNOTATION_LAST_ACTIVITY, API_VERSION, FINALIZER_RUNTIME } from '../src/api/meta.ts';
import { SandboxKind, type Sandbox } from '../src/api/sandbox.ts';
import { systemClock } from '../src/controller/clock.ts';
import { createController } from '../src/controller/embedded.ts';
import { CONTROLLER_MEMORY_ENV } from '../src/controller/memory-env.ts';
import type { RuntimeState, SandboxRuntime } from '../src/runtime/types.ts';
import type { ResourceStore } from '../src/store/types.ts';
import { SqliteStore } from '../src/store/sqlite/sqlite-store.ts';

type Record = (name: string, value: number, unit: string, note?: string) => void;
type Backend = 'sqlite' | 'kube';

const NS = 'default';
const HOUR = 3_600_000;

interface Plan {
  n: number;
  due: number;
  windowMs: number;
  leadMs: number;
  /** The seed's anchor: sandbox i's activity (or pause) time is anchor + offset(i). */
  anchor: number;
}

function planFromEnv(): Omit<Plan, 'anchor'> {
  const n = Number(process.env.SCALE_SANDBOXES ?? 10_000);
  return { n, due: Math.min(n, Number(process.env.SCALE_DUE ?? 1_000)), windowMs: Number(process.env.SCALE_WINDOW_S ?? 60) * 1000, leadMs: Number(process.env.SCALE_LEAD_S ?? 20) * 1000 };
}

/** Sandbox i's deadline relative to the start of the measured window (the others: hours later). */
const offset = (p: Omit<Plan, 'anchor'>, i: number): number => (i < p.due ? Math.floor((p.windowMs * i) / p.due) : 2 * HOUR + i * 1000);

/** Seeded objects: sb-<i>, even i running (idle pause due), odd i paused (deletion due). */
function seedObject(p: Plan, i: number): { sb: Sandbox; status: NonNullable<Sandbox['status']> } {
  const at = new Date(p.anchor + offset(p, i)).toISOString();
  const running = i % 2 === 0;
  const name = `sb-${i}`;
  const sb: Sandbox = {
    apiVersion: API_VERSION,
    kind: 'Sandbox',
    metadata: { name, namespace: NS, finalizers: [FINALIZER_RUNTIME], ...(running ? { annotations: { [ANNOTATION_LAST_ACTIVITY]: at } } : {}) },
    spec: { paused: !running },
  };
  const status = running
    ? { phase: 'RUNNING' as const, sessionStartTime: new Date(p.anchor - 1000).toISOString(), runtimeId: name, url: `http://127.0.0.1:1/${name}`, conversationCount: 0 }
    : { phase: 'PAUSED' as const, pausedAt: at, pauseReason: 'UserRequest', runtimeId: name, conversationCount: 0 };
  return { sb, status };
}

/**
 * Writes the seed into `store` as a controller left it: each Sandbox created, its status set, then
 * one pass of the real SandboxReconciler (deadlines far away) to converge conditions and counts, as
 * after a controller restart. `from`: copy the converged objects of another store instead (a kube
 * seed takes the SQLite one's rather than reconciling 10,000 objects over the API once more).
 */
async function seed(store: ResourceStore, p: Plan, concurrency: number, from?: ResourceStore): Promise<void> {
  const { SandboxReconciler } = await import('../src/controller/sandbox/reconciler.ts');
  const reconciler = new SandboxReconciler({ store, runtime: new InMemoryRuntime(), clock: systemClock, settings: { idleTimeMs: 100 * HOUR, deletionTimeMs: 100 * HOUR, capacity: p.n } });
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      for (let i = next++; i < p.n; i = next++) {
        const { sb, status } = seedObject(p, i);
        const created = await store.create(SandboxKind, sb);
        const converged = from ? (await from.get(SandboxKind, NS, sb.metadata.name))!.status : status;
        await store.updateStatus(SandboxKind, { ...created, status: converged });
        if (!from) await reconciler.reconcile(`${NS}/${sb.metadata.name}`);
      }
    }),
  );
}

/** Every running sandbox is up; pause and delete succeed at once. */
class InMemoryRuntime implements SandboxRuntime {
  async observe(sb: Sandbox): Promise<RuntimeState> {
    return sb.spec.paused ? { phase: 'paused', runtimeId: sb.metadata.name } : { phase: 'running', runtimeId: sb.metadata.name, url: `http://127.0.0.1:1/${sb.metadata.name}` };
  }
  async start(sb: Sandbox): Promise<RuntimeState> {
    return this.observe(sb);
  }
  async pause(sb: Sandbox): Promise<RuntimeState> {
    return { phase: 'paused', runtimeId: sb.metadata.name };
  }
  async delete(): Promise<void> {}
}

interface ChildResult {
  lateMs: number[];
  missing: number;
  syncMs: number;
  drainedMs: number;
  rssMaxMiB: number;
  rssSyncedMiB: number;
  loopDelayP99Ms: number;
  loopDelayMaxMs: number;
}

/** The child: runs the controller over the seeded store and reports each deadline's lateness. */
async function child(backend: Backend, arg: string): Promise<void> {
  const { plan, db, kubeconfig } = JSON.parse(arg) as { plan: Plan; db?: string; kubeconfig?: string };
  const startedAt = Date.now();
  const windowStart = startedAt + plan.leadMs;
  let store: ResourceStore & { close?: () => void };
  if (backend === 'sqlite') store = new SqliteStore(db!, { clock: systemClock });
  else {
    const { KubeConfig } = await import('@kubernetes/client-node');
    const { KubeStore } = await import('../src/store/kube/kube-store.ts');
    const kc = new KubeConfig();
    kc.loadFromFile(kubeconfig!);
    store = new KubeStore(kc);
  }
  // Deadline = anchor + offset + Idle (Deletion) Time, which puts offset 0 at windowStart.
  const idle = windowStart - plan.anchor;
  // SCALE_CONTROLLER_LOG=warn: the controller's own log (failed passes, conflicts) on stderr.
  const log = pino({ name: 'controller', level: process.env.SCALE_CONTROLLER_LOG ?? 'silent' }, pino.destination(2));
  const controller = createController({ store, runtime: new InMemoryRuntime(), clock: systemClock, settings: { idleTimeMs: idle, deletionTimeMs: idle, capacity: plan.n }, namespace: NS, log });
  // The controller process's own stalls (GC, CPU starvation) beside its lateness.
  const loopDelay = monitorEventLoopDelay({ resolution: 10 });
  loopDelay.enable();
  let rssMax = 0;
  const sample = setInterval(() => (rssMax = Math.max(rssMax, process.memoryUsage().rss)), 200);
  const late = new Map<number, number>();
  const abort = new AbortController();
  const watching = (async () => {
    const { resourceVersion } = await store.list(SandboxKind, NS, { labelSelector: 'bench=none' });
    for await (const e of store.watch(SandboxKind, NS, { resourceVersion, signal: abort.signal })) {
      const i = Number(e.object.metadata.name.slice(3));
      if (i >= plan.due || late.has(i)) continue;
      const done = i % 2 === 0 ? e.type !== 'DELETED' && e.object.spec.paused : e.type === 'DELETED';
      if (done) late.set(i, Date.now() - (windowStart + offset(plan, i)));
      if (late.size === plan.due) return;
    }
  })().catch((err: unknown) => {
    if (!abort.signal.aborted) throw err;
  });
  await controller.start();
  const syncMs = Date.now() - startedAt;
  // The initial pass: every key queued by the first list, reconciled once.
  let drainedMs = NaN;
  const queue = controller.queue('sandbox')!;
  const drain = setInterval(() => {
    if (queue.length === 0 && Number.isNaN(drainedMs)) (drainedMs = Date.now() - startedAt), clearInterval(drain);
  }, 20);
  const rssSynced = process.memoryUsage().rss;
  // SCALE_MEM_LOG=1: the controller's memory every 2 s on stderr; SCALE_HEAP_SNAPSHOT=<file>: a heap snapshot 8 s after sync.
  if (process.env.SCALE_MEM_LOG) {
    const mib = (n: number) => (n / 2 ** 20).toFixed(0);
    setInterval(() => {
      const m = process.memoryUsage();
      process.stderr.write(`t=${Date.now() - startedAt} ms rss=${mib(m.rss)} heapUsed=${mib(m.heapUsed)} heapTotal=${mib(m.heapTotal)} external=${mib(m.external)} MiB queued=${queue.length}\n`);
    }, 2000).unref();
  }
  const snapshotTo = process.env.SCALE_HEAP_SNAPSHOT;
  if (snapshotTo) setTimeout(() => void import('node:v8').then((v8) => v8.writeHeapSnapshot(snapshotTo)), 8000).unref();
  const giveUp = setTimeout(() => abort.abort(), plan.leadMs + plan.windowMs + 30_000);
  await watching;
  clearTimeout(giveUp);
  clearInterval(sample);
  abort.abort();
  await controller.stop();
  store.close?.();
  clearInterval(drain);
  // SCALE_LATENESS_FILE: each deadline's lateness by its sandbox index (when in the window it fell), for a closer look.
  if (process.env.SCALE_LATENESS_FILE) writeFileSync(process.env.SCALE_LATENESS_FILE, JSON.stringify([...late].sort((a, b) => a[0] - b[0])));
  loopDelay.disable();
  const result: ChildResult = { loopDelayP99Ms: loopDelay.percentile(99) / 1e6, loopDelayMaxMs: loopDelay.max / 1e6, drainedMs, lateMs: [...late.values()], missing: plan.due - late.size, syncMs, rssMaxMiB: rssMax / 2 ** 20, rssSyncedMiB: rssSynced / 2 ** 20 };
  process.stdout.write(`${JSON.stringify(result)}\n`);
}

function runChild(backend: Backend, arg: object): Promise<ChildResult> {
  return new Promise((resolve, reject) => {
    // On a cluster the controller process runs with the memory settings `agentyard controller` has
    // (CONTROLLER_MEMORY_ENV); on SQLite it is part of `agentyard up`, which runs with Node's defaults.
    // SCALE_CONTROLLER_NODE_OPTIONS: other Node options for it alone ('' for Node's defaults).
    const nodeOptions = process.env.SCALE_CONTROLLER_NODE_OPTIONS;
    const env = { ...process.env, ...(backend === 'kube' ? CONTROLLER_MEMORY_ENV : {}), AGENTYARD_LOG_LEVEL: 'error', ...(nodeOptions !== undefined ? { NODE_OPTIONS: nodeOptions } : {}) };
    const proc = spawn(process.execPath, [fileURLToPath(import.meta.url), '--child', backend, JSON.stringify(arg)], { stdio: ['ignore', 'pipe', 'inherit'], env });
    let out = '';
    proc.stdout.on('data', (d: Buffer) => (out += d.toString()));
    proc.on('exit', (code) => {
      const line = out.trim().split('\n').at(-1) ?? '';
      try {
        if (code !== 0) throw new Error(`exited ${code}`);
        // JSON has no NaN: a figure the child could not take comes back as null.
        const r = JSON.parse(line) as ChildResult;
        resolve({ ...r, drainedMs: r.drainedMs ?? NaN });
      } catch (err) {
        reject(new Error(`controller bench child (${backend}) failed: ${String(err)}: ${out.slice(-2000)}`));
      }
    });
  });
}

const pct = (sorted: number[], q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? NaN;

function report(record: Record, backend: Backend, p: Omit<Plan, 'anchor'>, seedMs: number, r: ChildResult): void {
  const late = [...r.lateMs].sort((a, b) => a - b);
  const max = late.at(-1) ?? NaN;
  const verdict = (v: number, target: number) => (v <= target ? `met (target ≤ ${target})` : `MISSED by ${(v - target).toFixed(0)} (target ≤ ${target})`);
  const what = `${p.n} Sandboxes, ${p.due} due over ${p.windowMs / 1000} s`;
  record(`controller (${backend}): seed`, seedMs / 1000, 's', `${p.n} creates + status writes`);
  record(`controller (${backend}): start → informers synced`, r.syncMs, 'ms', what);
  record(`controller (${backend}): start → initial pass done`, r.drainedMs, 'ms', Number.isNaN(r.drainedMs) ? 'not done by the end of the run' : 'every Sandbox reconciled once');
  record(`controller (${backend}): deadline lateness p50`, pct(late, 0.5), 'ms', 'idle pause / deletion seen in the store after its deadline');
  record(`controller (${backend}): deadline lateness p99`, pct(late, 0.99), 'ms');
  record(`controller (${backend}): deadline lateness max`, max, 'ms', `${verdict(max, 1000)} ms${r.missing ? `; ${r.missing} never happened` : ''}`);
  record(`controller (${backend}): event-loop delay p99 / max`, r.loopDelayMaxMs, 'ms', `p99 ${r.loopDelayP99Ms.toFixed(0)} ms: the controller process's own stalls (GC, waiting for a CPU)`);
  record(`controller (${backend}): rss synced / max`, r.rssMaxMiB, 'MiB', `${r.rssSyncedMiB.toFixed(0)} MiB once synced; max ${verdict(r.rssMaxMiB, 300)} MiB`);
}

export async function benchControllerScale(record: Record, backends: Backend[] = ['sqlite', 'kube']): Promise<void> {
  const p = planFromEnv();
  const dir = mkdtempSync(join(tmpdir(), 'agentyard-scale-'));
  try {
    // The SQLite seed is converged by the real reconciler; the kube seed copies its statuses.
    const db = join(dir, 'store.db');
    const plan = { ...p, anchor: Date.now() };
    let t0 = Date.now();
    const sqlite = new SqliteStore(db, { clock: systemClock });
    await seed(sqlite, plan, 1);
    const sqliteSeedMs = Date.now() - t0;
    sqlite.close();
    // The kube seed copies the converged statuses from a copy of the seed: the SQLite run pauses and
    // deletes in `db` (reading them from there after it failed on the Sandboxes it had deleted).
    const seedCopy = join(dir, 'seed.db');
    copyFileSync(db, seedCopy);
    if (backends.includes('sqlite')) report(record, 'sqlite', p, sqliteSeedMs, await runChild('sqlite', { plan, db }));
    if (backends.includes('kube')) {
      const { kubeBinDir, startTestCluster } = await import('../e2e/kube/cluster.ts');
      if (!kubeBinDir()) {
        record('controller (kube)', NaN, '', 'skipped: the Kubernetes binaries are not built (make k8s-bin)');
        return;
      }
      const from = new SqliteStore(seedCopy, { clock: systemClock });
      const cluster = await startTestCluster({ controllerManager: false });
      try {
        const { KubeStore } = await import('../src/store/kube/kube-store.ts');
        t0 = Date.now();
        await seed(new KubeStore(cluster.kubeConfig), plan, 16, from);
        from.close();
        report(record, 'kube', p, Date.now() - t0, await runChild('kube', { plan, kubeconfig: cluster.kubeconfigPath }));
      } finally {
        await cluster.stop();
      }
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv[2] === '--child') await child(process.argv[3] as Backend, process.argv[4]!);
else if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const rows: string[] = [];
  const backends = (process.argv[2] ? [process.argv[2]] : ['sqlite', 'kube']) as Backend[];
  await benchControllerScale((name, value, unit, note = '') => rows.push(`${name.padEnd(48)} ${(Number.isNaN(value) ? '-' : `${value.toFixed(value < 10 ? 2 : 0)} ${unit}`).padStart(12)}  ${note}`), backends);
  console.log(rows.join('\n'));
}
