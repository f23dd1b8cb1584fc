// Bash event scopes: the server's own commands and each conversation's never see each other's
// events; a file written before scopes existed keeps its events as the server's own.
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { BashEventStore } from './store.ts';

const command = (id: string, cmd: string) => ({ id, timestamp: '2026-01-01T00:00:00.000Z', command: cmd, cwd: null, timeout: 300, kind: 'BashCommand' as const });

describe('BashEventStore scopes', () => {
  it('keeps scopes apart: get, search, replay, clear', () => {
    const db = new Database(':memory:');
    const server = new BashEventStore(db);
    const conv = new BashEventStore(db, 'c1');
    server.append(command('a', 'server'));
    conv.append(command('b', 'conversation'));
    expect(server.get('b')).toBeUndefined();
    expect(conv.get('b')?.id).toBe('b');
    expect(server.search({ descending: false, limit: 10 }).items.map((e) => e.id)).toEqual(['a']);
    expect(conv.since(0, 10).map((e) => e.event.id)).toEqual(['b']);
    expect(conv.clear()).toBe(1);
    expect(server.get('a')?.id).toBe('a');
  });

  it("adopts a file written before scopes: its events are the server's own", () => {
    const db = new Database(':memory:');
    db.exec('CREATE TABLE bash_events (seq INTEGER PRIMARY KEY AUTOINCREMENT, id TEXT NOT NULL UNIQUE, kind TEXT NOT NULL, command_id TEXT, ord INTEGER, ts TEXT NOT NULL, json TEXT NOT NULL) STRICT');
    db.prepare('INSERT INTO bash_events (id, kind, command_id, ord, ts, json) VALUES (?, ?, ?, ?, ?, ?)').run('old', 'BashCommand', 'old', null, '2026-01-01T00:00:00.000Z', JSON.stringify(command('old', 'x')));
    expect(new BashEventStore(db).get('old')?.id).toBe('old');
    expect(new BashEventStore(db, 'c1').get('old')).toBeUndefined();
  });
});
