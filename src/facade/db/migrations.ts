// The app database's schema, versioned with PRAGMA user_version: migration n brings the file from
// version n to n+1, inside one transaction. Never edit a released migration; append a new one.
import type Database from 'better-sqlite3';

const MIGRATIONS: readonly string[] = [
  // 0 → 1: users, API keys (hashes only), settings, the durable event log, queued messages.
  `
  CREATE TABLE users (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    created_at TEXT NOT NULL
  );
  CREATE TABLE api_keys (
    hash TEXT PRIMARY KEY,            -- sha256 hex of the key; the key itself is never stored
    prefix TEXT NOT NULL,             -- first characters, for display
    user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    created_at TEXT NOT NULL
  );
  CREATE INDEX api_keys_user ON api_keys (user_id);
  CREATE TABLE user_settings (
    user_id TEXT PRIMARY KEY REFERENCES users(id) ON DELETE CASCADE,
    sandbox_grouping_strategy TEXT NOT NULL DEFAULT 'NO_GROUPING'
  );
  CREATE TABLE events (
    conversation_id TEXT NOT NULL,
    seq INTEGER NOT NULL,
    event_id TEXT NOT NULL,
    kind TEXT NOT NULL,
    source TEXT NOT NULL,
    ts TEXT NOT NULL,                 -- UTC ISO with milliseconds: string order is time order
    json TEXT NOT NULL,
    PRIMARY KEY (conversation_id, seq)
  ) WITHOUT ROWID;
  -- Unique per conversation, not globally: a fork copies its source's events with their ids.
  CREATE UNIQUE INDEX events_event_id ON events (conversation_id, event_id);
  CREATE INDEX events_kind ON events (conversation_id, kind, seq);
  CREATE INDEX events_ts ON events (conversation_id, ts);
  CREATE TABLE event_cursors (
    conversation_id TEXT PRIMARY KEY,
    acked_seq INTEGER NOT NULL        -- highest seq held without a gap
  );
  CREATE TABLE conversation_meta (
    conversation_id TEXT PRIMARY KEY,
    title TEXT,
    updated_at TEXT
  );
  CREATE TABLE pending_messages (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    conversation_id TEXT NOT NULL,
    body TEXT NOT NULL,
    created_at TEXT NOT NULL
  );
  CREATE INDEX pending_messages_conversation ON pending_messages (conversation_id, id);
  `,
  // 1 → 2: conversations the app has forgotten, so late events for them can be told apart from
  // events for a conversation it never knew (the first are drained, the second refused).
  `
  CREATE TABLE deleted_conversations (
    conversation_id TEXT PRIMARY KEY,
    deleted_at TEXT NOT NULL
  );
  `,
  // 2 → 3: a delivery claim (epoch ms) on queued messages, the same contract as the PostgreSQL
  // store's; the SQLite store voids claims when it opens (one process owns the file).
  `
  ALTER TABLE pending_messages ADD COLUMN claimed_until INTEGER;
  `,
  // 3 → 4: what a user deleted through the API (tombstones), so a repeated DELETE answers 200 to
  // that user while everyone else still gets 404. A few bytes per deletion, kept like the above.
  `
  CREATE TABLE deleted_resources (
    kind TEXT NOT NULL,               -- Conversation or Sandbox
    name TEXT NOT NULL,
    owner_id TEXT NOT NULL,
    deleted_at TEXT NOT NULL,
    PRIMARY KEY (kind, name)
  ) WITHOUT ROWID;
  `,
  // 4 → 5: the user's login on a Git host (user configuration repository, spec part 2).
  `
  ALTER TABLE user_settings ADD COLUMN git_login TEXT;
  ALTER TABLE user_settings ADD COLUMN git_login_provider TEXT NOT NULL DEFAULT 'github';
  `,
  // 5 → 6: the model gateway's usage record, one row per forwarded call (kept after deletions).
  `
  CREATE TABLE model_usage (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    user_id TEXT,
    sandbox_id TEXT NOT NULL,
    conversation_id TEXT,
    model TEXT NOT NULL,
    prompt_tokens INTEGER NOT NULL,
    completion_tokens INTEGER NOT NULL,
    cache_read_tokens INTEGER NOT NULL,
    reasoning_tokens INTEGER NOT NULL,
    cost REAL NOT NULL,
    created_at TEXT NOT NULL
  );
  CREATE INDEX model_usage_user ON model_usage (user_id);
  `,
  // 6 → 7: facts about the installation itself; 'single_user' (its value the reason) while
  // `agentyard up` runs sandboxes without isolation, when a second user must be refused.
  `
  CREATE TABLE installation (
    key TEXT PRIMARY KEY,
    value TEXT NOT NULL
  );
  `,
  // 7 → 8: revoked keys (kept, so a revoked key cannot come back), disabled users, administrators
  // (the built-in admin of `agentyard up` and `agentyard api` is one).
  `
  ALTER TABLE api_keys ADD COLUMN revoked_at TEXT;
  ALTER TABLE users ADD COLUMN disabled_at TEXT;
  ALTER TABLE users ADD COLUMN is_admin INTEGER NOT NULL DEFAULT 0;
  UPDATE users SET is_admin = 1 WHERE id = 'admin';
  `,
  // 8 → 9: OpenID Connect login (README, "Login"): a user's identity at the provider (issuer +
  // subject), browser sessions (only a hash of the cookie's value is kept) and the login requests
  // in flight between the redirect to the provider and its callback (any replica may get it).
  `
  ALTER TABLE users ADD COLUMN oidc_issuer TEXT;
  ALTER TABLE users ADD COLUMN oidc_subject TEXT;
  ALTER TABLE users ADD COLUMN email TEXT;
  CREATE UNIQUE INDEX users_oidc_identity ON users (oidc_issuer, oidc_subject);
  CREATE TABLE sessions (
    id_hash TEXT PRIMARY KEY,         -- sha256 hex of the cookie's value
    user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    csrf_token TEXT NOT NULL,
    id_token TEXT,                    -- the provider's ID token, the hint of RP-initiated logout
    created_at TEXT NOT NULL,
    last_seen_at TEXT NOT NULL,
    expires_at TEXT NOT NULL          -- absolute expiry; the idle one is last_seen_at + the idle timeout
  );
  CREATE INDEX sessions_user ON sessions (user_id);
  CREATE TABLE login_requests (
    id_hash TEXT PRIMARY KEY,         -- sha256 hex of the login cookie's value (binds the callback to the browser)
    state TEXT NOT NULL,
    code_verifier TEXT NOT NULL,
    nonce TEXT NOT NULL,
    return_to TEXT NOT NULL,
    expires_at TEXT NOT NULL
  );
  `,
  // 9 → 10: events per conversation and kind, kept by ingest, so a count without a time range reads
  // a few rows instead of scanning a transcript of 100,000 events (issue #16).
  `
  CREATE TABLE event_counts (
    conversation_id TEXT NOT NULL,
    kind TEXT NOT NULL,
    n INTEGER NOT NULL,
    PRIMARY KEY (conversation_id, kind)
  ) WITHOUT ROWID;
  INSERT INTO event_counts (conversation_id, kind, n) SELECT conversation_id, kind, COUNT(*) FROM events GROUP BY conversation_id, kind;
  `,
  // 10 → 11: each event's \`exclude_none\` form, the one searches and batch reads send, made once at
  // ingest: parsing and re-serialising every row of every page read was most of a search's time
  // (issue #16). Rows stored before have none and are converted when read.
  `
  ALTER TABLE events ADD COLUMN wire TEXT;
  `,
];

export const SCHEMA_VERSION = MIGRATIONS.length;

export function migrate(db: Database.Database): void {
  const current = db.pragma('user_version', { simple: true }) as number;
  if (current > SCHEMA_VERSION) {
    throw new Error(`app database is at schema version ${current}, newer than this build understands (${SCHEMA_VERSION})`);
  }
  for (let v = current; v < SCHEMA_VERSION; v++) {
    db.transaction(() => {
      db.exec(MIGRATIONS[v]!);
      db.pragma(`user_version = ${v + 1}`);
    }).immediate();
  }
}
