// The application database (one better-sqlite3 file): users, hashed API keys, user settings, the
// durable event log, conversation metadata reported by agent servers, and queued messages.
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import Database from 'better-sqlite3';
import type { SandboxGrouping } from '../../api/conversation.ts';
import { systemClock, type Clock } from '../../controller/clock.ts';
import { EventLog } from './event-log.ts';
import { migrate } from './migrations.ts';
import { PendingMessages } from './pending-messages.ts';

export interface AppUser {
  id: string;
  name: string;
}

export interface UserSettings {
  sandbox_grouping_strategy: SandboxGrouping;
}

export interface ApiKeyInfo {
  prefix: string;
  created_at: string;
}

export interface ConversationMeta {
  title: string | null;
  updatedAt: string | null;
}

const KEY_PREFIX = 'ay_';
const DISPLAY_PREFIX_LENGTH = KEY_PREFIX.length + 6;

function hashKey(key: string): string {
  return createHash('sha256').update(key).digest('hex');
}

export class AppDb {
  readonly db: Database.Database;
  readonly events: EventLog;
  readonly pending: PendingMessages;
  readonly #clock: Clock;

  constructor(path: string, opts: { clock?: Clock } = {}) {
    this.db = new Database(path);
    this.#clock = opts.clock ?? systemClock;
    try {
      if (!this.db.memory) this.db.pragma('journal_mode = WAL');
      this.db.pragma('busy_timeout = 5000');
      this.db.pragma('foreign_keys = ON');
      migrate(this.db);
    } catch (err) {
      this.db.close();
      throw err;
    }
    this.events = new EventLog(this.db);
    this.pending = new PendingMessages(this.db);
  }

  #now(): string {
    return this.#clock.now().toUTC().toISO()!;
  }

  createUser(name: string, id: string = randomUUID().replaceAll('-', '')): AppUser {
    this.db.prepare('INSERT INTO users (id, name, created_at) VALUES (?, ?, ?)').run(id, name, this.#now());
    return { id, name };
  }

  getUser(id: string): AppUser | undefined {
    return this.db.prepare('SELECT id, name FROM users WHERE id = ?').get(id) as AppUser | undefined;
  }

  /** Issues a new key. The plaintext is returned once; only its hash is kept. */
  createApiKey(userId: string): string {
    const key = KEY_PREFIX + randomBytes(32).toString('base64url');
    this.addApiKey(userId, key);
    return key;
  }

  /** Registers a key chosen by the operator (AGENTYARD_API_KEY); idempotent. Only its hash is kept. */
  addApiKey(userId: string, key: string): void {
    if (this.findUserByApiKey(key)) return;
    this.db
      .prepare('INSERT INTO api_keys (hash, prefix, user_id, created_at) VALUES (?, ?, ?, ?)')
      .run(hashKey(key), key.slice(0, DISPLAY_PREFIX_LENGTH), userId, this.#now());
  }

  listApiKeys(userId: string): ApiKeyInfo[] {
    return this.db.prepare('SELECT prefix, created_at FROM api_keys WHERE user_id = ? ORDER BY created_at').all(userId) as ApiKeyInfo[];
  }

  findUserByApiKey(key: string): AppUser | undefined {
    if (key === '') return undefined;
    return this.db
      .prepare('SELECT u.id, u.name FROM api_keys k JOIN users u ON u.id = k.user_id WHERE k.hash = ?')
      .get(hashKey(key)) as AppUser | undefined;
  }

  getSettings(userId: string): UserSettings {
    const row = this.db.prepare('SELECT sandbox_grouping_strategy FROM user_settings WHERE user_id = ?').get(userId) as UserSettings | undefined;
    return row ?? { sandbox_grouping_strategy: 'NO_GROUPING' };
  }

  setSettings(userId: string, patch: Partial<UserSettings>): UserSettings {
    const next = { ...this.getSettings(userId), ...patch };
    this.db
      .prepare(
        'INSERT INTO user_settings (user_id, sandbox_grouping_strategy) VALUES (?, ?) ON CONFLICT (user_id) DO UPDATE SET sandbox_grouping_strategy = excluded.sandbox_grouping_strategy',
      )
      .run(userId, next.sandbox_grouping_strategy);
    return next;
  }

  /** Title and last update as the agent server reported them. */
  getConversationMeta(conversationId: string): ConversationMeta {
    const row = this.db.prepare('SELECT title, updated_at FROM conversation_meta WHERE conversation_id = ?').get(conversationId) as
      | { title: string | null; updated_at: string | null }
      | undefined;
    return { title: row?.title ?? null, updatedAt: row?.updated_at ?? null };
  }

  setConversationMeta(conversationId: string, meta: ConversationMeta): void {
    this.db
      .prepare(
        'INSERT INTO conversation_meta (conversation_id, title, updated_at) VALUES (?, ?, ?) ON CONFLICT (conversation_id) DO UPDATE SET title = excluded.title, updated_at = excluded.updated_at',
      )
      .run(conversationId, meta.title, meta.updatedAt);
  }

  /** Everything the app keeps about a conversation that no longer exists; remembers that it existed. */
  purgeConversation(conversationId: string): void {
    this.db.transaction(() => {
      this.events.purge(conversationId);
      this.pending.purge(conversationId);
      this.db.prepare('DELETE FROM conversation_meta WHERE conversation_id = ?').run(conversationId);
      this.db.prepare('INSERT OR IGNORE INTO deleted_conversations (conversation_id, deleted_at) VALUES (?, ?)').run(conversationId, this.#now());
    })();
  }

  wasDeleted(conversationId: string): boolean {
    return this.db.prepare('SELECT 1 FROM deleted_conversations WHERE conversation_id = ?').get(conversationId) !== undefined;
  }

  /** Conversation ids the app holds any data for. */
  conversationIds(): string[] {
    const ids = new Set([...this.events.conversationIds(), ...this.pending.conversationIds()]);
    for (const r of this.db.prepare('SELECT conversation_id FROM conversation_meta').all() as { conversation_id: string }[]) ids.add(r.conversation_id);
    return [...ids];
  }

  close(): void {
    if (this.db.open) this.db.close();
  }
}
