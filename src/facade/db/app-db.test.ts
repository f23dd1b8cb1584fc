import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Event } from '../../api/events/index.ts';
import { AppDb } from './app-db.ts';
import { SCHEMA_VERSION } from './migrations.ts';

const ev = (id: string, kind = 'PauseEvent', ts = '2026-03-01T10:00:00.000Z') => ({ id, timestamp: ts, source: 'user', kind }) as unknown as Event;

describe('AppDb', () => {
  let dir: string;
  let db: AppDb;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'appdb-'));
    db = new AppDb(join(dir, 'app.db'));
  });
  afterEach(() => {
    db.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('keeps only a hash of API keys and finds users by key', () => {
    const u = db.createUser('alice');
    const key = db.createApiKey(u.id);
    expect(key).toMatch(/^ay_/);
    expect(db.findUserByApiKey(key)).toEqual(u);
    expect(db.findUserByApiKey(key + 'x')).toBeUndefined();
    expect(db.findUserByApiKey('')).toBeUndefined();
    expect(db.listApiKeys(u.id)).toEqual([{ prefix: key.slice(0, 9), created_at: expect.any(String) }]);
    db.close();
    const raw = readFileSync(join(dir, 'app.db')).toString('latin1') + readFileSync(join(dir, 'app.db-wal'), { flag: 'a+' }).toString('latin1');
    expect(raw).not.toContain(key);
    db = new AppDb(join(dir, 'app.db'));
    expect(db.findUserByApiKey(key)).toEqual(u);
  });

  it('migrates once and records the schema version', () => {
    db.close();
    db = new AppDb(join(dir, 'app.db'));
    expect(db.db.pragma('user_version', { simple: true })).toBe(SCHEMA_VERSION);
  });

  it('refuses a database from a newer build', () => {
    db.close();
    const raw = new Database(join(dir, 'app.db'));
    raw.pragma(`user_version = ${SCHEMA_VERSION + 1}`);
    raw.close();
    expect(() => new AppDb(join(dir, 'app.db'))).toThrow(/newer than this build/);
    db = new AppDb(':memory:');
  });

  it('stores settings per user with the NO_GROUPING default', () => {
    const u = db.createUser('alice');
    expect(db.getSettings(u.id)).toEqual({ sandbox_grouping_strategy: 'NO_GROUPING' });
    db.setSettings(u.id, { sandbox_grouping_strategy: 'GROUP_BY_NEWEST' });
    expect(db.getSettings(u.id).sandbox_grouping_strategy).toBe('GROUP_BY_NEWEST');
  });
});

describe('EventLog', () => {
  let db: AppDb;
  beforeEach(() => (db = new AppDb(':memory:')));
  afterEach(() => db.close());

  it('acknowledges the gap-free prefix and stores events past a gap', () => {
    expect(db.events.ingest('c1', [{ seq: 1, event: ev('a') }, { seq: 3, event: ev('c') }]).acknowledgedSeq).toBe(1);
    expect(db.events.count('c1', {})).toBe(2);
    expect(db.events.ingest('c1', [{ seq: 2, event: ev('b') }]).acknowledgedSeq).toBe(3);
  });

  it('is idempotent by seq and by event id', () => {
    db.events.ingest('c1', [{ seq: 1, event: ev('a') }, { seq: 2, event: ev('b') }]);
    const again = db.events.ingest('c1', [{ seq: 1, event: ev('a') }, { seq: 2, event: ev('other') }]);
    expect(again).toEqual({ acknowledgedSeq: 2, mismatched: [2] });
    expect(db.events.count('c1', {})).toBe(2);
    expect(db.events.getMany('c1', ['b', 'other', 'a'])).toEqual([expect.stringContaining('"b"'), undefined, expect.stringContaining('"a"')]);
  });

  it('keeps event ids per conversation (forks copy ids)', () => {
    db.events.ingest('c1', [{ seq: 1, event: ev('a') }]);
    expect(db.events.ingest('c2', [{ seq: 1, event: ev('a') }]).acknowledgedSeq).toBe(1);
  });

  it('pages by seq in both directions and filters by kind and time', () => {
    const items = Array.from({ length: 5 }, (_, i) => ({
      seq: i + 1,
      event: ev(`e${i + 1}`, i % 2 ? 'PauseEvent' : 'CondensationRequest', `2026-03-01T10:00:0${i}.000Z`),
    }));
    db.events.ingest('c1', items);
    const p1 = db.events.search('c1', { limit: 2 });
    expect(p1.items.map((j) => JSON.parse(j).id)).toEqual(['e1', 'e2']);
    expect(p1.nextSeq).toBe(3);
    const p2 = db.events.search('c1', { limit: 10, fromSeq: 3 });
    expect(p2.items).toHaveLength(3);
    expect(p2.nextSeq).toBeNull();
    const desc = db.events.search('c1', { limit: 2, descending: true });
    expect(desc.items.map((j) => JSON.parse(j).id)).toEqual(['e5', 'e4']);
    expect(db.events.count('c1', { kind: 'PauseEvent' })).toBe(2);
    expect(db.events.count('c1', { timestampGte: '2026-03-01T10:00:01.000Z', timestampLt: '2026-03-01T10:00:03.000Z' })).toBe(2);
    expect(db.events.lastTimestamp('c1')).toBe('2026-03-01T10:00:04.000Z');
  });

  it('purges everything of a conversation', () => {
    db.events.ingest('c1', [{ seq: 1, event: ev('a') }]);
    db.pending.add('c1', { role: 'user', content: [], run: true }, 'now');
    db.setConversationMeta('c1', { title: 't', updatedAt: null });
    expect(db.conversationIds()).toEqual(['c1']);
    db.purgeConversation('c1');
    expect(db.conversationIds()).toEqual([]);
    expect(db.events.acknowledgedSeq('c1')).toBe(0);
  });
});
