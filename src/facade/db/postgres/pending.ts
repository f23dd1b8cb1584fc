// Queued messages in PostgreSQL. Several API replicas run the delivery loop, so a message is
// claimed before it is handed to the agent server: an atomic UPDATE that succeeds for one replica
// only, with a lease (server time) so a replica that dies mid-delivery does not hold it forever.
import type { Pool } from 'pg';
import type { PendingMessage, PendingStore } from '../types.ts';

interface Row {
  id: number;
  conversation_id: string;
  body: string;
  created_at: string;
}

export class PgPendingMessages implements PendingStore {
  readonly #pool: Pool;

  constructor(pool: Pool) {
    this.#pool = pool;
  }

  async add(conversationId: string, body: PendingMessage['body'], createdAt: string): Promise<number> {
    const r = await this.#pool.query<{ id: number }>('INSERT INTO pending_messages (conversation_id, body, created_at) VALUES ($1, $2, $3) RETURNING id', [
      conversationId,
      JSON.stringify(body),
      createdAt,
    ]);
    return r.rows[0]!.id;
  }

  async list(conversationId: string): Promise<PendingMessage[]> {
    const r = await this.#pool.query<Row>('SELECT id, conversation_id, body, created_at FROM pending_messages WHERE conversation_id = $1 ORDER BY id', [conversationId]);
    return r.rows.map((row) => ({
      id: row.id,
      conversationId: row.conversation_id,
      body: JSON.parse(row.body) as PendingMessage['body'],
      createdAt: row.created_at,
    }));
  }

  async count(conversationId: string): Promise<number> {
    return (await this.#pool.query<{ n: number }>('SELECT COUNT(*)::int AS n FROM pending_messages WHERE conversation_id = $1', [conversationId])).rows[0]!.n;
  }

  async claim(id: number, leaseMs: number): Promise<boolean> {
    // A concurrent claim blocks on the row lock, then re-checks the WHERE against the winner's row.
    const r = await this.#pool.query(
      `UPDATE pending_messages SET claimed_until = now() + make_interval(secs => $2::double precision / 1000)
       WHERE id = $1 AND (claimed_until IS NULL OR claimed_until < now())`,
      [id, leaseMs],
    );
    return r.rowCount === 1;
  }

  async release(id: number): Promise<void> {
    await this.#pool.query('UPDATE pending_messages SET claimed_until = NULL WHERE id = $1', [id]);
  }

  async remove(id: number): Promise<void> {
    await this.#pool.query('DELETE FROM pending_messages WHERE id = $1', [id]);
  }

  async purge(conversationId: string): Promise<void> {
    await this.#pool.query('DELETE FROM pending_messages WHERE conversation_id = $1', [conversationId]);
  }

  async conversationIds(): Promise<string[]> {
    return (await this.#pool.query<{ conversation_id: string }>('SELECT DISTINCT conversation_id FROM pending_messages')).rows.map((r) => r.conversation_id);
  }
}
