// Messages sent while a conversation's sandbox was paused or starting. They wait here, in order,
// until the delivery loop hands them to the agent server once the sandbox runs again.
import type Database from 'better-sqlite3';
import type { Statement } from 'better-sqlite3';
import type { Clock } from '../../controller/clock.ts';
import type { PendingMessage, PendingStore } from './types.ts';

export type { PendingMessage } from './types.ts';

interface Row {
  id: number;
  conversation_id: string;
  body: string;
  created_at: string;
}

export class PendingMessages implements PendingStore {
  readonly #clock: Clock;
  readonly #add: Statement;
  readonly #list: Statement;
  readonly #count: Statement;
  readonly #claim: Statement;
  readonly #release: Statement;
  readonly #remove: Statement;
  readonly #purge: Statement;
  readonly #conversations: Statement;

  constructor(db: Database.Database, clock: Clock) {
    this.#clock = clock;
    // One process owns a SQLite file: claims left by a previous run of it are void.
    db.prepare('UPDATE pending_messages SET claimed_until = NULL WHERE claimed_until IS NOT NULL').run();
    this.#add = db.prepare('INSERT INTO pending_messages (conversation_id, body, created_at) VALUES (?, ?, ?)');
    this.#list = db.prepare('SELECT id, conversation_id, body, created_at FROM pending_messages WHERE conversation_id = ? ORDER BY id');
    this.#count = db.prepare('SELECT COUNT(*) AS n FROM pending_messages WHERE conversation_id = ?');
    this.#claim = db.prepare('UPDATE pending_messages SET claimed_until = ? WHERE id = ? AND (claimed_until IS NULL OR claimed_until < ?)');
    this.#release = db.prepare('UPDATE pending_messages SET claimed_until = NULL WHERE id = ?');
    this.#remove = db.prepare('DELETE FROM pending_messages WHERE id = ?');
    this.#purge = db.prepare('DELETE FROM pending_messages WHERE conversation_id = ?');
    this.#conversations = db.prepare('SELECT DISTINCT conversation_id FROM pending_messages');
  }

  async add(conversationId: string, body: PendingMessage['body'], createdAt: string): Promise<number> {
    return Number(this.#add.run(conversationId, JSON.stringify(body), createdAt).lastInsertRowid);
  }

  async list(conversationId: string): Promise<PendingMessage[]> {
    return (this.#list.all(conversationId) as Row[]).map((r) => ({
      id: r.id,
      conversationId: r.conversation_id,
      body: JSON.parse(r.body) as PendingMessage['body'],
      createdAt: r.created_at,
    }));
  }

  async count(conversationId: string): Promise<number> {
    return (this.#count.get(conversationId) as { n: number }).n;
  }

  async claim(id: number, leaseMs: number): Promise<boolean> {
    const now = this.#clock.now().toMillis();
    return this.#claim.run(now + leaseMs, id, now).changes === 1;
  }

  async release(id: number): Promise<void> {
    this.#release.run(id);
  }

  async remove(id: number): Promise<void> {
    this.#remove.run(id);
  }

  async purge(conversationId: string): Promise<void> {
    this.purgeSync(conversationId);
  }

  /** For SqliteAppStore.purgeConversation's transaction. */
  purgeSync(conversationId: string): void {
    this.#purge.run(conversationId);
  }

  async conversationIds(): Promise<string[]> {
    return (this.#conversations.all() as { conversation_id: string }[]).map((r) => r.conversation_id);
  }
}
