// The admin console's API over real HTTP with real SQLite stores: the Sandbox Configuration (values
// in force, defaults from the environment, 422 with field paths, the audit trail), its effect on
// the facade's capacity check without a restart, every user's sandboxes, and 403 for non-admins.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SANDBOX_CONFIGURATION_NAME, SandboxConfigurationKind } from '../api/sandbox-configuration.ts';
import { NS, startHarness, type Harness } from './test-support.ts';

const C = '/api/v1/admin/sandbox-configuration';
let h: Harness;
beforeAll(async () => {
  h = await startHarness({ capacity: 10, idleTimeMs: 1_800_000, deletionTimeMs: 604_800_000 });
  await h.db.setUserAdmin(h.alice.user.id, true);
});
afterAll(() => h.close());

describe('/api/v1/admin', () => {
  it('refuses users who are not administrators (403) on every admin route', async () => {
    for (const [method, path] of [['GET', C], ['PATCH', C], ['GET', '/api/v1/admin/sandboxes']] as const) {
      const r = await h.call(method, path, { key: h.bob.key, ...(method === 'PATCH' ? { body: { idle_time_seconds: 5 } } : {}) });
      expect(r).toMatchObject({ status: 403, body: { detail: 'Only administrators use the admin console' } });
    }
    expect(await h.store.get(SandboxConfigurationKind, NS, SANDBOX_CONFIGURATION_NAME)).toBeUndefined();
  });

  it('shows the environment defaults, saves a change with its audit entry, and sets a field back to its default', async () => {
    const initial = await h.call('GET', C);
    expect(initial.body).toEqual({
      idle_time_seconds: 1800,
      deletion_time_seconds: 604800,
      sandbox_capacity: 10,
      defaults: { idle_time_seconds: 1800, deletion_time_seconds: 604800, sandbox_capacity: 10 },
      overridden: [],
      changes: [],
    });

    const saved = await h.call('PATCH', C, { body: { idle_time_seconds: 600, deletion_time_seconds: 86400 } });
    expect(saved.status).toBe(200);
    expect(saved.body).toMatchObject({ idle_time_seconds: 600, deletion_time_seconds: 86400, sandbox_capacity: 10, overridden: ['idle_time_seconds', 'deletion_time_seconds'] });
    expect(saved.body.changes).toEqual([
      { time: '2026-03-01T10:00:00Z', user_id: h.alice.user.id, user_name: 'alice', outside_api: false, field_manager: null, object_deleted: false, field: 'deletion_time_seconds', from: null, to: 86400 },
      { time: '2026-03-01T10:00:00Z', user_id: h.alice.user.id, user_name: 'alice', outside_api: false, field_manager: null, object_deleted: false, field: 'idle_time_seconds', from: null, to: 600 },
    ]);
    // Cluster state: the resource the controller watches holds the values and the trail.
    const stored = await h.store.get(SandboxConfigurationKind, NS, SANDBOX_CONFIGURATION_NAME);
    expect(stored?.spec).toMatchObject({ idleTimeSeconds: 600, deletionTimeSeconds: 86400 });

    // The same value again changes nothing and records nothing.
    h.clock.advance(60_000);
    expect((await h.call('PATCH', C, { body: { idle_time_seconds: 600 } })).body.changes).toHaveLength(2);

    const back = await h.call('PATCH', C, { body: { idle_time_seconds: null } });
    expect(back.body).toMatchObject({ idle_time_seconds: 1800, overridden: ['deletion_time_seconds'] });
    expect(back.body.changes[0]).toEqual({ time: '2026-03-01T10:01:00Z', user_id: h.alice.user.id, user_name: 'alice', outside_api: false, field_manager: null, object_deleted: false, field: 'idle_time_seconds', from: 600, to: null });
  });

  it('a change written around the API and not yet recorded by the controller goes into the trail before the next change through it', async () => {
    // As kubectl would: the resource itself, no trail entry.
    const cfg = (await h.store.get(SandboxConfigurationKind, NS, SANDBOX_CONFIGURATION_NAME))!;
    await h.store.update(SandboxConfigurationKind, { ...cfg, spec: { ...cfg.spec, deletionTimeSeconds: 7200 } });
    h.clock.advance(60_000);
    const r = await h.call('PATCH', C, { body: { deletion_time_seconds: 3600 } });
    expect(r.body.changes.slice(0, 2)).toEqual([
      { time: '2026-03-01T10:02:00Z', user_id: h.alice.user.id, user_name: 'alice', outside_api: false, field_manager: null, object_deleted: false, field: 'deletion_time_seconds', from: 7200, to: 3600 },
      // SQLite keeps no field managers: the writer is not known either.
      { time: '2026-03-01T10:02:00Z', user_id: null, user_name: null, outside_api: true, field_manager: null, object_deleted: false, field: 'deletion_time_seconds', from: 86400, to: 7200 },
    ]);
  });

  it('refuses bad values with 422 naming each field, and saves nothing', async () => {
    const before = (await h.call('GET', C)).body;
    const bad = await h.call('PATCH', C, { body: { idle_time_seconds: 0, deletion_time_seconds: 1.5, sandbox_capacity: 'many', other: 1 } });
    expect(bad.status).toBe(422);
    const locs = (bad.body.detail as { loc: string[] }[]).map((d) => d.loc.join('.'));
    expect(locs).toEqual(expect.arrayContaining(['body.idle_time_seconds', 'body.deletion_time_seconds', 'body.sandbox_capacity']));
    expect((await h.call('GET', C)).body).toEqual(before);
  });

  it('applies a capacity change to the next start at once', async () => {
    await h.call('PATCH', C, { body: { sandbox_capacity: 1 } });
    expect((await h.call('POST', '/api/v1/sandboxes')).status).toBe(200);
    const refused = await h.call('POST', '/api/v1/sandboxes', { key: h.bob.key });
    expect(refused.status).toBe(429);
    expect(refused.body.detail).toContain('all 1 sandbox slots');
    await h.call('PATCH', C, { body: { sandbox_capacity: null } });
    expect((await h.call('POST', '/api/v1/sandboxes', { key: h.bob.key })).status).toBe(200);
  });

  it("lists every user's sandboxes with owner and status", async () => {
    const r = await h.call('GET', '/api/v1/admin/sandboxes');
    expect(r.status).toBe(200);
    const rows = (r.body.items as { owner_name: string; status: string; conversation_count: number }[]).map((s) => [s.owner_name, s.status]).sort();
    expect(rows).toEqual([['alice', 'STARTING'], ['bob', 'STARTING']]);
    // A user's own list still shows only their own.
    expect((await h.call('GET', '/api/v1/sandboxes/search', { key: h.bob.key })).body.items).toHaveLength(1);
  });
});
