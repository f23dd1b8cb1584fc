// Messages sent while a conversation's sandbox was paused or starting. They wait here, in order,
// until the delivery loop hands them to the agent server once the sandbox runs again.
import type Database from 'better-sqlite3';
import type { Statement } from 'better-sqlite3';

export interface PendingMessage {
  id: number;
  conversationId: string;
  body: { role: 'user'; content: unknown[]; run: boolean };
  createdAt: string;
}

interface Row {
  id: number;
  conversation_id: string;
  body: string;
  created_at: string;
}

export class PendingMessages {
  readonly #add: Statement;
  readonly #list: Statement;
  readonly #count: Statement;
  readonly #remove: Statement;
  readonly #purge: Statement;
  readonly #conversations: Statement;

  constructor(db: Database.Database) {
    this.#add = db.prepare('INSERT INTO pending_messages (conversation_id, body, created_at) VALUES (?, ?, ?)');
    this.#list = db.prepare('SELECT * FROM pending_messages WHERE conversation_id = ? ORDER BY id');
    this.#count = db.prepare('SELECT COUNT(*) AS n FROM pending_messages WHERE conversation_id = ?');
    this.#remove = db.prepare('DELETE FROM pending_messages WHERE id = ?');
    this.#purge = db.prepare('DELETE FROM pending_messages WHERE conversation_id = ?');
    this.#conversations = db.prepare('SELECT DISTINCT conversation_id FROM pending_messages');
  }

  add(conversationId: string, body: PendingMessage['body'], createdAt: string): number {
    return Number(this.#add.run(conversationId, JSON.stringify(body), createdAt).lastInsertRowid);
  }

  /** Oldest first. */
  list(conversationId: string): PendingMessage[] {
    return (this.#list.all(conversationId) as Row[]).map((r) => ({
      id: r.id,
      conversationId: r.conversation_id,
      body: JSON.parse(r.body) as PendingMessage['body'],
      createdAt: r.created_at,
    }));
  }

  count(conversationId: string): number {
    return (this.#count.get(conversationId) as { n: number }).n;
  }

  remove(id: number): void {
    this.#remove.run(id);
  }

  purge(conversationId: string): void {
    this.#purge.run(conversationId);
  }

  conversationIds(): string[] {
    return (this.#conversations.all() as { conversation_id: string }[]).map((r) => r.conversation_id);
  }
}
