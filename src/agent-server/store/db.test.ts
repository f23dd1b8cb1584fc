// openDatabase on a file written before plugin_skills existed: the column is added, old rows read
// back with pluginSkills null, and the new column takes updates.
import Database from 'better-sqlite3';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { tempDir } from '../test-support.ts';
import { ConversationStore } from './conversation-store.ts';
import { openDatabase } from './db.ts';

let dir: ReturnType<typeof tempDir> | undefined;
afterEach(() => dir?.remove());

describe('agent server database', () => {
  it('adds plugin_skills to a conversations table created without it', () => {
    dir = tempDir('agent-db-');
    const old = new Database(join(dir.path, 'agent-server.db'));
    old.exec(`CREATE TABLE conversations (id TEXT PRIMARY KEY, created_at TEXT NOT NULL, updated_at TEXT NOT NULL, execution_status TEXT NOT NULL,
      title TEXT, request TEXT NOT NULL, tags TEXT NOT NULL, stats TEXT, last_user_message_id TEXT, sealed_secrets TEXT, deleted_at TEXT,
      forked_from_conversation_id TEXT, forked_from_event_id TEXT) STRICT`);
    old.prepare("INSERT INTO conversations (id, created_at, updated_at, execution_status, request, tags) VALUES ('c1', 't', 't', 'idle', '{}', '{}')").run();
    old.close();

    const db = openDatabase(dir.path);
    const store = new ConversationStore(db);
    expect(store.get('c1')).toMatchObject({ id: 'c1', pluginSkills: null });
    store.update('c1', { pluginSkills: [{ name: 'release-notes' }] }, 't2');
    expect(store.get('c1')?.pluginSkills).toEqual([{ name: 'release-notes' }]);
    db.close();
    // Opening again finds the column there already.
    const again = openDatabase(dir.path);
    expect(new ConversationStore(again).get('c1')?.pluginSkills).toEqual([{ name: 'release-notes' }]);
    again.close();
  });
});
