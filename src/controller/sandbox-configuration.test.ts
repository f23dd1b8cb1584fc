// The Sandbox Configuration in the controller: field-by-field overrides of the environment's
// defaults, and a running controller on the SQLite store taking a change up at once (the same
// scenario runs on a real kube-apiserver in e2e/kube/sandbox-configuration.test.ts).
import { describe, expect, it } from 'vitest';
import { SqliteStore } from '../store/sqlite/sqlite-store.ts';
import { ManualClock } from './clock.ts';
import { effectiveSettings, LiveLifecycleSettings } from './sandbox-configuration.ts';
import { configurationChangeMovesDeadlines } from './testing/configuration-scenario.ts';

const defaults = { idleTimeMs: 1_800_000, deletionTimeMs: 604_800_000, capacity: 20 };

describe('Sandbox Configuration', () => {
  it('overrides each default it sets, and only those', () => {
    expect(effectiveSettings(defaults, undefined)).toEqual(defaults);
    expect(effectiveSettings(defaults, { idleTimeSeconds: 60 })).toEqual({ ...defaults, idleTimeMs: 60_000 });
    expect(effectiveSettings(defaults, { deletionTimeSeconds: 120, sandboxCapacity: 3 })).toEqual({ idleTimeMs: 1_800_000, deletionTimeMs: 120_000, capacity: 3 });
  });

  it('live settings report whether a value moved, and go back to the defaults when the object is deleted', () => {
    const live = new LiveLifecycleSettings(defaults);
    expect(live.apply({ changes: [] })).toBe(false);
    expect(live.apply({ idleTimeSeconds: 60 })).toBe(true);
    expect(live.idleTimeMs).toBe(60_000);
    expect(live.apply({ idleTimeSeconds: 60 })).toBe(false);
    expect(live.apply(undefined)).toBe(true);
    expect({ idleTimeMs: live.idleTimeMs, deletionTimeMs: live.deletionTimeMs, capacity: live.capacity }).toEqual(defaults);
  });

  it('a running controller moves idle and deletion deadlines when the configuration changes (SQLite store)', async () => {
    const store = new SqliteStore(':memory:', { clock: new ManualClock('2026-01-01T00:00:00Z') });
    try {
      await configurationChangeMovesDeadlines(store, 'default');
    } finally {
      store.close();
    }
  });
});
