// Bash events (BashCommand, BashOutput) in the agent server's SQLite file, beside the conversation
// events: they survive a restart like everything else the server answers about, and search,
// paging and filters are one indexed query instead of a directory scan.
// A store has a scope: '' for the server's own commands (/api/bash), a conversation id for the
// commands run through that conversation's runtime routes (/api/conversations/{id}/bash). Scopes
// never see each other's events, as OpenHands keeps them in separate directories.
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

/** Files written before scopes existed: every event they hold is the server's own (scope ''). */
function addScope(db: Db): void {
  const cols = db.prepare('PRAGMA table_info(bash_events)').all() as { name: string }[];
  if (!cols.some((c) => c.name === 'scope')) db.exec("ALTER TABLE bash_events ADD COLUMN scope TEXT NOT NULL DEFAULT ''");
  db.exec('CREATE INDEX IF NOT EXISTS bash_events_by_scope ON bash_events (scope, seq)');
}

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
  readonly #scope: string;

  constructor(db: Db, scope = '') {
    this.#db = db;
    this.#scope = scope;
    db.exec(DDL);
    addScope(db);
  }

  append(e: BashEvent): number {
    const row = this.#db
      .prepare('INSERT INTO bash_events (id, kind, command_id, ord, ts, json, scope) VALUES (?, ?, ?, ?, ?, ?, ?)')
      .run(e.id, e.kind, e.kind === 'BashOutput' ? e.command_id : e.id, e.kind === 'BashOutput' ? e.order : null, e.timestamp, JSON.stringify(e), this.#scope);
    return Number(row.lastInsertRowid);
  }

  get(id: string): BashEvent | undefined {
    const row = this.#db.prepare('SELECT json FROM bash_events WHERE id = ? AND scope = ?').get(id, this.#scope) as { json: string } | undefined;
    return row ? (JSON.parse(row.json) as BashEvent) : undefined;
  }

  /** Events after `afterSeq` in insertion order (the socket's replay), with their seq. */
  since(afterSeq: number, limit: number): { seq: number; event: BashEvent }[] {
    const rows = this.#db.prepare('SELECT seq, json FROM bash_events WHERE scope = ? AND seq > ? ORDER BY seq LIMIT ?').all(this.#scope, afterSeq, limit) as { seq: number; json: string }[];
    return rows.map((r) => ({ seq: r.seq, event: JSON.parse(r.json) as BashEvent }));
  }

  lastSeq(): number {
    return (this.#db.prepare('SELECT COALESCE(MAX(seq), 0) AS s FROM bash_events WHERE scope = ?').get(this.#scope) as { s: number }).s;
  }

  /** Insertion order is time order (one writer, timestamps taken at insert), so pages go by seq. */
  search(q: BashSearch): BashEventPage {
    const where: string[] = ['scope = ?'];
    const args: (string | number)[] = [this.#scope];
    if (q.kind) where.push('kind = ?'), args.push(q.kind);
    if (q.commandId) where.push('command_id = ?'), args.push(q.commandId);
    if (q.timestampGte) where.push('ts >= ?'), args.push(q.timestampGte);
    if (q.timestampLt) where.push('ts < ?'), args.push(q.timestampLt);
    if (q.orderGt !== undefined) where.push('ord IS NOT NULL AND ord > ?'), args.push(q.orderGt);
    if (q.pageId !== undefined && /^\d+$/.test(q.pageId)) where.push(q.descending ? 'seq <= ?' : 'seq >= ?'), args.push(Number(q.pageId));
    const sql = `SELECT seq, json FROM bash_events WHERE ${where.join(' AND ')} ORDER BY seq ${q.descending ? 'DESC' : 'ASC'} LIMIT ?`;
    const rows = this.#db.prepare(sql).all(...args, q.limit + 1) as { seq: number; json: string }[];
    const next = rows.length > q.limit ? String(rows[q.limit]!.seq) : null;
    return { items: rows.slice(0, q.limit).map((r) => JSON.parse(r.json) as BashEvent), next_page_id: next };
  }

  clear(): number {
    return this.#db.prepare('DELETE FROM bash_events WHERE scope = ?').run(this.#scope).changes;
  }
}
