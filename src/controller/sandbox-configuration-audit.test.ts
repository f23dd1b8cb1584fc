// The audit of changes made around the API: what the trail does not account for, the writer from
// managedFields, a trail cut to its size that keeps each field's newest entry, and a running
// controller on the SQLite store recording a direct write (the real kube-apiserver with a kubectl
// write is e2e/kube/sandbox-configuration.test.ts).
import { describe, expect, it } from 'vitest';
import { API_VERSION } from '../api/meta.ts';
import { MAX_CHANGES, SANDBOX_CONFIGURATION_NAME, SandboxConfigurationKind, type ConfigChange, type SandboxConfiguration } from '../api/sandbox-configuration.ts';
import { SqliteStore } from '../store/sqlite/sqlite-store.ts';
import { ManualClock } from './clock.ts';
import { createController } from './embedded.ts';
import { appendChanges, deletionChanges, fieldWriter, unrecordedChanges } from './sandbox-configuration-audit.ts';
import { FakeRuntime } from './testing/fake-runtime.ts';

const byApi = (field: ConfigChange['field'], from: number | null, to: number | null, time = '2026-01-01T00:00:00Z'): ConfigChange => ({ time, userId: 'admin', userName: 'admin', field, from, to });

function config(spec: SandboxConfiguration['spec'], managedFields?: unknown[]): SandboxConfiguration {
  return { apiVersion: API_VERSION, kind: 'SandboxConfiguration', metadata: { name: 'default', namespace: 'ns', ...(managedFields ? { managedFields } : {}) } as SandboxConfiguration['metadata'], spec };
}

/** `fn` with a controller running over a SQLite store in namespace `ns`, on a manual clock. */
async function running(fn: (store: SqliteStore, clock: ManualClock) => Promise<void>): Promise<void> {
  const clock = new ManualClock('2026-01-01T00:00:00Z');
  const store = new SqliteStore(':memory:', { clock });
  const controller = createController({ store, runtime: new FakeRuntime(), clock, settings: { idleTimeMs: 3_600_000, deletionTimeMs: 3_600_000, capacity: 10 }, namespace: 'ns' });
  await controller.start();
  try {
    await fn(store, clock);
  } finally {
    await controller.stop();
    store.close();
  }
}

describe('the Sandbox Configuration audit', () => {
  it('finds each field whose value the trail does not end at, naming the field manager Kubernetes recorded for it', () => {
    const managed = [
      { manager: 'agentyard', operation: 'Update', time: '2026-01-01T00:00:00Z', fieldsV1: { 'f:spec': { '.': {}, 'f:changes': {}, 'f:sandboxCapacity': {} } } },
      { manager: 'kubectl-edit', operation: 'Update', time: '2026-01-02T09:30:00Z', fieldsV1: { 'f:spec': { 'f:idleTimeSeconds': {} } } },
    ];
    const obj = config({ idleTimeSeconds: 60, sandboxCapacity: 5, changes: [byApi('idleTimeSeconds', null, 600), byApi('sandboxCapacity', null, 5)] }, managed);
    expect(unrecordedChanges(obj, '2026-01-03T00:00:00Z')).toEqual([
      { time: '2026-01-02T09:30:00Z', field: 'idleTimeSeconds', from: 600, to: 60, outsideApi: true, fieldManager: 'kubectl-edit' },
    ]);
    expect(fieldWriter(obj, 'sandboxCapacity')).toEqual({ manager: 'agentyard', time: '2026-01-01T00:00:00Z' });
    // A field set with no entry at all (created by kubectl apply), and one removed around the API; no managedFields (SQLite): the clock's time, no writer.
    expect(unrecordedChanges(config({ deletionTimeSeconds: 30, changes: [byApi('sandboxCapacity', null, 5)] }), '2026-01-03T00:00:00Z')).toEqual([
      { time: '2026-01-03T00:00:00Z', field: 'deletionTimeSeconds', from: null, to: 30, outsideApi: true },
      { time: '2026-01-03T00:00:00Z', field: 'sandboxCapacity', from: 5, to: null, outsideApi: true },
    ]);
    // Accounted for: nothing.
    expect(unrecordedChanges(config({ idleTimeSeconds: 600, changes: [byApi('idleTimeSeconds', null, 60), byApi('idleTimeSeconds', 60, 600)] }), 'x')).toEqual([]);
    expect(unrecordedChanges(config({}), 'x')).toEqual([]);
  });

  it('cuts the trail to its size from the oldest end, but keeps the newest entry of every field', () => {
    const capacity = byApi('sandboxCapacity', null, 3);
    const idle = Array.from({ length: MAX_CHANGES + 5 }, (_, i) => byApi('idleTimeSeconds', i, i + 1));
    const cut = appendChanges([capacity, ...idle.slice(0, 50)], idle.slice(50));
    expect(cut).toHaveLength(MAX_CHANGES);
    expect(cut[0]).toEqual(capacity);
    expect(cut.at(-1)).toEqual(idle.at(-1));
    expect(unrecordedChanges(config({ sandboxCapacity: 3, idleTimeSeconds: MAX_CHANGES + 5, changes: cut }), 'x')).toEqual([]);
  });

  it('a running controller records a write made around the API (SQLite store), once', () =>
    running(async (store, clock) => {
      const list = await store.list(SandboxConfigurationKind, 'ns');
      await store.create(SandboxConfigurationKind, config({ idleTimeSeconds: 120 }));
      const seen: ConfigChange[][] = [];
      for await (const ev of store.watch(SandboxConfigurationKind, 'ns', { resourceVersion: list.resourceVersion, signal: AbortSignal.timeout(10_000) })) {
        seen.push(ev.object.spec.changes ?? []);
        if ((ev.object.spec.changes ?? []).length > 0) break;
      }
      expect(seen.at(-1)).toEqual([{ time: '2026-01-01T00:00:00Z', field: 'idleTimeSeconds', from: null, to: 120, outsideApi: true }]);
      // Its own write is accounted for: a later change through the store is recorded once more, and nothing twice.
      clock.advance(60_000);
      const cur = (await store.get(SandboxConfigurationKind, 'ns', SANDBOX_CONFIGURATION_NAME))!;
      await store.update(SandboxConfigurationKind, { ...cur, spec: { ...cur.spec, idleTimeSeconds: 240 } });
      for await (const ev of store.watch(SandboxConfigurationKind, 'ns', { resourceVersion: cur.metadata.resourceVersion, signal: AbortSignal.timeout(10_000) })) {
        if ((ev.object.spec.changes ?? []).length > 1) break;
      }
      const final = (await store.get(SandboxConfigurationKind, 'ns', SANDBOX_CONFIGURATION_NAME))!;
      expect(final.spec.changes).toEqual([
        { time: '2026-01-01T00:00:00Z', field: 'idleTimeSeconds', from: null, to: 120, outsideApi: true },
        { time: '2026-01-01T00:01:00Z', field: 'idleTimeSeconds', from: 120, to: 240, outsideApi: true },
      ]);
    }));

  it('a deletion sends each field it held back to its default; nothing to record for an object that held none', () => {
    const trail = [byApi('idleTimeSeconds', null, 600)];
    expect(deletionChanges(config({ idleTimeSeconds: 600, sandboxCapacity: 4, changes: trail }), '2026-01-02T00:00:00Z')).toEqual([
      { time: '2026-01-02T00:00:00Z', field: 'idleTimeSeconds', from: 600, to: null, outsideApi: true, objectDeleted: true },
      { time: '2026-01-02T00:00:00Z', field: 'sandboxCapacity', from: 4, to: null, outsideApi: true, objectDeleted: true },
    ]);
    expect(deletionChanges(config({ changes: [byApi('idleTimeSeconds', 600, null)] }), '2026-01-02T00:00:00Z')).toEqual([]);
  });

  it('a running controller keeps the trail of a deleted configuration, with the deletion, in a new object with no values (SQLite store)', () =>
    running(async (store, clock) => {
      const trail = [byApi('idleTimeSeconds', null, 600)];
      const created = await store.create(SandboxConfigurationKind, config({ idleTimeSeconds: 600, changes: trail }));
      clock.advance(60_000);
      await store.delete(SandboxConfigurationKind, 'ns', SANDBOX_CONFIGURATION_NAME);
      let kept: SandboxConfiguration | undefined;
      for await (const ev of store.watch(SandboxConfigurationKind, 'ns', { resourceVersion: created.metadata.resourceVersion, signal: AbortSignal.timeout(10_000) })) {
        if (ev.type === 'ADDED') {
          kept = ev.object;
          break;
        }
      }
      expect(kept?.spec).toEqual({ changes: [...trail, { time: '2026-01-01T00:01:00Z', field: 'idleTimeSeconds', from: 600, to: null, outsideApi: true, objectDeleted: true }] });
    }));
});
