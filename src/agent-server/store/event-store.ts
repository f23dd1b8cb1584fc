// Events of every conversation, in append order, each with a per-conversation sequence number
// (1, 2, 3, ... without gaps). The sequence number is the order clients page, replay and resume by.
import { eventFilterSql } from '../../util/event-filter-sql.ts';
import type { Statement } from 'better-sqlite3';
import { Conflict } from '../../api/errors.ts';
import type { Event } from '../../api/events/index.ts';
import { normalizeEventKind } from '../../api/events/index.ts';
import type { Db } from './db.ts';
import { normalizeTimestamp } from './wire.ts';

export interface StoredEvent {
  seq: number;
  /** The full JSON form (nulls kept). */
  json: string;
}

/** Filters shared by search and count. Timestamps are already normalised (see wire.ts). */
export interface EventFilter {
  kind?: string;
  source?: string;
  /** Case-insensitive substring of a MessageEvent's text, extended content or reasoning. */
  body?: string;
  timestampGte?: string;
  timestampLt?: string;
}

export interface EventSearch extends EventFilter {
  /** Inclusive cursor: the sequence number of the first event of the page. */
  fromSeq?: number;
  limit: number;
  descending?: boolean;
}

export interface EventSearchResult {
  items: StoredEvent[];
  /** Sequence number of the first event of the next page, or null when this is the last page. */
  nextSeq: number | null;
}

function textOf(blocks: unknown): string[] {
  if (!Array.isArray(blocks)) return [];
  return blocks.flatMap((b) => (b && typeof b === 'object' && typeof (b as { text?: unknown }).text === 'string' ? [(b as { text: string }).text] : []));
}

/** What the `body` filter searches (OpenHands matches MessageEvent text only). */
function bodyMatches(json: string, needle: string): boolean {
  const ev = JSON.parse(json) as { kind: string; llm_message?: { content?: unknown; reasoning_content?: unknown }; extended_content?: unknown };
  if (ev.kind !== 'MessageEvent') return false;
  const parts = [...textOf(ev.llm_message?.content), ...textOf(ev.extended_content)];
  if (typeof ev.llm_message?.reasoning_content === 'string') parts.push(ev.llm_message.reasoning_content);
  return parts.some((p) => p.toLowerCase().includes(needle));
}

export class EventStore {
  readonly #db: Db;
  readonly #lastSeq = new Map<string, number>();
  readonly #stmts = new Map<string, Statement>();
  readonly #insert: Statement;
  readonly #maxSeq: Statement;
  readonly #byId: Statement;
  readonly #after: Statement;

  constructor(db: Db) {
    this.#db = db;
    this.#insert = db.prepare('INSERT INTO events (conversation_id, seq, id, kind, source, ts, json) VALUES (?, ?, ?, ?, ?, ?, ?)');
    this.#maxSeq = db.prepare('SELECT COALESCE(MAX(seq), 0) AS seq FROM events WHERE conversation_id = ?');
    this.#byId = db.prepare('SELECT seq, json FROM events WHERE conversation_id = ? AND id = ?');
    this.#after = db.prepare('SELECT seq, json FROM events WHERE conversation_id = ? AND seq > ? ORDER BY seq LIMIT ?');
  }

  lastSeq(conversationId: string): number {
    let seq = this.#lastSeq.get(conversationId);
    if (seq === undefined) {
      seq = (this.#maxSeq.get(conversationId) as { seq: number }).seq;
      this.#lastSeq.set(conversationId, seq);
    }
    return seq;
  }

  /** Appends in one transaction and returns the stored form. Throws Conflict on a duplicate id. */
  append(conversationId: string, event: Event): StoredEvent {
    const json = JSON.stringify(event);
    const seq = this.lastSeq(conversationId) + 1;
    const ts = normalizeTimestamp(event.timestamp) ?? event.timestamp;
    try {
      this.#insert.run(conversationId, seq, event.id, event.kind, event.source ?? '', ts, json);
    } catch (err) {
      if ((err as { code?: string }).code === 'SQLITE_CONSTRAINT_UNIQUE') {
        throw new Conflict(`Event ${event.id} already exists in conversation ${conversationId}`, { cause: err });
      }
      throw err;
    }
    this.#lastSeq.set(conversationId, seq);
    return { seq, json };
  }

  get(conversationId: string, eventId: string): StoredEvent | undefined {
    return this.#byId.get(conversationId, eventId) as StoredEvent | undefined;
  }

  /** Up to `limit` events with seq > afterSeq, oldest first. */
  after(conversationId: string, afterSeq: number, limit: number): StoredEvent[] {
    return this.#after.all(conversationId, afterSeq, limit) as StoredEvent[];
  }

  /** Every event, oldest first, parsed. */
  all(conversationId: string): Event[] {
    const rows = this.#db.prepare('SELECT json FROM events WHERE conversation_id = ? ORDER BY seq').all(conversationId) as { json: string }[];
    return rows.map((r) => JSON.parse(r.json) as Event);
  }

  /** Events with ts >= `timestamp` (normalised), oldest first; for WebSocket `resend_mode=since`. */
  firstSeqAtOrAfter(conversationId: string, timestamp: string): number {
    const row = this.#db
      .prepare('SELECT MIN(seq) AS seq FROM events WHERE conversation_id = ? AND ts >= ?')
      .get(conversationId, timestamp) as { seq: number | null };
    return row.seq ?? this.lastSeq(conversationId) + 1;
  }

  search(conversationId: string, q: EventSearch): EventSearchResult {
    const { sql, args } = this.#where(conversationId, q);
    const desc = q.descending === true;
    const cursor = q.fromSeq === undefined ? '' : desc ? ' AND seq <= ?' : ' AND seq >= ?';
    if (q.fromSeq !== undefined) args.push(q.fromSeq);
    const stmt = this.#stmt(`SELECT seq, json FROM events WHERE ${sql}${cursor} ORDER BY seq ${desc ? 'DESC' : 'ASC'}`);
    const needle = q.body?.toLowerCase();
    const items: StoredEvent[] = [];
    for (const row of stmt.iterate(...args) as IterableIterator<StoredEvent>) {
      if (needle !== undefined && !bodyMatches(row.json, needle)) continue;
      if (items.length === q.limit) return { items, nextSeq: row.seq };
      items.push(row);
    }
    return { items, nextSeq: null };
  }

  count(conversationId: string, f: EventFilter): number {
    const { sql, args } = this.#where(conversationId, f);
    if (f.body === undefined) return (this.#stmt(`SELECT COUNT(*) AS n FROM events WHERE ${sql}`).get(...args) as { n: number }).n;
    const needle = f.body.toLowerCase();
    let n = 0;
    for (const row of this.#stmt(`SELECT json FROM events WHERE ${sql}`).iterate(...args) as IterableIterator<{ json: string }>) {
      if (bodyMatches(row.json, needle)) n++;
    }
    return n;
  }

  /** Copies events 1..uptoSeq of `from` into the empty conversation `to`, keeping ids and seqs. */
  copy(from: string, to: string, uptoSeq: number): void {
    this.#db
      .prepare('INSERT INTO events (conversation_id, seq, id, kind, source, ts, json) SELECT ?, seq, id, kind, source, ts, json FROM events WHERE conversation_id = ? AND seq <= ?')
      .run(to, from, uptoSeq);
    this.#lastSeq.delete(to);
  }

  deleteConversation(conversationId: string): void {
    this.#db.prepare('DELETE FROM events WHERE conversation_id = ?').run(conversationId);
    this.#lastSeq.delete(conversationId);
  }

  #where(conversationId: string, f: EventFilter): { sql: string; args: unknown[] } {
    // Short name, OpenHands' dotted class path, or its namespaced discriminator key.
    const kind = f.kind === undefined ? undefined : (normalizeEventKind(f.kind) ?? f.kind);
    return eventFilterSql(conversationId, { ...f, ...(kind !== undefined ? { kind } : {}) });
  }

  #stmt(sql: string): Statement {
    let s = this.#stmts.get(sql);
    if (!s) {
      s = this.#db.prepare(sql);
      this.#stmts.set(sql, s);
    }
    return s;
  }
}
