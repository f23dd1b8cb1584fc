// Bash events (BashCommand, BashOutput) in the agent server's SQLite file, beside the conversation
// events: they survive a restart like everything else the server answers about, and search,
// paging and filters are one indexed query instead of a directory scan.
import type { StoredBashEvent as BashEvent, StoredBashEventPage as BashEventPage } from '../../api/agent-server/bash.ts';
import type { Db } from '../store/db.ts';

const DDL = `
CREATE TABLE IF NOT EXISTS bash_events (
  seq        INTEGER PRIMARY KEY AUTOINCREMENT,
  id         TEXT NOT NULL UNIQUE,
  kind       TEXT NOT NULL,
  command_id TEXT,
  ord        INTEGER,
  -- UTC ISO with milliseconds: string order is time order.
  ts         TEXT NOT NULL,
  json       TEXT NOT NULL
) STRICT;
CREATE INDEX IF NOT EXISTS bash_events_by_command ON bash_events (command_id, seq);
`;

export interface BashSearch {
  kind?: 'BashCommand' | 'BashOutput';
  commandId?: string;
  timestampGte?: string;
  timestampLt?: string;
  orderGt?: number;
  descending: boolean;
  /** The seq of the first event of the page (an earlier page's next_page_id). */
  pageId?: string;
  limit: number;
}

export class BashEventStore {
  readonly #db: Db;

  constructor(db: Db) {
    this.#db = db;
    db.exec(DDL);
  }

  append(e: BashEvent): number {
    const row = this.#db
      .prepare('INSERT INTO bash_events (id, kind, command_id, ord, ts, json) VALUES (?, ?, ?, ?, ?, ?)')
      .run(e.id, e.kind, e.kind === 'BashOutput' ? e.command_id : e.id, e.kind === 'BashOutput' ? e.order : null, e.timestamp, JSON.stringify(e));
    return Number(row.lastInsertRowid);
  }

  get(id: string): BashEvent | undefined {
    const row = this.#db.prepare('SELECT json FROM bash_events WHERE id = ?').get(id) as { json: string } | undefined;
    return row ? (JSON.parse(row.json) as BashEvent) : undefined;
  }

  /** Events after `afterSeq` in insertion order (the socket's replay), with their seq. */
  since(afterSeq: number, limit: number): { seq: number; event: BashEvent }[] {
    const rows = this.#db.prepare('SELECT seq, json FROM bash_events WHERE seq > ? ORDER BY seq LIMIT ?').all(afterSeq, limit) as { seq: number; json: string }[];
    return rows.map((r) => ({ seq: r.seq, event: JSON.parse(r.json) as BashEvent }));
  }

  lastSeq(): number {
    return (this.#db.prepare('SELECT COALESCE(MAX(seq), 0) AS s FROM bash_events').get() as { s: number }).s;
  }

  /** Insertion order is time order (one writer, timestamps taken at insert), so pages go by seq. */
  search(q: BashSearch): BashEventPage {
    const where: string[] = [];
    const args: (string | number)[] = [];
    if (q.kind) where.push('kind = ?'), args.push(q.kind);
    if (q.commandId) where.push('command_id = ?'), args.push(q.commandId);
    if (q.timestampGte) where.push('ts >= ?'), args.push(q.timestampGte);
    if (q.timestampLt) where.push('ts < ?'), args.push(q.timestampLt);
    if (q.orderGt !== undefined) where.push('ord IS NOT NULL AND ord > ?'), args.push(q.orderGt);
    if (q.pageId !== undefined && /^\d+$/.test(q.pageId)) where.push(q.descending ? 'seq <= ?' : 'seq >= ?'), args.push(Number(q.pageId));
    const sql = `SELECT seq, json FROM bash_events ${where.length ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY seq ${q.descending ? 'DESC' : 'ASC'} LIMIT ?`;
    const rows = this.#db.prepare(sql).all(...args, q.limit + 1) as { seq: number; json: string }[];
    const next = rows.length > q.limit ? String(rows[q.limit]!.seq) : null;
    return { items: rows.slice(0, q.limit).map((r) => JSON.parse(r.json) as BashEvent), next_page_id: next };
  }

  clear(): number {
    return this.#db.prepare('DELETE FROM bash_events').run().changes;
  }
}
