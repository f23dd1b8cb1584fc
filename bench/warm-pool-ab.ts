// Warm-pool start → READY, two trees side by side (A/B on a shared, loaded machine): an `agentyard
// up` of each checkout (its own e2e harness, so each runs its own code), a pool of 3 in each, and
// the starts alternating A, B, B, A, ... with both pools full before each one, so both trees see the
// same load at the same moments. Prints p50/p90/p99 per tree, the p50 ratio, and the CPU time of
// each `up` process during its starts (from /proc, 10 ms ticks summed over the starts), which a
// loaded machine disturbs less than wall time, and likewise the CPU of the claimed sandbox's agent
// server (its process group) during its claim. Not part of `make bench` (it needs a second checkout).
//   node bench/warm-pool-ab.ts <checkout A> <checkout B> [starts per tree, default 30]
import { readdirSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import type { ServiceWithModel } from '../e2e/embedded/harness.ts';

type Harness = typeof import('../e2e/embedded/harness.ts');

const [a, b, n = '30'] = process.argv.slice(2);
if (!a || !b) throw new Error('usage: node bench/warm-pool-ab.ts <checkout A> <checkout B> [starts]');
const starts = Number(n);

const cpuMs = (pid: number) => {
  const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(f[11]) + Number(f[12])) * 10;
};
/** CPU (ms) of every process in process group `pgid`: an agent server, and under isolation its wrappers. */
const groupCpuMs = (pgid: number) => {
  let ms = 0;
  for (const pid of readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
    try {
      const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
      if (Number(f[2]) === pgid) ms += (Number(f[11]) + Number(f[12])) * 10;
    } catch {
      // exited meanwhile
    }
  }
  return ms;
};
/** Each pool member's process group and its CPU so far (the runtime's record of each sandbox). */
const membersCpu = (dataDir: string) => {
  const out = new Map<string, { pgid: number; ms: number }>();
  for (const name of readdirSync(`${dataDir}/sandboxes`)) {
    try {
      const pgid = (JSON.parse(readFileSync(`${dataDir}/sandboxes/${name}/runtime.json`, 'utf8')) as { pid?: number }).pid;
      if (pgid) out.set(name, { pgid, ms: groupCpuMs(pgid) });
    } catch {
      // not started yet
    }
  }
  return out;
};
const quantile = (xs: number[], q: number) => [...xs].sort((x, y) => x - y)[Math.min(xs.length - 1, Math.ceil(q * xs.length) - 1)]!;

interface Tree extends ServiceWithModel {
  dir: string;
  h: Harness;
  ms: number[];
  cpu: number;
  agentCpu: number;
}

const trees: Tree[] = [];
const load = () => readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
console.log(`load average at the start: ${load()}`);
try {
  for (const dir of [resolve(a), resolve(b)]) {
    const h = (await import(`${dir}/e2e/embedded/harness.ts`)) as Harness;
    const s = await h.startServiceWithModel({ env: { AGENTYARD_SANDBOX_CAPACITY: '50', AGENTYARD_LOG_LEVEL: 'warn' } });
    trees.push({ dir, h, ...s, ms: [], cpu: 0, agentCpu: 0 });
    const created = await s.svc.api('POST', '/api/v1/warm-pools', { name: 'bench', replicas: 3 });
    if (created.status !== 201) throw new Error(`${dir}: creating the pool answered ${created.status}`);
  }
  const full = (t: Tree) =>
    t.h.eventually(async () => {
      const { body } = await t.svc.api<{ ready: number; members: number }>('GET', '/api/v1/warm-pools/bench');
      return body.ready >= 3 && body.members === 3 ? true : undefined;
    }, `${t.dir}: the pool to be full`, 120_000, 20);
  for (let i = 0; i < starts; i++) {
    for (const t of i % 2 ? [...trees].reverse() : trees) {
      for (const u of trees) await full(u);
      const members = membersCpu(t.svc.dataDir);
      const c0 = cpuMs(t.svc.process.pid!);
      const t0 = performance.now();
      const res = await fetch(`${t.svc.url}/api/v1/app-conversations/stream-start`, { method: 'POST', headers: { authorization: `Bearer ${t.svc.apiKey}`, 'content-type': 'application/json' }, body: '{}' });
      const task = (JSON.parse(await res.text()) as { status: string; sandbox_id?: string; app_conversation_id?: string }[]).at(-1)!;
      t.ms.push(performance.now() - t0);
      t.cpu += cpuMs(t.svc.process.pid!) - c0;
      const claimed = members.get(task.sandbox_id ?? '');
      if (claimed) t.agentCpu += groupCpuMs(claimed.pgid) - claimed.ms;
      if (task.status !== 'READY' || !task.sandbox_id?.startsWith('bench-')) throw new Error(`${t.dir}: start ${i} ended ${JSON.stringify(task)}`);
      await t.svc.api('DELETE', `/api/v1/app-conversations/${task.app_conversation_id}`);
    }
  }
  for (const t of trees) {
    console.log(`${t.dir}: ${t.ms.length} starts, p50 ${quantile(t.ms, 0.5).toFixed(0)} ms, p90 ${quantile(t.ms, 0.9).toFixed(0)}, p99 ${quantile(t.ms, 0.99).toFixed(0)}, fastest ${Math.min(...t.ms).toFixed(0)}; up CPU per start ${(t.cpu / t.ms.length).toFixed(1)} ms, claimed agent server's ${(t.agentCpu / t.ms.length).toFixed(1)} ms`);
  }
  console.log(`load average at the end: ${load()}`);
  console.log(`p50 B/A ${(quantile(trees[1]!.ms, 0.5) / quantile(trees[0]!.ms, 0.5)).toFixed(2)}`);
} finally {
  for (const t of trees) await t.stop();
}
