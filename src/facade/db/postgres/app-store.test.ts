// PostgreSQL-only behaviour: several API replicas sharing one database (concurrent start-up
// migrations, one delivery per queued message, ingest of one conversation from two replicas),
// the schema version record and a lapsed claim. Needs Debian's postgresql; skipped without it.
import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Event } from '../../../api/events/index.ts';
import { postgresBinDir, startPostgres, type PgServer } from '../../../testing/postgres/server.ts';
import { PostgresAppStore } from './app-store.ts';
import { PG_SCHEMA_VERSION } from './migrations.ts';

const ev = (id: string) => ({ id, timestamp: '2026-03-01T10:00:00.000Z', source: 'agent', kind: 'PauseEvent' }) as unknown as Event;
const binDir = postgresBinDir();

describe.skipIf(!binDir)(`PostgresAppStore with several replicas${binDir ? '' : ' (skipped: PostgreSQL server binaries not found under /usr/lib/postgresql; install Debian postgresql)'}`, () => {
  let server: PgServer;
  let n = 0;
  const open: PostgresAppStore[] = [];
  beforeAll(async () => {
    server = await startPostgres();
  }, 30_000);
  afterEach(async () => {
    await Promise.all(open.splice(0).map((s) => s.close()));
  });
  afterAll(() => server?.stop());

  async function freshUrl(): Promise<string> {
    const name = `r${++n}`;
    const admin = new pg.Client({ connectionString: server.url });
    await admin.connect();
    await admin.query(`CREATE DATABASE ${name}`).finally(() => admin.end());
    return server.url.replace(/\/[^/]*$/, `/${name}`);
  }

  async function replicas(url: string, count: number): Promise<PostgresAppStore[]> {
    const stores = await Promise.all(Array.from({ length: count }, () => PostgresAppStore.open(url)));
    open.push(...stores);
    return stores;
  }

  it('migrates once when several replicas start at once, and records the version', async () => {
    const url = await freshUrl();
    const [a] = await replicas(url, 4);
    const r = await a!.pool.query<{ version: number }>('SELECT version FROM schema_version');
    expect(r.rows).toEqual([{ version: PG_SCHEMA_VERSION }]);
    await replicas(url, 1); // reopening is a no-op
  });

  it('refuses a database from a newer build', async () => {
    const url = await freshUrl();
    const [a] = await replicas(url, 1);
    await a!.pool.query('UPDATE schema_version SET version = $1', [PG_SCHEMA_VERSION + 1]);
    await expect(PostgresAppStore.open(url)).rejects.toThrow(/newer than this build/);
  });

  it('upgrades events stored before version 8: counts are those of the stored events, their exclude_none form is made when read', async () => {
    const url = await freshUrl();
    const [a] = await replicas(url, 1);
    const stateEv = { ...ev('s'), kind: 'ConversationStateUpdateEvent', key: 'k', value: null, llm_response_id: null } as unknown as Event;
    await a!.events.ingest('c1', [{ seq: 1, event: ev('a') }, { seq: 2, event: stateEv }, { seq: 3, event: ev('b') }]);
    const wire = (await a!.events.search('c1', { limit: 10, wire: true })).items;
    await a!.pool.query('DROP TABLE event_counts; ALTER TABLE events DROP COLUMN wire; UPDATE schema_version SET version = 7');
    const [b] = await replicas(url, 1);
    expect([await b!.events.count('c1', {}), await b!.events.count('c1', { kind: 'PauseEvent' })]).toEqual([3, 2]);
    expect((await b!.pool.query('SELECT wire FROM events')).rows.map((r) => r.wire)).toEqual([null, null, null]);
    expect((await b!.events.search('c1', { limit: 10, wire: true })).items).toEqual(wire);
    expect(JSON.parse(wire[1]!)).toEqual({ id: 's', timestamp: '2026-03-01T10:00:00.000Z', source: 'agent', kind: 'ConversationStateUpdateEvent', key: 'k' });
  });

  it('lets exactly one replica claim a queued message; a lapsed claim can be taken over', async () => {
    const [a, b, c] = await replicas(await freshUrl(), 3);
    const id = await a!.pending.add('c1', { role: 'user', content: [], run: true }, 'now');
    const won = await Promise.all([a!, b!, c!].map((s) => s.pending.claim(id, 60_000)));
    expect(won.filter(Boolean)).toHaveLength(1);
    // The holder died: its lease ran out (moved into the past rather than waited for).
    await a!.pool.query(`UPDATE pending_messages SET claimed_until = now() - interval '1 second' WHERE id = $1`, [id]);
    expect(await b!.pending.claim(id, 60_000)).toBe(true);
    expect(await c!.pending.claim(id, 60_000)).toBe(false);
  });

  it('ingests one conversation from two replicas without losing or doubling events', async () => {
    const [a, b] = await replicas(await freshUrl(), 2);
    const items = Array.from({ length: 200 }, (_, i) => ({ seq: i + 1, event: ev(`e${i + 1}`) }));
    const chunks = Array.from({ length: 8 }, (_, k) => items.slice(k * 25, k * 25 + 25));
    // Every chunk sent twice (a retry through the other replica), all at once.
    const results = await Promise.all(chunks.flatMap((chunk) => [a!.events.ingest('c1', chunk), b!.events.ingest('c1', chunk)]));
    expect(results.every((r) => r.mismatched.length === 0)).toBe(true);
    expect(await b!.events.acknowledgedSeq('c1')).toBe(200);
    expect(await a!.events.count('c1', {})).toBe(200);
    const page = await b!.events.search('c1', { limit: 3, fromSeq: 199 });
    expect(page.items.map((j) => (JSON.parse(j) as { id: string }).id)).toEqual(['e199', 'e200']);
  });
});
