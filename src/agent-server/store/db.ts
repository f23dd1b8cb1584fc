// The agent server's one SQLite file: conversations, their events (with a per-conversation
// sequence number) and the event-sink cursor. Everything a restart needs lives here.
import Database from 'better-sqlite3';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export type Db = Database.Database;

const DDL = `
CREATE TABLE IF NOT EXISTS conversations (
  id               TEXT PRIMARY KEY,
  created_at       TEXT NOT NULL,
  updated_at       TEXT NOT NULL,
  execution_status TEXT NOT NULL,
  title            TEXT,
  -- StartConversationRequest with secret values and the LLM api_key removed.
  request          TEXT NOT NULL,
  tags             TEXT NOT NULL,
  stats            TEXT,
  last_user_message_id TEXT,
  -- Secret values and the LLM api_key, AES-256-GCM sealed; NULL when no secret key is configured.
  sealed_secrets   TEXT,
  -- Set by DELETE; the row and its events stay until the event sink has acknowledged them.
  deleted_at       TEXT,
  forked_from_conversation_id TEXT,
  forked_from_event_id        TEXT,
  -- JSON array of the SkillInfo objects the conversation's plugins brought; NULL before they loaded.
  plugin_skills    TEXT,
  -- HEAD moved by navigate (OpenHands leaf_event_id): an event id, '' for the empty tree; NULL: the last event.
  head_event_id    TEXT
) STRICT;

CREATE TABLE IF NOT EXISTS events (
  conversation_id TEXT NOT NULL,
  seq             INTEGER NOT NULL,
  id              TEXT NOT NULL,
  kind            TEXT NOT NULL,
  source          TEXT NOT NULL,
  -- The event timestamp normalised to UTC ISO with milliseconds, so string order is time order.
  ts              TEXT NOT NULL,
  json            TEXT NOT NULL,
  PRIMARY KEY (conversation_id, seq)
) STRICT, WITHOUT ROWID;
-- Ids are unique per conversation (a fork keeps the source's event ids).
CREATE UNIQUE INDEX IF NOT EXISTS events_by_id ON events (conversation_id, id);

CREATE TABLE IF NOT EXISTS sink_cursor (
  conversation_id TEXT PRIMARY KEY,
  acked_seq       INTEGER NOT NULL
) STRICT;

-- Named secrets of /api/settings/secrets; the value AES-256-GCM sealed (never stored without a secret key).
CREATE TABLE IF NOT EXISTS settings_secrets (
  name        TEXT PRIMARY KEY,
  description TEXT,
  sealed      TEXT NOT NULL,
  updated_at  TEXT NOT NULL
) STRICT;

-- LLM provider connections (/api/llm/provider-connections); the API key AES-256-GCM sealed, NULL
-- without a secret key (then it is held in memory only).
CREATE TABLE IF NOT EXISTS provider_connections (
  id            TEXT PRIMARY KEY,
  display_name  TEXT NOT NULL,
  provider      TEXT NOT NULL,
  base_url      TEXT,
  sealed_api_key TEXT,
  created_at    INTEGER NOT NULL,
  updated_at    INTEGER NOT NULL
) STRICT;

-- Small JSON documents the agent server keeps for its clients (the GUI's saved workspaces).
CREATE TABLE IF NOT EXISTS settings_documents (
  name TEXT PRIMARY KEY,
  json TEXT NOT NULL
) STRICT;
`;

/** Opens (creating if needed) `<dataDir>/agent-server.db`. */
export function openDatabase(dataDir: string): Db {
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  // The data dir defaults to <workspace>/.agentyard: keep it out of the user's git history.
  writeFileSync(join(dataDir, '.gitignore'), '*\n');
  const db = new Database(join(dataDir, 'agent-server.db'));
  // WAL: readers (search, replay) don't block the appending writer. NORMAL sync survives a process
  // crash; only a power loss can lose the last transactions.
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.pragma('busy_timeout = 5000');
  db.exec(DDL);
  migrate(db);
  migrateData(db);
  return db;
}

/**
 * Data changes, versioned with PRAGMA user_version. 1: agent_context.load_user_skills and
 * load_project_skills default to false since the agent server follows OpenHands 1.58; requests
 * stored before were started when user skills loaded unless load_user_skills was false and project
 * skills always, so they get the flags that keep their skills across the upgrade.
 */
function migrateData(db: Db): void {
  if ((db.pragma('user_version', { simple: true }) as number) >= 1) return;
  db.transaction(() => {
    const rows = db.prepare('SELECT id, request FROM conversations').all() as { id: string; request: string }[];
    const update = db.prepare('UPDATE conversations SET request = ? WHERE id = ?');
    for (const row of rows) {
      type StoredAgent = { kind?: string; llm?: unknown; agent_context?: Record<string, unknown> | null };
      const req = JSON.parse(row.request) as { agent?: StoredAgent };
      // An ACP agent's skills are its ACP server's business.
      if (req.agent?.kind === 'ACPAgent') continue;
      const agent: StoredAgent = req.agent ?? { llm: {} };
      const ctx = agent.agent_context ?? {};
      agent.agent_context = { ...ctx, load_user_skills: ctx['load_user_skills'] !== false, load_project_skills: ctx['load_project_skills'] ?? true };
      update.run(JSON.stringify({ ...req, agent }), row.id);
    }
    db.pragma('user_version = 1');
  })();
}

/** Columns added after the first release, for files created before them. */
function migrate(db: Db): void {
  const columns = new Set((db.prepare('PRAGMA table_info(conversations)').all() as { name: string }[]).map((c) => c.name));
  if (!columns.has('plugin_skills')) db.exec('ALTER TABLE conversations ADD COLUMN plugin_skills TEXT');
  if (!columns.has('head_event_id')) db.exec('ALTER TABLE conversations ADD COLUMN head_event_id TEXT');
}
