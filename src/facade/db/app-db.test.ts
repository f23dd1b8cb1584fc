import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SqliteAppStore } from './app-db.ts';
import { displayPrefix } from './keys.ts';
import { SCHEMA_VERSION } from './migrations.ts';

// SQLite-only behaviour; what both stores share is in app-store.test.ts.
/** Takes a file at the current version back to version 8 (before OpenID Connect login). */
/** Back to before events kept their exclude_none form (version 10). */
const UNDO_WIRE = 'ALTER TABLE events DROP COLUMN wire;';
/** Back to before event counts were kept (version 9), from version 10. */
const UNDO_COUNTS = 'DROP TABLE event_counts;';
const UNDO_LOGIN = 'DROP INDEX users_oidc_identity; ALTER TABLE users DROP COLUMN oidc_issuer; ALTER TABLE users DROP COLUMN oidc_subject; ALTER TABLE users DROP COLUMN email; DROP TABLE sessions; DROP TABLE login_requests;';

describe('SqliteAppStore', () => {
  let dir: string;
  let db: SqliteAppStore;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'appdb-'));
    db = new SqliteAppStore(join(dir, 'app.db'));
  });
  afterEach(async () => {
    await db.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('keeps only a hash of API keys on disk', async () => {
    const u = await db.createUser('alice');
    const key = await db.createApiKey(u.id);
    await db.close();
    const raw = readFileSync(join(dir, 'app.db')).toString('latin1') + readFileSync(join(dir, 'app.db-wal'), { flag: 'a+' }).toString('latin1');
    expect(raw).not.toContain(key);
    db = new SqliteAppStore(join(dir, 'app.db'));
    expect(await db.findUserByApiKey(key)).toEqual(u);
  });

  // Another connection's commits are looked for once per event-loop turn.
  const nextTurn = () => new Promise((resolve) => setImmediate(resolve));

  it('keeps key lookups only while they hold: revocation and disabling here refuse at once, by another connection from the next turn', async () => {
    const u = await db.createUser('alice');
    const [k1, k2, k3] = [await db.createApiKey(u.id), await db.createApiKey(u.id), await db.createApiKey(u.id)];
    for (const k of [k1, k2, k3]) expect(await db.findUserByApiKey(k)).toEqual(u); // all kept now
    const found = (await db.findUserByApiKey(k1))!;
    found.name = 'mallory'; // what a caller does with its copy stays with it
    expect(await db.findUserByApiKey(k1)).toEqual(u);

    expect(await db.revokeApiKey(u.id, displayPrefix(k1))).toBe('revoked');
    expect(await db.findUserByApiKey(k1)).toBeUndefined();
    expect(await db.findUserByApiKey(k2)).toEqual(u);

    await db.setUserDisabled(u.id, true);
    expect(await db.findUserByApiKey(k2)).toBeUndefined();
    await db.setUserDisabled(u.id, false);
    expect(await db.findUserByApiKey(k2)).toEqual(u);

    // The `agentyard users` command works on the same file through its own connection.
    const other = new SqliteAppStore(join(dir, 'app.db'));
    try {
      expect(await other.revokeApiKey(u.id, displayPrefix(k2))).toBe('revoked');
      await nextTurn();
      expect(await db.findUserByApiKey(k2)).toBeUndefined();
      expect(await db.findUserByApiKey(k3)).toEqual(u);
      await other.setUserDisabled(u.id, true);
      await nextTurn();
      expect(await db.findUserByApiKey(k3)).toBeUndefined();
    } finally {
      await other.close();
    }
  });

  it('keeps conversation metas only while they hold: writes and purges here show at once, any commit by another connection from the next turn', async () => {
    const metas = async (...ids: string[]) => Object.fromEntries(await db.getConversationMetas(ids));
    const none = { title: null, updatedAt: null };
    expect(await metas('a', 'b')).toEqual({ a: none, b: none }); // absences kept too
    await db.setConversationMeta('a', { title: 'one', updatedAt: '2026-01-01T00:00:00.000Z' });
    const got = await metas('b', 'a');
    expect(Object.keys(got)).toEqual(['b', 'a']);
    expect(got).toEqual({ a: { title: 'one', updatedAt: '2026-01-01T00:00:00.000Z' }, b: none });
    got['a']!.title = 'changed by a caller';
    expect((await metas('a'))['a']!.title).toBe('one');
    await db.purgeConversation('a');
    expect(await metas('a')).toEqual({ a: none });
    const other = new SqliteAppStore(join(dir, 'app.db'));
    try {
      await other.setConversationMeta('b', { title: 'two', updatedAt: null });
      await nextTurn();
      expect(await metas('a', 'b')).toEqual({ a: none, b: { title: 'two', updatedAt: null } });
    } finally {
      await other.close();
    }
  });

  it('keeps newest event timestamps only while they hold: ingests and purges here show at once, another connection from the next turn', async () => {
    const ev = (id: string, timestamp: string) => ({ id, timestamp, source: 'agent', kind: 'PauseEvent' }) as never;
    const newest = async (...ids: string[]) => Object.fromEntries(await db.events.lastTimestamps(ids));
    expect(await newest('a', 'b')).toEqual({}); // absences kept too
    await db.events.ingest('a', [{ seq: 1, event: ev('e1', '2026-01-01T00:00:01.000Z') }]);
    expect(await newest('a', 'b')).toEqual({ a: '2026-01-01T00:00:01.000Z' });
    // An older event arriving late does not move the newest; a newer one does.
    await db.events.ingest('a', [{ seq: 2, event: ev('e0', '2026-01-01T00:00:00.000Z') }]);
    expect(await db.events.lastTimestamp('a')).toBe('2026-01-01T00:00:01.000Z');
    await db.events.ingest('a', [{ seq: 3, event: ev('e3', '2026-01-01T00:00:03.000Z') }]);
    expect(await newest('b', 'a')).toEqual({ a: '2026-01-01T00:00:03.000Z' });
    await db.purgeConversation('a');
    expect(await newest('a')).toEqual({});
    const other = new SqliteAppStore(join(dir, 'app.db'));
    try {
      await other.events.ingest('b', [{ seq: 1, event: ev('e1', '2026-01-02T00:00:00.000Z') }]);
      await nextTurn();
      expect(await newest('a', 'b')).toEqual({ b: '2026-01-02T00:00:00.000Z' });
      await other.purgeConversation('b');
      await nextTurn();
      expect(await db.events.lastTimestamp('b')).toBeUndefined();
    } finally {
      await other.close();
    }
  });

  it('migrates once and records the schema version', async () => {
    await db.close();
    db = new SqliteAppStore(join(dir, 'app.db'));
    expect(db.db.pragma('user_version', { simple: true })).toBe(SCHEMA_VERSION);
  });

  it('upgrades events stored before counts were kept (version 9): counts by kind and in all are those of the stored events', async () => {
    const ev = (id: string, kind: string) => ({ id, timestamp: '2026-03-01T10:00:00.000Z', source: 'agent', kind }) as never;
    await db.events.ingest('c1', [{ seq: 1, event: ev('a', 'PauseEvent') }, { seq: 2, event: ev('b', 'MessageEvent') }, { seq: 3, event: ev('c', 'PauseEvent') }]);
    await db.events.ingest('c2', [{ seq: 1, event: ev('a', 'PauseEvent') }]);
    await db.close();
    const raw = new Database(join(dir, 'app.db'));
    raw.exec(UNDO_WIRE + UNDO_COUNTS);
    raw.pragma('user_version = 9');
    raw.close();
    db = new SqliteAppStore(join(dir, 'app.db'));
    expect([await db.events.count('c1', {}), await db.events.count('c1', { kind: 'PauseEvent' }), await db.events.count('c2', {})]).toEqual([3, 2, 1]);
    await db.events.ingest('c1', [{ seq: 4, event: ev('d', 'PauseEvent') }]);
    expect(await db.events.count('c1', { kind: 'PauseEvent' })).toBe(3);
  });

  it('upgrades events stored before their exclude_none form was kept (version 10): read in that form all the same', async () => {
    const ev = { id: 'a', timestamp: '2026-03-01T10:00:00.000Z', source: 'agent', kind: 'MessageEvent', llm_response_id: null, value: { title: null } } as never;
    await db.events.ingest('c1', [{ seq: 1, event: ev }]);
    const wire = (await db.events.search('c1', { limit: 10, wire: true })).items;
    await db.close();
    const raw = new Database(join(dir, 'app.db'));
    raw.exec(UNDO_WIRE);
    raw.pragma('user_version = 10');
    raw.close();
    db = new SqliteAppStore(join(dir, 'app.db'));
    expect(db.db.prepare('SELECT wire FROM events').pluck().all()).toEqual([null]);
    expect((await db.events.search('c1', { limit: 10, wire: true })).items).toEqual(wire);
    expect(JSON.parse(wire[0]!)).toEqual({ id: 'a', timestamp: '2026-03-01T10:00:00.000Z', source: 'agent', kind: 'MessageEvent', value: { title: null } });
    expect(await db.events.getMany('c1', ['a'], { wire: true })).toEqual(wire);
  });

  it('upgrades settings saved before Git logins existed (version 4) without losing them', async () => {
    const u = await db.createUser('early');
    await db.setSettings(u.id, { sandbox_grouping_strategy: 'ADD_TO_ANY' });
    await db.close();
    const raw = new Database(join(dir, 'app.db'));
    raw.exec(UNDO_WIRE + UNDO_COUNTS);
    raw.exec(UNDO_LOGIN);
    raw.exec('ALTER TABLE user_settings DROP COLUMN git_login; ALTER TABLE user_settings DROP COLUMN git_login_provider; DROP TABLE model_usage; DROP TABLE installation;');
    raw.exec('ALTER TABLE api_keys DROP COLUMN revoked_at; ALTER TABLE users DROP COLUMN disabled_at; ALTER TABLE users DROP COLUMN is_admin;');
    raw.pragma('user_version = 4');
    raw.close();
    db = new SqliteAppStore(join(dir, 'app.db'));
    expect(await db.getSettings(u.id)).toEqual({ sandbox_grouping_strategy: 'ADD_TO_ANY', git_login: null, git_login_provider: 'github' });
  });

  it('upgrades keys and users from before revocation (version 7): keys keep working, the built-in admin is an administrator', async () => {
    const admin = await db.createUser('admin', 'admin');
    const u = await db.createUser('early');
    const key = await db.createApiKey(u.id);
    await db.close();
    const raw = new Database(join(dir, 'app.db'));
    raw.exec(UNDO_WIRE + UNDO_COUNTS);
    raw.exec(UNDO_LOGIN);
    raw.exec('ALTER TABLE api_keys DROP COLUMN revoked_at; ALTER TABLE users DROP COLUMN disabled_at; ALTER TABLE users DROP COLUMN is_admin;');
    raw.pragma('user_version = 7');
    raw.close();
    db = new SqliteAppStore(join(dir, 'app.db'));
    expect(await db.findUserByApiKey(key)).toEqual(u);
    expect((await db.getUserInfo(admin.id))?.admin).toBe(true);
    expect((await db.getUserInfo(u.id))?.admin).toBe(false);
  });

  it('upgrades users from before OpenID Connect login (version 8): they keep their keys and can log in as a new identity', async () => {
    const u = await db.createUser('early');
    const key = await db.createApiKey(u.id);
    await db.close();
    const raw = new Database(join(dir, 'app.db'));
    raw.exec(UNDO_WIRE + UNDO_COUNTS);
    raw.exec(UNDO_LOGIN);
    raw.pragma('user_version = 8');
    raw.close();
    db = new SqliteAppStore(join(dir, 'app.db'));
    expect(await db.findUserByApiKey(key)).toEqual(u);
    const login = await db.logins.userForIdentity({ issuer: 'https://idp.example.test', subject: 's', name: 'New', email: null, admin: undefined });
    expect(login.user.id).not.toBe(u.id);
  });

  it('refuses a database from a newer build', async () => {
    await db.close();
    const raw = new Database(join(dir, 'app.db'));
    raw.pragma(`user_version = ${SCHEMA_VERSION + 1}`);
    raw.close();
    expect(() => new SqliteAppStore(join(dir, 'app.db'))).toThrow(/newer than this build/);
    db = new SqliteAppStore(':memory:');
  });

  it('voids delivery claims left by a previous run of the process that owns the file', async () => {
    const id = await db.pending.add('c1', { role: 'user', content: [], run: true }, 'now');
    expect(await db.pending.claim(id, 60_000)).toBe(true);
    await db.close();
    db = new SqliteAppStore(join(dir, 'app.db'));
    expect(await db.pending.claim(id, 60_000)).toBe(true);
  });

  it('syncs the WAL at checkpoints only (synchronous NORMAL), and a commit survives its process being killed', async () => {
    expect(db.db.pragma('journal_mode', { simple: true })).toBe('wal');
    expect(db.db.pragma('synchronous', { simple: true })).toBe(1); // NORMAL (FULL is 2)
    await db.close();
    // Another process commits, says so, and is killed (SIGKILL: no close, no checkpoint).
    const module = JSON.stringify(join(import.meta.dirname, 'app-db.ts'));
    const script = `import { SqliteAppStore } from ${module}; const s = new SqliteAppStore(${JSON.stringify(join(dir, 'app.db'))}); const u = await s.createUser('carol'); console.log(u.id); setInterval(() => {}, 1000);`;
    const child = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
    const id = await new Promise<string>((resolve, reject) => {
      child.stdout.once('data', (d: Buffer) => resolve(d.toString().trim()));
      child.once('exit', (code) => reject(new Error(`the writer exited (${code}) before it committed`)));
    });
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGKILL');
    await exited;
    db = new SqliteAppStore(join(dir, 'app.db'));
    expect(await db.getUser(id)).toMatchObject({ id, name: 'carol' });
  });
});
