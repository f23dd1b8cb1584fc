// The PostgreSQL app store's schema, versioned in a one-row schema_version table. Migration n brings
// the database from version n to n+1 in one transaction. Several API replicas may start at once, so
// the whole run holds a session advisory lock: the first migrates, the others wait and find it done.
// Text columns that are compared or ordered use the "C" collation, so order is byte order, as in SQLite.
// Never edit a released migration; append a new one.
import type { Pool } from 'pg';

const MIGRATIONS: readonly string[] = [
  // 0 → 1: the SQLite store's schema at its version 3.
  `
  CREATE TABLE users (
    id text PRIMARY KEY,
    name text NOT NULL,
    created_at text COLLATE "C" NOT NULL
  );
  CREATE TABLE api_keys (
    hash text PRIMARY KEY,            -- sha256 hex of the key; the key itself is never stored
    prefix text NOT NULL,             -- first characters, for display
    user_id text NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    created_at text COLLATE "C" NOT NULL
  );
  CREATE INDEX api_keys_user ON api_keys (user_id);
  CREATE TABLE user_settings (
    user_id text PRIMARY KEY REFERENCES users(id) ON DELETE CASCADE,
    sandbox_grouping_strategy text NOT NULL DEFAULT 'NO_GROUPING'
  );
  CREATE TABLE events (
    conversation_id text COLLATE "C" NOT NULL,
    seq integer NOT NULL,
    event_id text COLLATE "C" NOT NULL,
    kind text COLLATE "C" NOT NULL,
    source text COLLATE "C" NOT NULL,
    ts text COLLATE "C" NOT NULL,     -- UTC ISO with milliseconds: byte order is time order
    json text NOT NULL,               -- as received (jsonb would reorder keys)
    PRIMARY KEY (conversation_id, seq)
  );
  -- Unique per conversation, not globally: a fork copies its source's events with their ids.
  CREATE UNIQUE INDEX events_event_id ON events (conversation_id, event_id);
  CREATE INDEX events_kind ON events (conversation_id, kind, seq);
  CREATE INDEX events_ts ON events (conversation_id, ts);
  CREATE TABLE event_cursors (
    conversation_id text COLLATE "C" PRIMARY KEY,
    acked_seq integer NOT NULL        -- highest seq held without a gap
  );
  CREATE TABLE conversation_meta (
    conversation_id text COLLATE "C" PRIMARY KEY,
    title text,
    updated_at text
  );
  CREATE TABLE pending_messages (
    id integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    conversation_id text COLLATE "C" NOT NULL,
    body text NOT NULL,
    created_at text NOT NULL,
    claimed_until timestamptz         -- a replica is delivering it until then
  );
  CREATE INDEX pending_messages_conversation ON pending_messages (conversation_id, id);
  CREATE TABLE deleted_conversations (
    conversation_id text COLLATE "C" PRIMARY KEY,
    deleted_at text NOT NULL
  );
  `,
  // 1 → 2: the SQLite store's version 4 (tombstones of what a user deleted through the API).
  `
  CREATE TABLE deleted_resources (
    kind text COLLATE "C" NOT NULL,   -- Conversation or Sandbox
    name text COLLATE "C" NOT NULL,
    owner_id text NOT NULL,
    deleted_at text NOT NULL,
    PRIMARY KEY (kind, name)
  );
  `,
  // 2 → 3: the SQLite store's version 5 (the user's login on a Git host).
  `
  ALTER TABLE user_settings ADD COLUMN git_login text;
  ALTER TABLE user_settings ADD COLUMN git_login_provider text NOT NULL DEFAULT 'github';
  `,
  // 3 → 4: the SQLite store's version 6 (the model gateway's usage record).
  `
  CREATE TABLE model_usage (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    user_id text COLLATE "C",
    sandbox_id text COLLATE "C" NOT NULL,
    conversation_id text COLLATE "C",
    model text COLLATE "C" NOT NULL,
    prompt_tokens bigint NOT NULL,
    completion_tokens bigint NOT NULL,
    cache_read_tokens bigint NOT NULL,
    reasoning_tokens bigint NOT NULL,
    cost double precision NOT NULL,
    created_at text NOT NULL
  );
  CREATE INDEX model_usage_user ON model_usage (user_id);
  `,
  // 4 → 5: the SQLite store's version 7 (facts about the installation: 'single_user').
  `
  CREATE TABLE installation (
    key text PRIMARY KEY,
    value text NOT NULL
  );
  `,
  // 5 → 6: the SQLite store's version 8 (revoked keys, disabled users, administrators).
  `
  ALTER TABLE api_keys ADD COLUMN revoked_at text;
  ALTER TABLE users ADD COLUMN disabled_at text;
  ALTER TABLE users ADD COLUMN is_admin boolean NOT NULL DEFAULT false;
  UPDATE users SET is_admin = true WHERE id = 'admin';
  `,
  // 6 → 7: the SQLite store's version 9 (OpenID Connect identities, sessions, login requests).
  `
  ALTER TABLE users ADD COLUMN oidc_issuer text;
  ALTER TABLE users ADD COLUMN oidc_subject text;
  ALTER TABLE users ADD COLUMN email text;
  CREATE UNIQUE INDEX users_oidc_identity ON users (oidc_issuer, oidc_subject);
  CREATE TABLE sessions (
    id_hash text PRIMARY KEY,
    user_id text NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    csrf_token text NOT NULL,
    id_token text,
    created_at text COLLATE "C" NOT NULL,
    last_seen_at text COLLATE "C" NOT NULL,
    expires_at text COLLATE "C" NOT NULL
  );
  CREATE INDEX sessions_user ON sessions (user_id);
  CREATE TABLE login_requests (
    id_hash text PRIMARY KEY,
    state text NOT NULL,
    code_verifier text NOT NULL,
    nonce text NOT NULL,
    return_to text NOT NULL,
    expires_at text COLLATE "C" NOT NULL
  );
  `,
  // 7 → 8: the SQLite store's versions 10 and 11 (issue #16): events per conversation and kind, kept
  // by ingest, so a count without a time range reads a few rows; each event's exclude_none form,
  // made once at ingest (rows stored before have none and are converted when read).
  `
  CREATE TABLE event_counts (
    conversation_id text COLLATE "C" NOT NULL,
    kind text COLLATE "C" NOT NULL,
    n integer NOT NULL,
    PRIMARY KEY (conversation_id, kind)
  );
  INSERT INTO event_counts (conversation_id, kind, n) SELECT conversation_id, kind, COUNT(*) FROM events GROUP BY conversation_id, kind;
  ALTER TABLE events ADD COLUMN wire text;
  `,
];

export const PG_SCHEMA_VERSION = MIGRATIONS.length;

/** Arbitrary constant naming the app store's migration lock among advisory locks. */
const MIGRATION_LOCK = 7_301_845_112;

export async function migratePostgres(pool: Pool): Promise<void> {
  const client = await pool.connect();
  try {
    await client.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK]);
    try {
      await client.query('CREATE TABLE IF NOT EXISTS schema_version (version integer NOT NULL)');
      let current = (await client.query<{ version: number }>('SELECT version FROM schema_version')).rows[0]?.version;
      if (current === undefined) {
        await client.query('INSERT INTO schema_version (version) VALUES (0)');
        current = 0;
      }
      if (current > PG_SCHEMA_VERSION) {
        throw new Error(`app database is at schema version ${current}, newer than this build understands (${PG_SCHEMA_VERSION})`);
      }
      for (let v = current; v < PG_SCHEMA_VERSION; v++) {
        await client.query('BEGIN');
        try {
          await client.query(MIGRATIONS[v]!);
          await client.query('UPDATE schema_version SET version = $1', [v + 1]);
          await client.query('COMMIT');
        } catch (err) {
          await client.query('ROLLBACK');
          throw err;
        }
      }
    } finally {
      await client.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK]);
    }
  } finally {
    client.release();
  }
}
