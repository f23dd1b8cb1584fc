// The app's durable copy of every conversation's events, fed by the event sink. It outlives the
// sandbox, so ERROR and MISSING conversations stay readable. Paging cursors are sequence numbers,
// which stay stable while events are appended.
import type Database from 'better-sqlite3';
import type { Statement } from 'better-sqlite3';
import { eventFilterSql } from '../../util/event-filter-sql.ts';
import { excludeNone, normalizeTimestamp, toWireJson } from '../../agent-server/store/wire.ts';
import type { EventFilter, EventPage, EventQuery, EventStore, IngestItem, IngestResult } from './types.ts';

export type { EventFilter, EventPage, EventQuery, IngestItem, IngestResult } from './types.ts';

/** Newest timestamps kept at most (a map entry each); past it the map starts again. */
const NEWEST_KEPT = 10_000;

export class EventLog implements EventStore {
  readonly #db: Database.Database;
  readonly #stmts = new Map<string, Statement>();
  /**
   * Each conversation's newest event timestamp (or null: none), as lastTimestamps read it: every
   * search page asks for its twenty, and those reads were the biggest cost of the facade's search
   * left (issue #16). This connection's ingests and purges drop a conversation's entry; `#fresh`
   * (SqliteAppStore's data_version check) drops them all when another connection has committed.
   */
  readonly #newest = new Map<string, string | null>();
  readonly #fresh: () => void;

  constructor(db: Database.Database, fresh: () => void = () => this.#newest.clear()) {
    this.#db = db;
    this.#fresh = fresh;
  }

  /** Forget every kept timestamp (another connection may have written events). */
  dropKept(): void {
    this.#newest.clear();
  }

  async ingest(conversationId: string, items: readonly IngestItem[]): Promise<IngestResult> {
    // Dropped, not updated: the next read asks SQLite, whose MAX(ts) order is the one that counts.
    this.#newest.delete(conversationId);
    return this.#db
      .transaction((): IngestResult => {
        const mismatched: number[] = [];
        const added = new Map<string, number>();
        const insert = this.#st('INSERT OR IGNORE INTO events (conversation_id, seq, event_id, kind, source, ts, json, wire) VALUES (?, ?, ?, ?, ?, ?, ?, ?)');
        for (const { seq, event } of [...items].sort((a, b) => a.seq - b.seq)) {
          const ts = normalizeTimestamp(event.timestamp) ?? event.timestamp;
          // OR IGNORE: the seq already held (a resend), or the same event id at another seq (a
          // replay we already hold). Only an ignored row needs a look at what is held there.
          if (insert.run(conversationId, seq, event.id, event.kind, event.source ?? '', ts, JSON.stringify(event), JSON.stringify(excludeNone(event))).changes === 1) {
            added.set(event.kind, (added.get(event.kind) ?? 0) + 1);
            continue;
          }
          const held = this.#st('SELECT event_id FROM events WHERE conversation_id = ? AND seq = ?').get(conversationId, seq) as { event_id: string } | undefined;
          if (held && held.event_id !== event.id) mismatched.push(seq);
        }
        const bump = this.#st('INSERT INTO event_counts (conversation_id, kind, n) VALUES (?, ?, ?) ON CONFLICT (conversation_id, kind) DO UPDATE SET n = n + excluded.n');
        for (const [kind, n] of added) bump.run(conversationId, kind, n);
        let acked = this.#acked(conversationId);
        const has = this.#st('SELECT 1 FROM events WHERE conversation_id = ? AND seq = ?');
        while (has.get(conversationId, acked + 1) !== undefined) acked++;
        this.#st('INSERT INTO event_cursors (conversation_id, acked_seq) VALUES (?, ?) ON CONFLICT (conversation_id) DO UPDATE SET acked_seq = excluded.acked_seq').run(
          conversationId,
          acked,
        );
        return { acknowledgedSeq: acked, mismatched };
      })
      .immediate();
  }

  async acknowledgedSeq(conversationId: string): Promise<number> {
    return this.#acked(conversationId);
  }

  #acked(conversationId: string): number {
    const row = this.#st('SELECT acked_seq FROM event_cursors WHERE conversation_id = ?').get(conversationId) as { acked_seq: number } | undefined;
    return row?.acked_seq ?? 0;
  }

  async getMany(conversationId: string, ids: readonly string[], opts: { wire?: boolean } = {}): Promise<(string | undefined)[]> {
    const get = this.#st(`SELECT ${columns(opts.wire)} FROM events WHERE conversation_id = ? AND event_id = ?`);
    return ids.map((id) => {
      const row = get.get(conversationId, id) as StoredRow | undefined;
      return row && itemOf(row);
    });
  }

  async search(conversationId: string, q: EventQuery): Promise<EventPage> {
    const { sql, args } = where(conversationId, q);
    const desc = q.descending === true;
    let cursor = '';
    if (q.fromSeq !== undefined) {
      cursor = desc ? ' AND seq <= ?' : ' AND seq >= ?';
      args.push(q.fromSeq);
    }
    args.push(q.limit + 1);
    const rows = this.#st(`SELECT seq, ${columns(q.wire)} FROM events WHERE ${sql}${cursor} ORDER BY seq ${desc ? 'DESC' : 'ASC'} LIMIT ?`).all(...args) as (StoredRow & {
      seq: number;
    })[];
    const next = rows.length > q.limit ? rows[q.limit]!.seq : null;
    return { items: rows.slice(0, q.limit).map(itemOf), nextSeq: next };
  }

  async count(conversationId: string, f: EventFilter): Promise<number> {
    if (f.timestampGte === undefined && f.timestampLt === undefined) {
      // The kept counts: O(kinds), not O(events).
      const row = (f.kind === undefined
        ? this.#st('SELECT SUM(n) AS n FROM event_counts WHERE conversation_id = ?').get(conversationId)
        : this.#st('SELECT n FROM event_counts WHERE conversation_id = ? AND kind = ?').get(conversationId, f.kind)) as { n: number | null } | undefined;
      return row?.n ?? 0;
    }
    const { sql, args } = where(conversationId, f);
    return (this.#st(`SELECT COUNT(*) AS n FROM events WHERE ${sql}`).get(...args) as { n: number }).n;
  }

  async lastTimestamp(conversationId: string): Promise<string | undefined> {
    return (await this.lastTimestamps([conversationId])).get(conversationId);
  }

  async lastTimestamps(conversationIds: readonly string[]): Promise<Map<string, string>> {
    this.#fresh();
    const missing = conversationIds.filter((id) => !this.#newest.has(id));
    if (missing.length > 0) {
      // One subquery per id, so each is the index's min/max lookup (a GROUP BY would scan every event).
      const rows = this.#st('SELECT j.value AS id, (SELECT MAX(ts) FROM events WHERE conversation_id = j.value) AS ts FROM json_each(?) j').all(
        JSON.stringify(missing),
      ) as { id: string; ts: string | null }[];
      if (this.#newest.size + rows.length > NEWEST_KEPT) this.#newest.clear();
      for (const r of rows) this.#newest.set(r.id, r.ts);
    }
    const out = new Map<string, string>();
    for (const id of conversationIds) {
      const ts = this.#newest.get(id);
      if (ts !== undefined && ts !== null) out.set(id, ts);
    }
    return out;
  }

  async conversationIds(): Promise<string[]> {
    const rows = this.#st('SELECT conversation_id FROM event_cursors UNION SELECT DISTINCT conversation_id FROM events').all() as {
      conversation_id: string;
    }[];
    return rows.map((r) => r.conversation_id);
  }

  async purge(conversationId: string): Promise<void> {
    this.purgeSync(conversationId);
  }

  /** For SqliteAppStore.purgeConversation's transaction. */
  purgeSync(conversationId: string): void {
    this.#newest.delete(conversationId);
    this.#db.transaction(() => {
      this.#st('DELETE FROM events WHERE conversation_id = ?').run(conversationId);
      this.#st('DELETE FROM event_counts WHERE conversation_id = ?').run(conversationId);
      this.#st('DELETE FROM event_cursors WHERE conversation_id = ?').run(conversationId);
    })();
  }

  #st(sql: string): Statement {
    let s = this.#stmts.get(sql);
    if (!s) {
      s = this.#db.prepare(sql);
      this.#stmts.set(sql, s);
    }
    return s;
  }
}

/** A row as read: the wire form when asked for and stored, else the full form. */
export interface StoredRow {
  json: string | null;
  wire?: string | null;
}

/** Columns for the form asked for; the full form is read for the wire form only where none is stored. */
export function columns(wire: boolean | undefined): string {
  return wire ? 'wire, CASE WHEN wire IS NULL THEN json END AS json' : 'json';
}

export function itemOf(row: StoredRow): string {
  if (row.wire) return row.wire;
  return row.wire === null ? toWireJson(row.json!) : row.json!;
}

function where(conversationId: string, f: EventFilter): { sql: string; args: unknown[] } {
  return eventFilterSql(conversationId, f);
}
