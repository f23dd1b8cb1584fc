// How fast a running controller takes up an admin console change (Sandbox Configuration): N running
// sandboxes idle for 10 minutes, Idle Time set from an hour to 5 minutes, time until every one of
// them is PAUSED. The controller on the SQLite store, its runtime a fake (no processes: this is
// the watch → requeue → reconcile path alone). `node bench/config-takeup.ts [N]` runs it alone.
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { API_VERSION, LABEL_OWNER } from '../src/api/meta.ts';
import { SandboxKind } from '../src/api/sandbox.ts';
import { SandboxConfigurationKind } from '../src/api/sandbox-configuration.ts';
import { ManualClock } from '../src/controller/clock.ts';
import { createController } from '../src/controller/embedded.ts';
import { FakeRuntime } from '../src/controller/testing/fake-runtime.ts';
import { SqliteStore } from '../src/store/sqlite/sqlite-store.ts';

type Record = (name: string, value: number, unit: string, note?: string) => void;

export async function benchConfigTakeup(record: Record, n = 100): Promise<void> {
  const clock = new ManualClock('2026-01-01T00:00:00Z');
  const store = new SqliteStore(':memory:', { clock });
  const runtime = new FakeRuntime();
  runtime.startResult = (name) => ({ phase: 'running', runtimeId: name, url: `http://127.0.0.1:9/${name}` });
  const controller = createController({ store, runtime, clock, settings: { idleTimeMs: 3_600_000, deletionTimeMs: 3_600_000, capacity: n }, namespace: 'default' });
  await controller.start();
  try {
    for (let i = 0; i < n; i++) await store.create(SandboxKind, { apiVersion: API_VERSION, kind: 'Sandbox', metadata: { name: `sb-${i}`, namespace: 'default', labels: { [LABEL_OWNER]: 'u' } }, spec: { owner: 'u', paused: false } });
    const inPhase = async (phase: string) => (await store.list(SandboxKind, 'default')).items.filter((s) => s.status?.phase === phase).length;
    while ((await inPhase('RUNNING')) < n) await sleep(10);
    clock.advance(10 * 60_000);
    const t0 = performance.now();
    await store.create(SandboxConfigurationKind, { apiVersion: API_VERSION, kind: 'SandboxConfiguration', metadata: { name: 'default', namespace: 'default' }, spec: { idleTimeSeconds: 300 } });
    while ((await inPhase('PAUSED')) < n) await sleep(5);
    record('config: Idle Time change → all paused', performance.now() - t0, 'ms', `${n} running sandboxes, no restart`);
  } finally {
    await controller.stop();
    store.close();
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  await benchConfigTakeup((name, value, unit, note = '') => console.log(`${name}  ${value.toFixed(0)} ${unit}  ${note}`), Number(process.argv[2] ?? 100));
}
