// One scenario, run on both stores (SQLite here, a real kube-apiserver in e2e/kube): a running
// controller takes a Sandbox Configuration change up at once, without a restart. Idle Time drops
// below how long a running sandbox has been idle → it is paused at once; Deletion Time drops below
// how long it has been paused → it is deleted. Time is the injected clock; nothing sleeps: each
// step waits on the store's watch for what the controller did.
import { expect } from 'vitest';
import { API_VERSION, LABEL_OWNER, type KubeObject, type ResourceKind } from '../../api/meta.ts';
import { SandboxKind } from '../../api/sandbox.ts';
import { SANDBOX_CONFIGURATION_NAME, SandboxConfigurationKind } from '../../api/sandbox-configuration.ts';
import type { ResourceStore } from '../../store/types.ts';
import { ManualClock } from '../clock.ts';
import { createController } from '../embedded.ts';
import { FakeRuntime } from './fake-runtime.ts';

/** The object once `ok` holds (undefined: once it is gone), as the watch delivers it. */
async function waitFor<T extends KubeObject>(store: ResourceStore, kind: ResourceKind<T>, ns: string, name: string, ok: (obj: T | undefined) => boolean, timeoutMs = 20_000): Promise<T | undefined> {
  const list = await store.list(kind, ns);
  const current = list.items.find((o) => o.metadata.name === name);
  if (ok(current)) return current;
  const signal = AbortSignal.timeout(timeoutMs);
  for await (const e of store.watch(kind, ns, { resourceVersion: list.resourceVersion, signal })) {
    if (e.object.metadata.name !== name) continue;
    const obj = e.type === 'DELETED' ? undefined : e.object;
    if (ok(obj)) return obj;
  }
  throw new Error(`${kind.kind} ${ns}/${name} never got there`);
}

export async function configurationChangeMovesDeadlines(store: ResourceStore, ns: string): Promise<void> {
  const clock = new ManualClock('2026-01-01T00:00:00Z');
  const runtime = new FakeRuntime();
  runtime.startResult = (name) => ({ phase: 'running', runtimeId: name, url: `http://127.0.0.1:9/${name}` });
  // The environment's values: an hour of Idle Time and of Deletion Time.
  const controller = createController({ store, runtime, clock, settings: { idleTimeMs: 3_600_000, deletionTimeMs: 3_600_000, capacity: 10 }, namespace: ns });
  await controller.start();
  try {
    await store.create(SandboxKind, { apiVersion: API_VERSION, kind: 'Sandbox', metadata: { name: 'cfg-sb', namespace: ns, labels: { [LABEL_OWNER]: 'alice' } }, spec: { owner: 'alice', paused: false } });
    const running = await waitFor(store, SandboxKind, ns, 'cfg-sb', (sb) => sb?.status?.phase === 'RUNNING');
    expect(running?.status?.sessionStartTime).toBe('2026-01-01T00:00:00.000Z');

    // Ten minutes idle: far from the hour. An administrator sets Idle Time to 5 minutes.
    clock.advance(10 * 60_000);
    await store.create(SandboxConfigurationKind, { apiVersion: API_VERSION, kind: 'SandboxConfiguration', metadata: { name: SANDBOX_CONFIGURATION_NAME, namespace: ns }, spec: { idleTimeSeconds: 300 } });
    const paused = await waitFor(store, SandboxKind, ns, 'cfg-sb', (sb) => sb?.status?.phase === 'PAUSED');
    expect(paused?.spec.paused).toBe(true);
    expect(paused?.status).toMatchObject({ pauseReason: 'IdleTimeout', pausedAt: '2026-01-01T00:10:00.000Z' });

    // Paused two minutes, an hour to go before deletion; Deletion Time becomes one minute.
    clock.advance(2 * 60_000);
    const config = (await store.get(SandboxConfigurationKind, ns, SANDBOX_CONFIGURATION_NAME))!;
    await store.update(SandboxConfigurationKind, { ...config, spec: { ...config.spec, deletionTimeSeconds: 60 } });
    expect(await waitFor(store, SandboxKind, ns, 'cfg-sb', (sb) => sb === undefined)).toBeUndefined();
    expect(runtime.calls).toContain('delete cfg-sb');
  } finally {
    await controller.stop();
  }
}
