// The durable event log in PostgreSQL: the same contract as the SQLite EventLog (idempotent by seq
// and by event id, gap-free acknowledgement, seq cursors). Concurrent ingests of one conversation
// (several API replicas, agent-server retries) are serialised by locking its cursor row.
import type { Pool } from 'pg';
import { excludeNone, normalizeTimestamp } from '../../../agent-server/store/wire.ts';
import { columns, itemOf, type StoredRow } from '../event-log.ts';
import { eventFilterSql } from '../../../util/event-filter-sql.ts';
import type { EventFilter, EventPage, EventQuery, EventStore, IngestItem, IngestResult } from '../types.ts';
import { inTransaction, numbered } from './sql.ts';

export class PgEventLog implements EventStore {
  readonly #pool: Pool;

  constructor(pool: Pool) {
    this.#pool = pool;
  }

  async ingest(conversationId: string, items: readonly IngestItem[]): Promise<IngestResult> {
    return inTransaction(this.#pool, async (c) => {
      await c.query('INSERT INTO event_cursors (conversation_id, acked_seq) VALUES ($1, 0) ON CONFLICT DO NOTHING', [conversationId]);
      let acked = (await c.query<{ acked_seq: number }>('SELECT acked_seq FROM event_cursors WHERE conversation_id = $1 FOR UPDATE', [conversationId])).rows[0]!
        .acked_seq;
      const mismatched: number[] = [];
      const batch = new Map<number, IngestItem>();
      for (const item of [...items].sort((a, b) => a.seq - b.seq)) {
        const first = batch.get(item.seq);
        if (!first) batch.set(item.seq, item);
        else if (first.event.id !== item.event.id) mismatched.push(item.seq);
      }
      if (batch.size > 0) {
        const held = await c.query<{ seq: number; event_id: string }>('SELECT seq, event_id FROM events WHERE conversation_id = $1 AND seq = ANY($2::int[])', [
          conversationId,
          [...batch.keys()],
        ]);
        for (const row of held.rows) {
          if (batch.get(row.seq)!.event.id !== row.event_id) mismatched.push(row.seq);
          batch.delete(row.seq);
        }
      }
      if (batch.size > 0) {
        const rows = [...batch.values()];
        // DO NOTHING: the same event id at another seq is a replay we already hold.
        const inserted = await c.query<{ kind: string }>(
          `INSERT INTO events (conversation_id, seq, event_id, kind, source, ts, json, wire)
           SELECT $1, * FROM unnest($2::int[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[])
           ON CONFLICT DO NOTHING RETURNING kind`,
          [
            conversationId,
            rows.map((r) => r.seq),
            rows.map((r) => r.event.id),
            rows.map((r) => r.event.kind),
            rows.map((r) => r.event.source ?? ''),
            rows.map((r) => normalizeTimestamp(r.event.timestamp) ?? r.event.timestamp),
            rows.map((r) => JSON.stringify(r.event)),
            rows.map((r) => JSON.stringify(excludeNone(r.event))),
          ],
        );
        const added = new Map<string, number>();
        for (const { kind } of inserted.rows) added.set(kind, (added.get(kind) ?? 0) + 1);
        if (added.size > 0) {
          await c.query(
            `INSERT INTO event_counts (conversation_id, kind, n) SELECT $1, * FROM unnest($2::text[], $3::int[])
             ON CONFLICT (conversation_id, kind) DO UPDATE SET n = event_counts.n + excluded.n`,
            [conversationId, [...added.keys()], [...added.values()]],
          );
        }
      }
      const after = await c.query<{ seq: number }>('SELECT seq FROM events WHERE conversation_id = $1 AND seq > $2 ORDER BY seq', [conversationId, acked]);
      for (const { seq } of after.rows) {
        if (seq !== acked + 1) break;
        acked = seq;
      }
      await c.query('UPDATE event_cursors SET acked_seq = $2 WHERE conversation_id = $1', [conversationId, acked]);
      return { acknowledgedSeq: acked, mismatched: mismatched.sort((a, b) => a - b) };
    });
  }

  async acknowledgedSeq(conversationId: string): Promise<number> {
    const r = await this.#pool.query<{ acked_seq: number }>('SELECT acked_seq FROM event_cursors WHERE conversation_id = $1', [conversationId]);
    return r.rows[0]?.acked_seq ?? 0;
  }

  async getMany(conversationId: string, ids: readonly string[], opts: { wire?: boolean } = {}): Promise<(string | undefined)[]> {
    if (ids.length === 0) return [];
    const r = await this.#pool.query<StoredRow & { event_id: string }>(`SELECT event_id, ${columns(opts.wire)} FROM events WHERE conversation_id = $1 AND event_id = ANY($2::text[])`, [
      conversationId,
      [...new Set(ids)],
    ]);
    const byId = new Map(r.rows.map((row) => [row.event_id, itemOf(row)]));
    return ids.map((id) => byId.get(id));
  }

  async search(conversationId: string, q: EventQuery): Promise<EventPage> {
    const { sql, args } = eventFilterSql(conversationId, q);
    const desc = q.descending === true;
    let cursor = '';
    if (q.fromSeq !== undefined) {
      cursor = desc ? ' AND seq <= ?' : ' AND seq >= ?';
      args.push(q.fromSeq);
    }
    args.push(q.limit + 1);
    const r = await this.#pool.query<StoredRow & { seq: number }>(numbered(`SELECT seq, ${columns(q.wire)} FROM events WHERE ${sql}${cursor} ORDER BY seq ${desc ? 'DESC' : 'ASC'} LIMIT ?`), args);
    const next = r.rows.length > q.limit ? r.rows[q.limit]!.seq : null;
    return { items: r.rows.slice(0, q.limit).map(itemOf), nextSeq: next };
  }

  async count(conversationId: string, f: EventFilter): Promise<number> {
    if (f.timestampGte === undefined && f.timestampLt === undefined) {
      // The kept counts: O(kinds), not O(events).
      const r =
        f.kind === undefined
          ? await this.#pool.query<{ n: number | null }>('SELECT SUM(n)::int AS n FROM event_counts WHERE conversation_id = $1', [conversationId])
          : await this.#pool.query<{ n: number | null }>('SELECT n FROM event_counts WHERE conversation_id = $1 AND kind = $2', [conversationId, f.kind]);
      return r.rows[0]?.n ?? 0;
    }
    const { sql, args } = eventFilterSql(conversationId, f);
    return (await this.#pool.query<{ n: number }>(numbered(`SELECT COUNT(*)::int AS n FROM events WHERE ${sql}`), args)).rows[0]!.n;
  }

  async lastTimestamp(conversationId: string): Promise<string | undefined> {
    const r = await this.#pool.query<{ ts: string | null }>('SELECT MAX(ts) AS ts FROM events WHERE conversation_id = $1', [conversationId]);
    return r.rows[0]?.ts ?? undefined;
  }

  async lastTimestamps(conversationIds: readonly string[]): Promise<Map<string, string>> {
    // One subquery per id, so each is the index's min/max lookup (a GROUP BY would scan every event).
    const r = await this.#pool.query<{ id: string; ts: string | null }>(
      'SELECT id, (SELECT MAX(ts) FROM events WHERE conversation_id = id) AS ts FROM unnest($1::text[]) AS id',
      [conversationIds],
    );
    return new Map(r.rows.filter((row) => row.ts !== null).map((row) => [row.id, row.ts!]));
  }

  async conversationIds(): Promise<string[]> {
    const r = await this.#pool.query<{ conversation_id: string }>('SELECT conversation_id FROM event_cursors UNION SELECT DISTINCT conversation_id FROM events');
    return r.rows.map((row) => row.conversation_id);
  }

  async purge(conversationId: string): Promise<void> {
    await inTransaction(this.#pool, async (c) => {
      await c.query('DELETE FROM events WHERE conversation_id = $1', [conversationId]);
      await c.query('DELETE FROM event_counts WHERE conversation_id = $1', [conversationId]);
      await c.query('DELETE FROM event_cursors WHERE conversation_id = $1', [conversationId]);
    });
  }
}
