// Start → READY from a warm pool in embedded mode, beside a cold start in the same run: a real
// `agentyard up` (real controller, real agent-server processes), a SandboxWarmPool made through the
// API, and starts timed from `POST /api/v1/app-conversations/stream-start` until its READY snapshot
// (the stream ends there: no polling interval in the figure). Before each warm start the pool is
// back to full, so every one is a hit (checked); each conversation is deleted afterwards, which
// takes its sandbox with it, so the machine holds only the pool and one sandbox at a time.
// Issue #16's target: p50 ≤ 50 ms, p99 ≤ 150 ms.
// `node bench/warm-pool.ts [starts]` prints the figures alone (WARM_POOL_BENCH_STEPS=1: also the
// controller's start-step and reconcile metrics, to see where the time goes); `make bench` includes them.
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { eventually, startServiceWithModel, type RunningService } from '../e2e/embedded/harness.ts';

type Record = (name: string, value: number, unit: string, note?: string) => void;

const POOL = 'bench';
const REPLICAS = 3;

interface Task {
  status: string;
  detail?: string | null;
  sandbox_id?: string | null;
  app_conversation_id?: string | null;
}

/** One start through stream-start: milliseconds to its READY snapshot, and where it ran. */
async function timedStart(svc: RunningService): Promise<{ ms: number; task: Task }> {
  const t0 = performance.now();
  const res = await fetch(`${svc.url}/api/v1/app-conversations/stream-start`, {
    method: 'POST',
    headers: { authorization: `Bearer ${svc.apiKey}`, 'content-type': 'application/json' },
    body: '{}',
  });
  const text = await res.text();
  const ms = performance.now() - t0;
  const snapshots = JSON.parse(text) as Task[];
  const task = snapshots.at(-1)!;
  if (task.status !== 'READY') throw new Error(`start ended ${task.status}: ${task.detail ?? ''}`);
  return { ms, task };
}

async function poolReady(svc: RunningService, ready: number): Promise<void> {
  await eventually(async () => {
    const { body } = await svc.api<{ ready: number; members: number }>('GET', `/api/v1/warm-pools/${POOL}`);
    return body.ready >= ready && body.members === ready ? true : undefined;
  }, `warm pool ${POOL} to have ${ready} ready members`, 120_000, 20);
}

const quantile = (sorted: number[], q: number) => sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)]!;

export async function benchWarmPool(record: Record, starts = 30, coldStarts = 5): Promise<void> {
  const { svc, stop } = await startServiceWithModel({ env: { AGENTYARD_SANDBOX_CAPACITY: '50', AGENTYARD_LOG_LEVEL: 'warn' } });
  try {
    const created = await svc.api('POST', '/api/v1/warm-pools', { name: POOL, replicas: REPLICAS });
    if (created.status !== 201) throw new Error(`creating the pool: ${created.status} ${JSON.stringify(created.body)}`);
    const warm: number[] = [];
    for (let i = 0; i < starts; i++) {
      await poolReady(svc, REPLICAS);
      const { ms, task } = await timedStart(svc);
      if (!task.sandbox_id?.startsWith(`${POOL}-`)) throw new Error(`start ${i} was not served by the pool (sandbox ${task.sandbox_id})`);
      warm.push(ms);
      await svc.api('DELETE', `/api/v1/app-conversations/${task.app_conversation_id}`);
    }
    // The same starts with the pool emptied: each needs a new sandbox (its agent server's cold start).
    await svc.api('PATCH', `/api/v1/warm-pools/${POOL}`, { replicas: 0 });
    await poolReady(svc, 0);
    const cold: number[] = [];
    for (let i = 0; i < coldStarts; i++) {
      const { ms, task } = await timedStart(svc);
      if (task.sandbox_id !== task.app_conversation_id) throw new Error(`cold start ${i} ran on ${task.sandbox_id}`);
      cold.push(ms);
      await svc.api('DELETE', `/api/v1/app-conversations/${task.app_conversation_id}`);
    }
    if (process.env.WARM_POOL_BENCH_STEPS) {
      const text = await (await fetch(`${svc.url}/metrics`)).text();
      console.log(text.split('\n').filter((l) => /start_task_step_duration_seconds_(sum|count)|reconcile_time_seconds_(sum|count)|workqueue_queue_duration_seconds_(sum|count)/.test(l)).join('\n'));
    }
    warm.sort((a, b) => a - b);
    cold.sort((a, b) => a - b);
    const p50 = quantile(warm, 0.5);
    const p99 = quantile(warm, 0.99);
    record('warm pool: start → READY p50', p50, 'ms', `${starts} starts, every one a hit; target ≤ 50 ms ${p50 <= 50 ? 'met' : `MISSED by ${(p50 - 50).toFixed(0)} ms`}`);
    record('warm pool: start → READY p99', p99, 'ms', `target ≤ 150 ms ${p99 <= 150 ? 'met' : `MISSED by ${(p99 - 150).toFixed(0)} ms`}`);
    record('warm pool: cold start → READY p50', quantile(cold, 0.5), 'ms', `${coldStarts} starts with the pool empty; warm is ${(quantile(cold, 0.5) / p50).toFixed(0)}× faster`);
  } finally {
    await stop();
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const starts = Number(process.argv[2] ?? 30);
  const rows: string[] = [];
  await benchWarmPool((name, value, unit, note = '') => rows.push(`${name.padEnd(40)} ${`${value.toFixed(value < 10 ? 2 : 0)} ${unit}`.padStart(12)}  ${note}`), starts);
  console.log(rows.join('\n'));
}
