// The bundled app store: one better-sqlite3 file (evaluation installs, one API replica). Work is
// synchronous inside; the AppStore interface is async so callers also fit the PostgreSQL store.
import Database from 'better-sqlite3';
import { systemClock, type Clock } from '../../controller/clock.ts';
import { EventLog } from './event-log.ts';
import { Logins } from './logins.ts';
import { displayPrefix, hashKey, newApiKey, newUserId } from './keys.ts';
import { migrate } from './migrations.ts';
import { SqliteModelUsage } from './model-usage.ts';
import { PendingMessages } from './pending-messages.ts';
import { DEFAULT_SETTINGS, SingleUserInstallation, type ApiKeyInfo, type AppStore, type AppUser, type ConversationMeta, type RevokeResult, type TombstoneKind, type UserInfo, type UserSettings } from './types.ts';

export type { ApiKeyInfo, AppStore, AppUser, ConversationMeta, UserInfo, UserSettings } from './types.ts';

interface UserRow {
  id: string;
  name: string;
  is_admin: number;
  created_at: string;
  disabled_at: string | null;
}

const userInfo = (r: UserRow): UserInfo => ({ id: r.id, name: r.name, admin: r.is_admin === 1, created_at: r.created_at, disabled_at: r.disabled_at });

/** Key lookups kept at most (all dropped past it; a deployment has far fewer working keys). */
const KEY_USERS_KEPT = 10_000;
/** Conversation metas kept at most. */
const METAS_KEPT = 100_000;

export class SqliteAppStore implements AppStore {
  readonly db: Database.Database;
  readonly events: EventLog;
  readonly pending: PendingMessages;
  readonly usage: SqliteModelUsage;
  readonly logins: Logins;
  readonly #clock: Clock;

  constructor(path: string, opts: { clock?: Clock } = {}) {
    this.db = new Database(path);
    this.#clock = opts.clock ?? systemClock;
    try {
      // WAL with NORMAL sync, as the resource store and the agent servers' stores: a commit is in the
      // WAL file when it returns, so it survives the process being killed (e2e/faults); only a power
      // loss can take the last transactions. FULL (SQLite's default) added an fsync to each commit —
      // 4-12 ms measured here, during which `agentyard up`'s one event loop (API and controller) stood
      // still, several times per conversation start (issue #16, the warm pool's start → READY).
      if (!this.db.memory) {
        this.db.pragma('journal_mode = WAL');
        this.db.pragma('synchronous = NORMAL');
      }
      this.db.pragma('busy_timeout = 5000');
      this.db.pragma('foreign_keys = ON');
      migrate(this.db);
    } catch (err) {
      this.db.close();
      throw err;
    }
    this.events = new EventLog(this.db, () => this.#dropKeptIfChangedElsewhere());
    this.pending = new PendingMessages(this.db, this.#clock);
    this.usage = new SqliteModelUsage(this.db);
    // Statements prepared once, as everywhere in this store: preparing costs more than a point query.
    const prepared = (sql: string) => this.#prepared(sql);
    this.logins = new Logins(
      {
        async all<T>(sql: string, params: unknown[]): Promise<T[]> {
          const st = prepared(sql);
          if (st.reader) return st.all(...params) as T[];
          st.run(...params);
          return [];
        },
      },
      this.#clock,
    );
  }

  readonly #statements = new Map<string, Database.Statement>();

  /** A prepared statement, prepared once: preparing costs more than running a point query. */
  #prepared(sql: string): Database.Statement {
    let st = this.#statements.get(sql);
    if (!st) this.#statements.set(sql, (st = this.db.prepare(sql)));
    return st;
  }

  #now(): string {
    return this.#clock.now().toUTC().toISO()!;
  }

  async createUser(name: string, id: string = newUserId()): Promise<AppUser> {
    // One statement: the check and the insert cannot be split by another writer.
    const { changes } = this.#prepared(
      `INSERT INTO users (id, name, created_at) SELECT ?, ?, ?
       WHERE NOT EXISTS (SELECT 1 FROM installation WHERE key = 'single_user') OR NOT EXISTS (SELECT 1 FROM users)`,
    ).run(id, name, this.#now());
    if (changes === 0) throw new SingleUserInstallation((await this.singleUserReason()) ?? 'single-user');
    return { id, name };
  }

  async countUsers(): Promise<number> {
    return (this.#prepared('SELECT count(*) AS n FROM users').get() as { n: number }).n;
  }

  async setSingleUser(reason: string | undefined): Promise<void> {
    if (reason === undefined) this.#prepared("DELETE FROM installation WHERE key = 'single_user'").run();
    else this.#prepared("INSERT INTO installation (key, value) VALUES ('single_user', ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value").run(reason);
  }

  async singleUserReason(): Promise<string | undefined> {
    return (this.#prepared("SELECT value FROM installation WHERE key = 'single_user'").get() as { value: string } | undefined)?.value;
  }

  async getUser(id: string): Promise<AppUser | undefined> {
    return this.#prepared('SELECT id, name FROM users WHERE id = ?').get(id) as AppUser | undefined;
  }

  async createApiKey(userId: string): Promise<string> {
    const key = newApiKey();
    await this.addApiKey(userId, key);
    return key;
  }

  async addApiKey(userId: string, key: string): Promise<void> {
    this.#prepared('INSERT INTO api_keys (hash, prefix, user_id, created_at) VALUES (?, ?, ?, ?) ON CONFLICT (hash) DO NOTHING').run(hashKey(key), displayPrefix(key), userId, this.#now());
  }

  async listApiKeys(userId: string): Promise<ApiKeyInfo[]> {
    return this.#prepared('SELECT prefix, created_at, revoked_at FROM api_keys WHERE user_id = ? ORDER BY created_at, prefix').all(userId) as ApiKeyInfo[];
  }

  async findUserByApiKey(key: string): Promise<AppUser | undefined> {
    if (key === '') return undefined;
    const hash = hashKey(key);
    // Another connection (the `agentyard users` command on the same file) may have revoked a key or
    // disabled a user: data_version moves whenever one commits, and then nothing kept is trusted.
    this.#dropKeptIfChangedElsewhere();
    const kept = this.#keyUsers.get(hash);
    if (kept) return { ...kept };
    // A subquery, not a join: SQLite (built with STAT4) prepares this join again on every bind, which
    // cost seven times the lookup itself on every authenticated request (issue #16).
    const user = this.#prepared('SELECT id, name FROM users WHERE id = (SELECT user_id FROM api_keys WHERE hash = ? AND revoked_at IS NULL) AND disabled_at IS NULL').get(
      hash,
    ) as AppUser | undefined;
    if (user) {
      if (this.#keyUsers.size >= KEY_USERS_KEPT) this.#keyUsers.clear();
      this.#keyUsers.set(hash, { ...user });
    }
    return user;
  }

  /**
   * Users of keys that worked, by key hash: every authenticated request looks its key up (issue
   * #16). Exact rather than timed: this connection's own revocations and disablings clear it, and
   * commits of any other connection show in data_version. Keys that did not work are not kept.
   */
  readonly #keyUsers = new Map<string, AppUser>();
  /** Conversation titles and update times by id (a row or its absence), kept as #keyUsers is. */
  readonly #metas = new Map<string, ConversationMeta>();
  #dataVersion = -1;

  #versionCheckedThisTurn = false;

  /**
   * Whatever is kept goes when another connection has committed since the last look. Looked at
   * once per event-loop turn (the pragma costs as much as a point query, and a request asks twice):
   * a commit of another process is then seen by everything this one starts after the turn it
   * happened in, as if it had come a moment later.
   */
  #dropKeptIfChangedElsewhere(): void {
    if (this.#versionCheckedThisTurn) return;
    this.#versionCheckedThisTurn = true;
    setImmediate(() => {
      this.#versionCheckedThisTurn = false;
    });
    const version = this.#prepared('PRAGMA data_version').pluck().get() as number;
    if (version === this.#dataVersion) return;
    this.#keyUsers.clear();
    this.#metas.clear();
    this.events.dropKept();
    this.#dataVersion = version;
  }

  async revokeApiKey(userId: string, prefix: string): Promise<RevokeResult> {
    return this.db.transaction((): RevokeResult => {
      const rows = this.#prepared('SELECT hash FROM api_keys WHERE user_id = ? AND prefix = ? AND revoked_at IS NULL').all(userId, prefix) as { hash: string }[];
      if (rows.length === 0) return 'not-found';
      if (rows.length > 1) return 'ambiguous';
      this.#prepared('UPDATE api_keys SET revoked_at = ? WHERE hash = ?').run(this.#now(), rows[0]!.hash);
      this.#keyUsers.delete(rows[0]!.hash);
      return 'revoked';
    }).immediate();
  }

  async getUserInfo(id: string): Promise<UserInfo | undefined> {
    const row = this.#prepared('SELECT id, name, is_admin, created_at, disabled_at FROM users WHERE id = ?').get(id) as UserRow | undefined;
    return row && userInfo(row);
  }

  async listUsers(): Promise<UserInfo[]> {
    return (this.#prepared('SELECT id, name, is_admin, created_at, disabled_at FROM users ORDER BY created_at, id').all() as UserRow[]).map(userInfo);
  }

  async setUserDisabled(id: string, disabled: boolean): Promise<boolean> {
    // Disabling twice keeps the first time.
    const r = disabled
      ? this.#prepared('UPDATE users SET disabled_at = COALESCE(disabled_at, ?) WHERE id = ?').run(this.#now(), id)
      : this.#prepared('UPDATE users SET disabled_at = NULL WHERE id = ?').run(id);
    if (disabled) this.#keyUsers.clear(); // the user's keys, whichever hashes they have
    return r.changes > 0;
  }

  async setUserAdmin(id: string, admin: boolean): Promise<boolean> {
    return this.#prepared('UPDATE users SET is_admin = ? WHERE id = ?').run(admin ? 1 : 0, id).changes > 0;
  }

  async getSettings(userId: string): Promise<UserSettings> {
    const row = this.#prepared('SELECT sandbox_grouping_strategy, git_login, git_login_provider FROM user_settings WHERE user_id = ?').get(userId) as UserSettings | undefined;
    return row ?? { ...DEFAULT_SETTINGS };
  }

  async setSettings(userId: string, patch: Partial<UserSettings>): Promise<UserSettings> {
    const next = { ...(await this.getSettings(userId)), ...patch };
    this.#prepared(
      `INSERT INTO user_settings (user_id, sandbox_grouping_strategy, git_login, git_login_provider) VALUES (?, ?, ?, ?)
       ON CONFLICT (user_id) DO UPDATE SET sandbox_grouping_strategy = excluded.sandbox_grouping_strategy, git_login = excluded.git_login, git_login_provider = excluded.git_login_provider`,
    ).run(userId, next.sandbox_grouping_strategy, next.git_login, next.git_login_provider);
    return next;
  }

  async getConversationMeta(conversationId: string): Promise<ConversationMeta> {
    const row = this.#prepared('SELECT title, updated_at FROM conversation_meta WHERE conversation_id = ?').get(conversationId) as
      | { title: string | null; updated_at: string | null }
      | undefined;
    return { title: row?.title ?? null, updatedAt: row?.updated_at ?? null };
  }

  async getConversationMetas(conversationIds: readonly string[]): Promise<Map<string, ConversationMeta>> {
    // Every search reads a page of these; they change far less often (issue #16).
    this.#dropKeptIfChangedElsewhere();
    const out = new Map<string, ConversationMeta>();
    const missing: string[] = [];
    for (const id of conversationIds) {
      const kept = this.#metas.get(id);
      if (kept) out.set(id, { ...kept });
      else missing.push(id);
    }
    if (missing.length === 0) return out;
    const rows = this.#prepared('SELECT conversation_id, title, updated_at FROM conversation_meta WHERE conversation_id IN (SELECT value FROM json_each(?))').all(
      JSON.stringify(missing),
    ) as { conversation_id: string; title: string | null; updated_at: string | null }[];
    const found = new Map(rows.map((r) => [r.conversation_id, { title: r.title, updatedAt: r.updated_at }]));
    if (this.#metas.size + missing.length > METAS_KEPT) this.#metas.clear();
    for (const id of missing) {
      const meta = found.get(id) ?? { title: null, updatedAt: null };
      this.#metas.set(id, meta);
      out.set(id, { ...meta });
    }
    return new Map(conversationIds.map((id) => [id, out.get(id)!]));
  }

  async setConversationMeta(conversationId: string, meta: ConversationMeta): Promise<void> {
    this.#prepared(
      'INSERT INTO conversation_meta (conversation_id, title, updated_at) VALUES (?, ?, ?) ON CONFLICT (conversation_id) DO UPDATE SET title = excluded.title, updated_at = excluded.updated_at',
    ).run(conversationId, meta.title, meta.updatedAt);
    this.#metas.set(conversationId, { title: meta.title, updatedAt: meta.updatedAt });
  }

  async purgeConversation(conversationId: string): Promise<void> {
    this.db.transaction(() => {
      this.events.purgeSync(conversationId);
      this.pending.purgeSync(conversationId);
      this.#prepared('DELETE FROM conversation_meta WHERE conversation_id = ?').run(conversationId);
      this.#metas.delete(conversationId);
      this.#prepared('INSERT OR IGNORE INTO deleted_conversations (conversation_id, deleted_at) VALUES (?, ?)').run(conversationId, this.#now());
    })();
  }

  async wasDeleted(conversationId: string): Promise<boolean> {
    return this.#prepared('SELECT 1 FROM deleted_conversations WHERE conversation_id = ?').get(conversationId) !== undefined;
  }

  async recordDeletion(kind: TombstoneKind, name: string, ownerId: string): Promise<void> {
    this.#prepared(
      'INSERT INTO deleted_resources (kind, name, owner_id, deleted_at) VALUES (?, ?, ?, ?) ON CONFLICT (kind, name) DO UPDATE SET owner_id = excluded.owner_id, deleted_at = excluded.deleted_at',
    ).run(kind, name, ownerId, this.#now());
  }

  async deletedBy(kind: TombstoneKind, name: string): Promise<string | undefined> {
    const row = this.#prepared('SELECT owner_id FROM deleted_resources WHERE kind = ? AND name = ?').get(kind, name) as { owner_id: string } | undefined;
    return row?.owner_id;
  }

  async conversationIds(): Promise<string[]> {
    const ids = new Set([...(await this.events.conversationIds()), ...(await this.pending.conversationIds())]);
    for (const r of this.#prepared('SELECT conversation_id FROM conversation_meta').all() as { conversation_id: string }[]) ids.add(r.conversation_id);
    return [...ids];
  }

  async close(): Promise<void> {
    if (this.db.open) this.db.close();
  }
}
