// One suite, both app stores: a real SQLite file, and a real PostgreSQL server started by the test
// (Debian's postgresql; skipped with a message when its binaries are absent).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Event } from '../../api/events/index.ts';
import { ManualClock } from '../../controller/clock.ts';
import { postgresBinDir, startPostgres, type PgServer } from '../../testing/postgres/server.ts';
import { SqliteAppStore } from './app-db.ts';
import { PostgresAppStore } from './postgres/app-store.ts';
import { SingleUserInstallation, type AppStore } from './types.ts';

const ev = (id: string, kind = 'PauseEvent', ts = '2026-03-01T10:00:00.000Z') => ({ id, timestamp: ts, source: 'user', kind }) as unknown as Event;

interface Backend {
  name: string;
  skip?: string;
  setup(): Promise<void>;
  teardown(): Promise<void>;
  open(clock: ManualClock): Promise<AppStore>;
}

let dbCounter = 0;
let server: PgServer | undefined;

/** A fresh database on the shared test server. */
async function freshPgUrl(): Promise<string> {
  const name = `t${process.pid}_${++dbCounter}`;
  const admin = new pg.Client({ connectionString: server!.url });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
  return server!.url.replace(/\/[^/]*$/, `/${name}`);
}

const backends: Backend[] = [
  (() => {
    let dir = '';
    return {
      name: 'sqlite',
      async setup() {
        dir = mkdtempSync(join(tmpdir(), 'appstore-'));
      },
      async teardown() {
        rmSync(dir, { recursive: true, force: true });
      },
      async open(clock) {
        return new SqliteAppStore(join(dir, `app-${++dbCounter}.db`), { clock });
      },
    };
  })(),
  {
    name: 'postgresql',
    ...(postgresBinDir() ? {} : { skip: 'PostgreSQL server binaries not found under /usr/lib/postgresql (install Debian postgresql)' }),
    async setup() {
      server = await startPostgres();
    },
    async teardown() {
      await server?.stop();
      server = undefined;
    },
    async open(clock) {
      return PostgresAppStore.open(await freshPgUrl(), { clock });
    },
  },
];

for (const b of backends) {
  if (b.skip) {
    describe.skip(`app store on ${b.name}: ${b.skip}`, () => it('skipped', () => {}));
    continue;
  }
  describe(`app store on ${b.name}`, () => {
    let db: AppStore;
    let clock: ManualClock;
    beforeAll(() => b.setup(), 30_000);
    afterAll(() => b.teardown());
    beforeEach(async () => {
      clock = new ManualClock('2026-03-01T10:00:00Z');
      db = await b.open(clock);
    });
    afterEach(() => db.close());

    it('keeps users and API keys; finds users by key only', async () => {
      const u = await db.createUser('alice');
      expect(await db.getUser(u.id)).toEqual(u);
      expect(await db.getUser('nobody')).toBeUndefined();
      const key = await db.createApiKey(u.id);
      expect(key).toMatch(/^ay_/);
      expect(await db.findUserByApiKey(key)).toEqual(u);
      expect(await db.findUserByApiKey(key + 'x')).toBeUndefined();
      expect(await db.findUserByApiKey('')).toBeUndefined();
      await db.addApiKey(u.id, 'operator-key');
      await db.addApiKey(u.id, 'operator-key');
      expect(await db.findUserByApiKey('operator-key')).toEqual(u);
      expect(await db.listApiKeys(u.id)).toEqual([
        { prefix: key.slice(0, 9), created_at: '2026-03-01T10:00:00.000Z', revoked_at: null },
        { prefix: 'operator-', created_at: '2026-03-01T10:00:00.000Z', revoked_at: null },
      ]);
      await expect(db.createUser('again', u.id)).rejects.toThrow();
    });

    it('refuses a second user while single-user, with the reason, and allows it once cleared', async () => {
      expect(await db.singleUserReason()).toBeUndefined();
      await db.setSingleUser('no bubblewrap');
      await db.setSingleUser('bubblewrap is not installed');
      expect(await db.singleUserReason()).toBe('bubblewrap is not installed');
      const admin = await db.createUser('admin', 'admin');
      const refused = await db.createUser('bob').catch((e: unknown) => e);
      expect(refused).toBeInstanceOf(SingleUserInstallation);
      expect((refused as Error).message).toContain('bubblewrap is not installed');
      expect(await db.countUsers()).toBe(1);
      expect(await db.getUser(admin.id)).toEqual(admin);
      await db.setSingleUser(undefined);
      expect(await db.singleUserReason()).toBeUndefined();
      await db.createUser('bob');
      expect(await db.countUsers()).toBe(2);
    });

    it('revokes a key by its prefix for good, refuses an ambiguous prefix, and disables and enables users', async () => {
      const u = await db.createUser('alice');
      const other = await db.createUser('bob');
      const key = await db.createApiKey(u.id);
      const second = await db.createApiKey(u.id);
      const bobs = await db.createApiKey(other.id);
      // Only the owner's keys: bob's prefix is unknown for alice.
      expect(await db.revokeApiKey(u.id, bobs.slice(0, 9))).toBe('not-found');
      clock.advance(60_000);
      expect(await db.revokeApiKey(u.id, key.slice(0, 9))).toBe('revoked');
      expect(await db.findUserByApiKey(key)).toBeUndefined();
      expect(await db.findUserByApiKey(second)).toEqual(u);
      expect(await db.revokeApiKey(u.id, key.slice(0, 9))).toBe('not-found'); // already revoked
      expect((await db.listApiKeys(u.id)).find((k) => k.prefix === key.slice(0, 9))).toEqual({ prefix: key.slice(0, 9), created_at: '2026-03-01T10:00:00.000Z', revoked_at: '2026-03-01T10:01:00.000Z' });
      // A revoked key stays revoked, also when an operator registers it again.
      await db.addApiKey(u.id, key);
      expect(await db.findUserByApiKey(key)).toBeUndefined();
      // Two working keys with one prefix: nothing is revoked.
      await db.addApiKey(u.id, 'same-prefix-1');
      await db.addApiKey(u.id, 'same-prefix-2');
      expect(await db.revokeApiKey(u.id, 'same-pre')).toBe('not-found');
      expect(await db.revokeApiKey(u.id, 'same-pref')).toBe('ambiguous');
      expect(await db.findUserByApiKey('same-prefix-1')).toEqual(u);

      expect(await db.getUserInfo(u.id)).toEqual({ id: u.id, name: 'alice', admin: false, created_at: '2026-03-01T10:00:00.000Z', disabled_at: null });
      expect(await db.setUserDisabled(u.id, true)).toBe(true);
      expect(await db.findUserByApiKey(second)).toBeUndefined();
      expect(await db.findUserByApiKey(bobs)).toEqual(other);
      clock.advance(1000);
      await db.setUserDisabled(u.id, true); // keeps the first time
      expect((await db.getUserInfo(u.id))?.disabled_at).toBe('2026-03-01T10:01:00.000Z');
      expect(await db.setUserDisabled(u.id, false)).toBe(true);
      expect(await db.findUserByApiKey(second)).toEqual(u);
      expect(await db.setUserDisabled('nobody', true)).toBe(false);
      expect(await db.setUserAdmin(other.id, true)).toBe(true);
      expect((await db.listUsers()).map((x) => [x.name, x.admin, x.disabled_at]).sort()).toEqual([
        ['alice', false, null],
        ['bob', true, null],
      ]);
    });

    it('stores settings per user with the NO_GROUPING default and no Git login', async () => {
      const u = await db.createUser('alice');
      const other = await db.createUser('bob');
      const defaults = { sandbox_grouping_strategy: 'NO_GROUPING', git_login: null, git_login_provider: 'github' };
      expect(await db.getSettings(u.id)).toEqual(defaults);
      expect(await db.setSettings(u.id, { sandbox_grouping_strategy: 'GROUP_BY_NEWEST' })).toEqual({ ...defaults, sandbox_grouping_strategy: 'GROUP_BY_NEWEST' });
      // A patch keeps the fields it does not name; null clears the login.
      expect(await db.setSettings(u.id, { git_login: 'alice-gh', git_login_provider: 'gitlab' })).toEqual({ sandbox_grouping_strategy: 'GROUP_BY_NEWEST', git_login: 'alice-gh', git_login_provider: 'gitlab' });
      expect(await db.getSettings(u.id)).toEqual({ sandbox_grouping_strategy: 'GROUP_BY_NEWEST', git_login: 'alice-gh', git_login_provider: 'gitlab' });
      expect(await db.getSettings(other.id)).toEqual(defaults);
      await db.setSettings(u.id, { git_login: null });
      expect(await db.getSettings(u.id)).toMatchObject({ git_login: null, git_login_provider: 'gitlab', sandbox_grouping_strategy: 'GROUP_BY_NEWEST' });
    });

    it('acknowledges the gap-free prefix and stores events past a gap', async () => {
      expect((await db.events.ingest('c1', [{ seq: 1, event: ev('a') }, { seq: 3, event: ev('c') }])).acknowledgedSeq).toBe(1);
      expect(await db.events.count('c1', {})).toBe(2);
      expect((await db.events.ingest('c1', [{ seq: 2, event: ev('b') }])).acknowledgedSeq).toBe(3);
      expect(await db.events.acknowledgedSeq('c1')).toBe(3);
      expect(await db.events.acknowledgedSeq('other')).toBe(0);
      expect(await db.events.ingest('c1', [])).toEqual({ acknowledgedSeq: 3, mismatched: [] });
    });

    it('is idempotent by seq and by event id', async () => {
      await db.events.ingest('c1', [{ seq: 1, event: ev('a') }, { seq: 2, event: ev('b') }]);
      const again = await db.events.ingest('c1', [{ seq: 1, event: ev('a') }, { seq: 2, event: ev('other') }]);
      expect(again).toEqual({ acknowledgedSeq: 2, mismatched: [2] });
      expect(await db.events.count('c1', {})).toBe(2);
      expect(await db.events.getMany('c1', ['b', 'other', 'a'])).toEqual([expect.stringContaining('"b"'), undefined, expect.stringContaining('"a"')]);
      // The same id at another seq is a replay already held: not stored twice, and it leaves a gap.
      expect((await db.events.ingest('c1', [{ seq: 3, event: ev('a') }])).acknowledgedSeq).toBe(2);
      expect(await db.events.count('c1', {})).toBe(2);
      expect(await db.events.count('c1', { kind: ev('x').kind })).toBe(2);
    });

    it('takes concurrent batches of one conversation in any order', async () => {
      const batches = [0, 1, 2, 3].map((k) => Array.from({ length: 25 }, (_, i) => ({ seq: k * 25 + i + 1, event: ev(`e${k * 25 + i + 1}`) })));
      await Promise.all([...batches].reverse().map((items) => db.events.ingest('c1', items)));
      expect(await db.events.acknowledgedSeq('c1')).toBe(100);
      expect(await db.events.count('c1', {})).toBe(100);
    });

    it('keeps event ids per conversation (forks copy ids)', async () => {
      await db.events.ingest('c1', [{ seq: 1, event: ev('a') }]);
      expect((await db.events.ingest('c2', [{ seq: 1, event: ev('a') }])).acknowledgedSeq).toBe(1);
    });

    it('pages by seq in both directions and filters by kind and time', async () => {
      const items = Array.from({ length: 5 }, (_, i) => ({
        seq: i + 1,
        event: ev(`e${i + 1}`, i % 2 ? 'PauseEvent' : 'CondensationRequest', `2026-03-01T10:00:0${i}.000Z`),
      }));
      await db.events.ingest('c1', items);
      const ids = (p: { items: string[] }) => p.items.map((j) => (JSON.parse(j) as { id: string }).id);
      const p1 = await db.events.search('c1', { limit: 2 });
      expect(ids(p1)).toEqual(['e1', 'e2']);
      expect(p1.nextSeq).toBe(3);
      const p2 = await db.events.search('c1', { limit: 10, fromSeq: 3 });
      expect(ids(p2)).toEqual(['e3', 'e4', 'e5']);
      expect(p2.nextSeq).toBeNull();
      const desc = await db.events.search('c1', { limit: 2, descending: true });
      expect(ids(desc)).toEqual(['e5', 'e4']);
      expect(desc.nextSeq).toBe(3);
      expect(ids(await db.events.search('c1', { limit: 2, descending: true, fromSeq: 3 }))).toEqual(['e3', 'e2']);
      const kinds = await db.events.search('c1', { limit: 1, kind: 'PauseEvent' });
      expect(ids(kinds)).toEqual(['e2']);
      expect(kinds.nextSeq).toBe(4);
      expect(ids(await db.events.search('c1', { limit: 10, timestampGte: '2026-03-01T10:00:01.000Z', timestampLt: '2026-03-01T10:00:03.000Z' }))).toEqual(['e2', 'e3']);
      expect(await db.events.count('c1', { kind: 'PauseEvent' })).toBe(2);
      expect(await db.events.count('c1', { timestampGte: '2026-03-01T10:00:01.000Z', timestampLt: '2026-03-01T10:00:03.000Z' })).toBe(2);
      expect(await db.events.lastTimestamp('c1')).toBe('2026-03-01T10:00:04.000Z');
      expect(await db.events.lastTimestamp('none')).toBeUndefined();
      await db.events.ingest('c2', [{ seq: 1, event: ev('z', 'PauseEvent', '2026-03-01T09:00:00.000Z') }]);
      expect(await db.events.lastTimestamps(['c1', 'none', 'c2'])).toEqual(new Map([['c1', '2026-03-01T10:00:04.000Z'], ['c2', '2026-03-01T09:00:00.000Z']]));
      expect(await db.events.lastTimestamps([])).toEqual(new Map());
      expect(await db.events.getMany('c1', [])).toEqual([]);
    });

    it('reads events in the exclude_none form when asked (nulls left out but in free-form payloads), the stored form otherwise', async () => {
      const e = { ...ev('w1', 'ConversationStateUpdateEvent'), key: 'full_state', llm_response_id: null, nested: { a: null, b: 1 }, value: { title: null } } as unknown as Event;
      await db.events.ingest('c1', [{ seq: 1, event: e }]);
      const wire = { ...ev('w1', 'ConversationStateUpdateEvent'), key: 'full_state', nested: { b: 1 }, value: { title: null } };
      expect((await db.events.search('c1', { limit: 10 })).items.map((j) => JSON.parse(j))).toEqual([e]);
      expect((await db.events.search('c1', { limit: 10, wire: true })).items.map((j) => JSON.parse(j))).toEqual([wire]);
      expect((await db.events.search('c1', { limit: 10, wire: true, descending: true, kind: 'ConversationStateUpdateEvent' })).items.map((j) => JSON.parse(j))).toEqual([wire]);
      expect((await db.events.getMany('c1', ['w1', 'nope'], { wire: true })).map((j) => j && JSON.parse(j))).toEqual([wire, undefined]);
      expect((await db.events.getMany('c1', ['w1'])).map((j) => j && JSON.parse(j))).toEqual([e]);
    });

    it('queues messages in order and lets one deliverer claim each', async () => {
      const body = (n: number) => ({ role: 'user' as const, content: [{ type: 'text', text: `m${n}` }], run: true });
      const a = await db.pending.add('c1', body(1), '2026-03-01T10:00:00.000Z');
      const b = await db.pending.add('c1', body(2), '2026-03-01T10:00:01.000Z');
      expect(b).toBeGreaterThan(a);
      expect((await db.pending.list('c1')).map((m) => [m.id, m.conversationId, m.body, m.createdAt])).toEqual([
        [a, 'c1', body(1), '2026-03-01T10:00:00.000Z'],
        [b, 'c1', body(2), '2026-03-01T10:00:01.000Z'],
      ]);
      expect(await db.pending.count('c1')).toBe(2);
      expect(await db.pending.conversationIds()).toEqual(['c1']);
      const claims = await Promise.all([db.pending.claim(a, 60_000), db.pending.claim(a, 60_000), db.pending.claim(a, 60_000)]);
      expect(claims.filter(Boolean)).toHaveLength(1);
      await db.pending.release(a);
      expect(await db.pending.claim(a, 60_000)).toBe(true);
      await db.pending.remove(a);
      expect(await db.pending.claim(a, 60_000)).toBe(false);
      expect((await db.pending.list('c1')).map((m) => m.id)).toEqual([b]);
      await db.pending.purge('c1');
      expect(await db.pending.count('c1')).toBe(0);
    });

    it('purges everything of a conversation and remembers it was deleted', async () => {
      await db.events.ingest('c1', [{ seq: 1, event: ev('a') }]);
      await db.pending.add('c1', { role: 'user', content: [], run: true }, 'now');
      await db.setConversationMeta('c1', { title: 't', updatedAt: '2026-03-01T10:00:00.000Z' });
      expect(await db.getConversationMeta('c1')).toEqual({ title: 't', updatedAt: '2026-03-01T10:00:00.000Z' });
      await db.setConversationMeta('c2', { title: null, updatedAt: null });
      expect(await db.getConversationMetas(['c2', 'c1', 'c3'])).toEqual(
        new Map([
          ['c2', { title: null, updatedAt: null }],
          ['c1', { title: 't', updatedAt: '2026-03-01T10:00:00.000Z' }],
          ['c3', { title: null, updatedAt: null }],
        ]),
      );
      expect((await db.conversationIds()).sort()).toEqual(['c1', 'c2']);
      expect(await db.wasDeleted('c1')).toBe(false);
      await db.purgeConversation('c1');
      await db.purgeConversation('c1');
      expect(await db.conversationIds()).toEqual(['c2']);
      expect(await db.wasDeleted('c1')).toBe(true);
      expect(await db.events.acknowledgedSeq('c1')).toBe(0);
      expect(await db.events.count('c1', {})).toBe(0);
      expect(await db.getConversationMeta('c1')).toEqual({ title: null, updatedAt: null });
    });

    it('records model usage per call and sums it per user, conversation, sandbox and model; kept after a purge', async () => {
      const at = '2026-03-01T10:00:00.000Z';
      const call = (userId: string | null, sandboxId: string, conversationId: string | null, model: string, prompt: number, cost = 0) =>
        db.usage.record({ userId, sandboxId, conversationId, model, promptTokens: prompt, completionTokens: 2, cacheReadTokens: 1, reasoningTokens: 0, cost, at });
      await call('alice', 'sb-1', 'c1', 'gpt', 10, 0.5);
      await call('alice', 'sb-1', 'c1', 'gpt', 20, 0.25);
      await call('alice', 'sb-2', null, 'mini', 5);
      await call('bob', 'sb-3', 'c3', 'gpt', 1_000_000_000_000);
      await call(null, 'kubectl-sb', null, 'gpt', 1);
      const sum = (calls: number, prompt: number, cost: number) => ({ calls, prompt_tokens: prompt, completion_tokens: 2 * calls, cache_read_tokens: calls, reasoning_tokens: 0, cost });
      expect(await db.usage.total({ userId: 'alice' })).toEqual(sum(3, 35, 0.75));
      expect(await db.usage.total({ userId: 'nobody' })).toEqual(sum(0, 0, 0));
      expect(await db.usage.summary('conversation', { userId: 'alice' })).toEqual([{ key: 'c1', ...sum(2, 30, 0.75) }, { key: null, ...sum(1, 5, 0) }]);
      expect(await db.usage.summary('sandbox', { userId: 'alice' })).toEqual([{ key: 'sb-1', ...sum(2, 30, 0.75) }, { key: 'sb-2', ...sum(1, 5, 0) }]);
      expect(await db.usage.summary('model', { userId: 'alice' })).toEqual([{ key: 'gpt', ...sum(2, 30, 0.75) }, { key: 'mini', ...sum(1, 5, 0) }]);
      // Everyone's, most calls first, then by key with null last; big counts stay exact.
      expect(await db.usage.summary('user')).toEqual([{ key: 'alice', ...sum(3, 35, 0.75) }, { key: 'bob', ...sum(1, 1_000_000_000_000, 0) }, { key: null, ...sum(1, 1, 0) }]);
      await db.purgeConversation('c1');
      expect((await db.usage.total()).calls).toBe(5);
    });

    it('keeps tombstones per kind and name; the latest deletion of a reused name wins', async () => {
      expect(await db.deletedBy('Sandbox', 's1')).toBeUndefined();
      await db.recordDeletion('Sandbox', 's1', 'u1');
      await db.recordDeletion('Sandbox', 's1', 'u1');
      expect(await db.deletedBy('Sandbox', 's1')).toBe('u1');
      // Another kind under the same name is another resource.
      expect(await db.deletedBy('Conversation', 's1')).toBeUndefined();
      await db.recordDeletion('Conversation', 's1', 'u2');
      expect(await db.deletedBy('Conversation', 's1')).toBe('u2');
      await db.recordDeletion('Sandbox', 's1', 'u3');
      expect(await db.deletedBy('Sandbox', 's1')).toBe('u3');
      expect(await db.deletedBy('Conversation', 's1')).toBe('u2');
    });

    it('creates a user at the first login of an identity, updates it at the next, and maps the role only when told', async () => {
      const iss = 'https://idp.example.test/realms/r';
      const first = await db.logins.userForIdentity({ issuer: iss, subject: 'sub-a', name: 'Alice', email: 'a@example.test', admin: true });
      expect(first.disabled).toBe(false);
      expect((await db.getUserInfo(first.user.id))?.admin).toBe(true);
      // Same identity: same user, new name and role; another issuer with the same subject is another user.
      const again = await db.logins.userForIdentity({ issuer: iss, subject: 'sub-a', name: 'Alice B', email: null, admin: false });
      expect(again.user).toEqual({ id: first.user.id, name: 'Alice B' });
      expect((await db.getUserInfo(first.user.id))?.admin).toBe(false);
      await db.setUserAdmin(first.user.id, true);
      await db.logins.userForIdentity({ issuer: iss, subject: 'sub-a', name: 'Alice B', email: null, admin: undefined });
      expect((await db.getUserInfo(first.user.id))?.admin).toBe(true);
      const other = await db.logins.userForIdentity({ issuer: 'https://other.example.test', subject: 'sub-a', name: 'A2', email: null, admin: undefined });
      expect(other.user.id).not.toBe(first.user.id);
      expect((await db.getUserInfo(other.user.id))?.admin).toBe(false);
      await db.setUserDisabled(first.user.id, true);
      expect((await db.logins.userForIdentity({ issuer: iss, subject: 'sub-a', name: 'Alice B', email: null, admin: true })).disabled).toBe(true);
    });

    it('refuses a second user by login while single-user, but lets the one user log in again', async () => {
      await db.setSingleUser('no bubblewrap');
      const iss = 'https://idp.example.test';
      const one = await db.logins.userForIdentity({ issuer: iss, subject: 'a', name: 'A', email: null, admin: undefined });
      expect((await db.logins.userForIdentity({ issuer: iss, subject: 'a', name: 'A', email: null, admin: undefined })).user.id).toBe(one.user.id);
      await expect(db.logins.userForIdentity({ issuer: iss, subject: 'b', name: 'B', email: null, admin: undefined })).rejects.toBeInstanceOf(SingleUserInstallation);
      expect(await db.countUsers()).toBe(1);
    });

    it('keeps sessions until their absolute or idle expiry, or until their user is disabled or they are deleted', async () => {
      const u = await db.createUser('alice');
      const expiresAt = '2026-03-01T18:00:00.000Z';
      await db.logins.createSession('h1', { userId: u.id, csrfToken: 'c1', idToken: 'id-token', expiresAt });
      const idle = 3_600_000;
      expect(await db.logins.findSession('h1', idle)).toMatchObject({ user: u, csrfToken: 'c1', idToken: 'id-token', expiresAt });
      expect(await db.logins.findSession('h2', idle)).toBeUndefined();
      // Each use moves the idle expiry; past it the session is gone for good.
      clock.advance(50 * 60_000);
      expect(await db.logins.findSession('h1', idle)).toBeDefined();
      clock.advance(50 * 60_000);
      expect(await db.logins.findSession('h1', idle)).toBeDefined();
      clock.advance(idle);
      expect(await db.logins.findSession('h1', idle)).toBeUndefined();
      clock.advance(-idle);
      expect(await db.logins.findSession('h1', idle)).toBeUndefined();

      // Absolute expiry, however active.
      clock.set('2026-03-01T17:30:00Z');
      await db.logins.createSession('h3', { userId: u.id, csrfToken: 'c3', idToken: null, expiresAt });
      clock.set('2026-03-01T17:59:00Z');
      expect(await db.logins.findSession('h3', idle)).toBeDefined();
      clock.set('2026-03-01T18:00:00Z');
      expect(await db.logins.findSession('h3', idle)).toBeUndefined();

      await db.logins.createSession('h4', { userId: u.id, csrfToken: 'c4', idToken: null, expiresAt: '2026-03-02T00:00:00.000Z' });
      await db.setUserDisabled(u.id, true);
      expect(await db.logins.findSession('h4', idle)).toBeUndefined();
      await db.setUserDisabled(u.id, false);
      expect(await db.logins.deleteSession('h4')).toMatchObject({ csrfToken: 'c4' });
      expect(await db.logins.findSession('h4', idle)).toBeUndefined();
      expect(await db.logins.deleteSession('h4')).toBeUndefined();
    });

    it('hands a login request out once, and not after it expired', async () => {
      const r = { state: 's', codeVerifier: 'v', nonce: 'n', returnTo: '/#/c/1' };
      await db.logins.saveLoginRequest('l1', { ...r, expiresAt: '2026-03-01T10:10:00.000Z' });
      expect(await db.logins.takeLoginRequest('l1')).toEqual(r);
      expect(await db.logins.takeLoginRequest('l1')).toBeUndefined();
      await db.logins.saveLoginRequest('l2', { ...r, expiresAt: '2026-03-01T10:10:00.000Z' });
      clock.advance(11 * 60_000);
      expect(await db.logins.takeLoginRequest('l2')).toBeUndefined();
    });
  });
}
