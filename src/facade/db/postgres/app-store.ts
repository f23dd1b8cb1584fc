// The external app store: PostgreSQL through a pg Pool (production installs; the API scales out
// because every replica shares it). Same behaviour as SqliteAppStore; the shared suite
// (../app-store.test.ts) runs against both.
import pg from 'pg';
import { systemClock, type Clock } from '../../../controller/clock.ts';
import type { Logger } from '../../../util/log.ts';
import { displayPrefix, hashKey, newApiKey, newUserId } from '../keys.ts';
import { DEFAULT_SETTINGS, SingleUserInstallation, type ApiKeyInfo, type AppStore, type AppUser, type ConversationMeta, type RevokeResult, type TombstoneKind, type UserInfo, type UserSettings } from '../types.ts';

const USER_INFO = 'SELECT id, name, is_admin AS admin, created_at, disabled_at FROM users';
import { Logins } from '../logins.ts';
import { PgEventLog } from './event-log.ts';
import { migratePostgres } from './migrations.ts';
import { PgModelUsage } from './model-usage.ts';
import { PgPendingMessages } from './pending.ts';
import { inTransaction, numbered } from './sql.ts';

export interface PostgresAppStoreOptions {
  clock?: Clock;
  log?: Logger;
  /** Pool size per API replica. */
  maxConnections?: number;
}

export class PostgresAppStore implements AppStore {
  readonly pool: pg.Pool;
  readonly events: PgEventLog;
  readonly pending: PgPendingMessages;
  readonly usage: PgModelUsage;
  readonly logins: Logins;
  readonly #clock: Clock;
  #closed = false;

  private constructor(pool: pg.Pool, clock: Clock) {
    this.pool = pool;
    this.#clock = clock;
    this.events = new PgEventLog(pool);
    this.pending = new PgPendingMessages(pool);
    this.usage = new PgModelUsage(pool);
    this.logins = new Logins({ all: async <T,>(sql: string, params: unknown[]) => (await pool.query(numbered(sql), params)).rows as T[] }, clock);
  }

  /** Connects and brings the schema up to date (safe when several replicas start at once). */
  static async open(url: string, opts: PostgresAppStoreOptions = {}): Promise<PostgresAppStore> {
    const pool = new pg.Pool({ connectionString: url, max: opts.maxConnections ?? 10 });
    // Idle clients get server-side errors (restart, admin shutdown) here; unhandled they would crash the process.
    pool.on('error', (err) => opts.log?.warn({ err }, 'app database: idle connection failed'));
    try {
      await migratePostgres(pool);
    } catch (err) {
      await pool.end();
      throw err;
    }
    return new PostgresAppStore(pool, opts.clock ?? systemClock);
  }

  #now(): string {
    return this.#clock.now().toUTC().toISO()!;
  }

  async createUser(name: string, id: string = newUserId()): Promise<AppUser> {
    const { rowCount } = await this.pool.query(
      `INSERT INTO users (id, name, created_at) SELECT $1, $2, $3
       WHERE NOT EXISTS (SELECT 1 FROM installation WHERE key = 'single_user') OR NOT EXISTS (SELECT 1 FROM users)`,
      [id, name, this.#now()],
    );
    if (rowCount === 0) throw new SingleUserInstallation((await this.singleUserReason()) ?? 'single-user');
    return { id, name };
  }

  async countUsers(): Promise<number> {
    return Number((await this.pool.query<{ n: string }>('SELECT count(*) AS n FROM users')).rows[0]!.n);
  }

  async setSingleUser(reason: string | undefined): Promise<void> {
    if (reason === undefined) await this.pool.query("DELETE FROM installation WHERE key = 'single_user'");
    else await this.pool.query("INSERT INTO installation (key, value) VALUES ('single_user', $1) ON CONFLICT (key) DO UPDATE SET value = excluded.value", [reason]);
  }

  async singleUserReason(): Promise<string | undefined> {
    return (await this.pool.query<{ value: string }>("SELECT value FROM installation WHERE key = 'single_user'")).rows[0]?.value;
  }

  async getUser(id: string): Promise<AppUser | undefined> {
    return (await this.pool.query<AppUser>('SELECT id, name FROM users WHERE id = $1', [id])).rows[0];
  }

  async createApiKey(userId: string): Promise<string> {
    const key = newApiKey();
    await this.addApiKey(userId, key);
    return key;
  }

  async addApiKey(userId: string, key: string): Promise<void> {
    await this.pool.query('INSERT INTO api_keys (hash, prefix, user_id, created_at) VALUES ($1, $2, $3, $4) ON CONFLICT (hash) DO NOTHING', [
      hashKey(key),
      displayPrefix(key),
      userId,
      this.#now(),
    ]);
  }

  async listApiKeys(userId: string): Promise<ApiKeyInfo[]> {
    return (await this.pool.query<ApiKeyInfo>('SELECT prefix, created_at, revoked_at FROM api_keys WHERE user_id = $1 ORDER BY created_at, prefix COLLATE "C"', [userId])).rows;
  }

  async findUserByApiKey(key: string): Promise<AppUser | undefined> {
    if (key === '') return undefined;
    return (
      await this.pool.query<AppUser>('SELECT u.id, u.name FROM api_keys k JOIN users u ON u.id = k.user_id WHERE k.hash = $1 AND k.revoked_at IS NULL AND u.disabled_at IS NULL', [hashKey(key)])
    ).rows[0];
  }

  async revokeApiKey(userId: string, prefix: string): Promise<RevokeResult> {
    // One statement: revoke only when exactly one working key of the user has this prefix.
    const r = await this.pool.query<{ n: string; revoked: string }>(
      `WITH candidates AS (SELECT hash FROM api_keys WHERE user_id = $1 AND prefix = $2 AND revoked_at IS NULL),
            done AS (UPDATE api_keys SET revoked_at = $3 WHERE hash IN (SELECT hash FROM candidates) AND (SELECT count(*) FROM candidates) = 1 RETURNING hash)
       SELECT (SELECT count(*) FROM candidates) AS n, (SELECT count(*) FROM done) AS revoked`,
      [userId, prefix, this.#now()],
    );
    const n = Number(r.rows[0]!.n);
    return n === 0 ? 'not-found' : n > 1 ? 'ambiguous' : 'revoked';
  }

  async getUserInfo(id: string): Promise<UserInfo | undefined> {
    return (await this.pool.query<UserInfo>(`${USER_INFO} WHERE id = $1`, [id])).rows[0];
  }

  async listUsers(): Promise<UserInfo[]> {
    return (await this.pool.query<UserInfo>(`${USER_INFO} ORDER BY created_at, id COLLATE "C"`)).rows;
  }

  async setUserDisabled(id: string, disabled: boolean): Promise<boolean> {
    const r = disabled
      ? await this.pool.query('UPDATE users SET disabled_at = COALESCE(disabled_at, $2) WHERE id = $1', [id, this.#now()])
      : await this.pool.query('UPDATE users SET disabled_at = NULL WHERE id = $1', [id]);
    return (r.rowCount ?? 0) > 0;
  }

  async setUserAdmin(id: string, admin: boolean): Promise<boolean> {
    return ((await this.pool.query('UPDATE users SET is_admin = $2 WHERE id = $1', [id, admin])).rowCount ?? 0) > 0;
  }

  async getSettings(userId: string): Promise<UserSettings> {
    const r = await this.pool.query<UserSettings>('SELECT sandbox_grouping_strategy, git_login, git_login_provider FROM user_settings WHERE user_id = $1', [userId]);
    return r.rows[0] ?? { ...DEFAULT_SETTINGS };
  }

  async setSettings(userId: string, patch: Partial<UserSettings>): Promise<UserSettings> {
    const next = { ...(await this.getSettings(userId)), ...patch };
    await this.pool.query(
      `INSERT INTO user_settings (user_id, sandbox_grouping_strategy, git_login, git_login_provider) VALUES ($1, $2, $3, $4)
       ON CONFLICT (user_id) DO UPDATE SET sandbox_grouping_strategy = excluded.sandbox_grouping_strategy, git_login = excluded.git_login, git_login_provider = excluded.git_login_provider`,
      [userId, next.sandbox_grouping_strategy, next.git_login, next.git_login_provider],
    );
    return next;
  }

  async getConversationMeta(conversationId: string): Promise<ConversationMeta> {
    const r = await this.pool.query<{ title: string | null; updated_at: string | null }>('SELECT title, updated_at FROM conversation_meta WHERE conversation_id = $1', [
      conversationId,
    ]);
    return { title: r.rows[0]?.title ?? null, updatedAt: r.rows[0]?.updated_at ?? null };
  }

  async getConversationMetas(conversationIds: readonly string[]): Promise<Map<string, ConversationMeta>> {
    const r = await this.pool.query<{ conversation_id: string; title: string | null; updated_at: string | null }>(
      'SELECT conversation_id, title, updated_at FROM conversation_meta WHERE conversation_id = ANY($1::text[])',
      [conversationIds],
    );
    const out = new Map<string, ConversationMeta>(conversationIds.map((id) => [id, { title: null, updatedAt: null }]));
    for (const row of r.rows) out.set(row.conversation_id, { title: row.title, updatedAt: row.updated_at });
    return out;
  }

  async setConversationMeta(conversationId: string, meta: ConversationMeta): Promise<void> {
    await this.pool.query(
      'INSERT INTO conversation_meta (conversation_id, title, updated_at) VALUES ($1, $2, $3) ON CONFLICT (conversation_id) DO UPDATE SET title = excluded.title, updated_at = excluded.updated_at',
      [conversationId, meta.title, meta.updatedAt],
    );
  }

  async purgeConversation(conversationId: string): Promise<void> {
    await inTransaction(this.pool, async (c) => {
      await c.query('DELETE FROM events WHERE conversation_id = $1', [conversationId]);
      await c.query('DELETE FROM event_counts WHERE conversation_id = $1', [conversationId]);
      await c.query('DELETE FROM event_cursors WHERE conversation_id = $1', [conversationId]);
      await c.query('DELETE FROM pending_messages WHERE conversation_id = $1', [conversationId]);
      await c.query('DELETE FROM conversation_meta WHERE conversation_id = $1', [conversationId]);
      await c.query('INSERT INTO deleted_conversations (conversation_id, deleted_at) VALUES ($1, $2) ON CONFLICT DO NOTHING', [conversationId, this.#now()]);
    });
  }

  async wasDeleted(conversationId: string): Promise<boolean> {
    return ((await this.pool.query('SELECT 1 FROM deleted_conversations WHERE conversation_id = $1', [conversationId])).rowCount ?? 0) > 0;
  }

  async recordDeletion(kind: TombstoneKind, name: string, ownerId: string): Promise<void> {
    await this.pool.query(
      'INSERT INTO deleted_resources (kind, name, owner_id, deleted_at) VALUES ($1, $2, $3, $4) ON CONFLICT (kind, name) DO UPDATE SET owner_id = excluded.owner_id, deleted_at = excluded.deleted_at',
      [kind, name, ownerId, this.#now()],
    );
  }

  async deletedBy(kind: TombstoneKind, name: string): Promise<string | undefined> {
    return (await this.pool.query<{ owner_id: string }>('SELECT owner_id FROM deleted_resources WHERE kind = $1 AND name = $2', [kind, name])).rows[0]?.owner_id;
  }

  async conversationIds(): Promise<string[]> {
    const r = await this.pool.query<{ conversation_id: string }>(
      'SELECT conversation_id FROM event_cursors UNION SELECT conversation_id FROM events UNION SELECT conversation_id FROM pending_messages UNION SELECT conversation_id FROM conversation_meta',
    );
    return r.rows.map((row) => row.conversation_id);
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await this.pool.end();
  }
}
