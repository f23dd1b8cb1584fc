// openDatabase on a file written before plugin_skills existed: the column is added, old rows read
// back with pluginSkills null, and the new column takes updates; requests stored before the skill
// flags followed 1.58 get the flags that keep their skills.
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

  it('gives requests stored before 1.58 skill flags the flags that keep their skills, once', () => {
    dir = tempDir('agent-db-');
    const old = new Database(join(dir.path, 'agent-server.db'));
    old.exec(`CREATE TABLE conversations (id TEXT PRIMARY KEY, created_at TEXT NOT NULL, updated_at TEXT NOT NULL, execution_status TEXT NOT NULL,
      title TEXT, request TEXT NOT NULL, tags TEXT NOT NULL, stats TEXT, last_user_message_id TEXT, sealed_secrets TEXT, deleted_at TEXT,
      forked_from_conversation_id TEXT, forked_from_event_id TEXT, plugin_skills TEXT, head_event_id TEXT) STRICT`);
    const insert = old.prepare("INSERT INTO conversations (id, created_at, updated_at, execution_status, request, tags) VALUES (?, 't', 't', 'idle', ?, '{}')");
    const ws = { kind: 'LocalWorkspace', working_dir: '.' };
    insert.run('plain', JSON.stringify({ workspace: ws, agent: { llm: { model: 'm' } } }));
    insert.run('no-user', JSON.stringify({ workspace: ws, agent: { llm: { model: 'm' }, agent_context: { load_user_skills: false, skills: [{ name: 's', content: 'c' }] } } }));
    insert.run('no-agent', JSON.stringify({ workspace: ws }));
    insert.run('acp', JSON.stringify({ workspace: ws, agent: { kind: 'ACPAgent', acp_command: ['x'] } }));
    old.close();

    const db = openDatabase(dir.path);
    const store = new ConversationStore(db);
    expect(store.get('plain')?.request.agent).toEqual({ llm: { model: 'm' }, agent_context: { load_user_skills: true, load_project_skills: true } });
    expect(store.get('no-user')?.request.agent?.agent_context).toEqual({ load_user_skills: false, load_project_skills: true, skills: [{ name: 's', content: 'c' }] });
    expect(store.get('no-agent')?.request.agent).toEqual({ llm: {}, agent_context: { load_user_skills: true, load_project_skills: true } });
    expect(store.get('acp')?.request.agent).toEqual({ kind: 'ACPAgent', acp_command: ['x'] });
    // A request stored afterwards keeps 1.58's defaults: the migration ran once.
    db.prepare("UPDATE conversations SET request = ? WHERE id = 'plain'").run(JSON.stringify({ workspace: ws, agent: { llm: { model: 'm' } } }));
    db.close();
    const again = openDatabase(dir.path);
    expect(new ConversationStore(again).get('plain')?.request.agent).toEqual({ llm: { model: 'm' } });
    again.close();
  });
});
