// Events of every conversation, in append order, each with a per-conversation sequence number
// (1, 2, 3, ... without gaps). The sequence number is the order clients page, replay and resume by.
import { eventFilterSql } from '../../util/event-filter-sql.ts';
import type { Statement } from 'better-sqlite3';
import { Conflict } from '../../api/errors.ts';
import type { Event } from '../../api/events/index.ts';
import { normalizeEventKind } from '../../api/events/index.ts';
import type { Db } from './db.ts';
import type { StorageHealth } from './storage-health.ts';
import { normalizeTimestamp } from './wire.ts';

export interface StoredEvent {
  seq: number;
  /** The full JSON form (nulls kept). */
  json: string;
}

/** An appended event the disk did not take yet: it has its sequence number and waits in memory. */
interface HeldEvent extends StoredEvent {
  id: string;
  kind: string;
  source: string;
  ts: string;
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
  readonly #storage: StorageHealth | undefined;
  readonly #lastSeq = new Map<string, number>();
  /**
   * Per conversation, in sequence order: events appended while the disk refused writes. They are
   * numbered, published and pushed to the sink like saved ones (reads by sequence include them), and
   * written by writeHeld() once the disk takes writes again. Bounded: a faulted store stops the run.
   */
  readonly #held = new Map<string, HeldEvent[]>();
  readonly #stmts = new Map<string, Statement>();
  readonly #insert: Statement;
  readonly #maxSeq: Statement;
  readonly #byId: Statement;
  readonly #after: Statement;

  constructor(db: Db, storage?: StorageHealth) {
    this.#db = db;
    this.#storage = storage;
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

  /**
   * Appends in one transaction and returns the stored form; `saved` is false when the disk refused
   * it (a storage fault, reported to StorageHealth): then it is held in memory with its number.
   * Throws Conflict on a duplicate id.
   */
  append(conversationId: string, event: Event): StoredEvent & { saved: boolean } {
    const json = JSON.stringify(event);
    const seq = this.lastSeq(conversationId) + 1;
    const ts = normalizeTimestamp(event.timestamp) ?? event.timestamp;
    // Held events go to disk first, so that the table never has a gap.
    if (this.#held.size > 0) this.#storage?.retry();
    if (this.#held.size === 0) {
      try {
        this.#insert.run(conversationId, seq, event.id, event.kind, event.source ?? '', ts, json);
        this.#lastSeq.set(conversationId, seq);
        return { seq, json, saved: true };
      } catch (err) {
        if ((err as { code?: string }).code === 'SQLITE_CONSTRAINT_UNIQUE') {
          throw new Conflict(`Event ${event.id} already exists in conversation ${conversationId}`, { cause: err });
        }
        if (!this.#storage?.report(err)) throw err;
      }
    } else if (this.get(conversationId, event.id)) {
      throw new Conflict(`Event ${event.id} already exists in conversation ${conversationId}`);
    }
    let held = this.#held.get(conversationId);
    if (!held) this.#held.set(conversationId, (held = []));
    held.push({ seq, json, id: event.id, kind: event.kind, source: event.source ?? '', ts });
    this.#lastSeq.set(conversationId, seq);
    return { seq, json, saved: false };
  }

  /** How many events wait in memory for the disk. */
  heldCount(): number {
    let n = 0;
    for (const h of this.#held.values()) n += h.length;
    return n;
  }

  /** Writes the held events; inside the caller's transaction, followed by heldWritten() once it committed. */
  writeHeld(): void {
    for (const [conversationId, rows] of this.#held) {
      for (const r of rows) this.#insert.run(conversationId, r.seq, r.id, r.kind, r.source, r.ts, r.json);
    }
  }

  heldWritten(): void {
    this.#held.clear();
  }

  get(conversationId: string, eventId: string): StoredEvent | undefined {
    const row = this.#byId.get(conversationId, eventId) as StoredEvent | undefined;
    if (row || this.#held.size === 0) return row;
    const held = this.#held.get(conversationId)?.find((h) => h.id === eventId);
    return held && { seq: held.seq, json: held.json };
  }

  /** Up to `limit` events with seq > afterSeq, oldest first (held ones included). */
  after(conversationId: string, afterSeq: number, limit: number): StoredEvent[] {
    const rows = this.#after.all(conversationId, afterSeq, limit) as StoredEvent[];
    const held = this.#held.get(conversationId);
    if (!held || rows.length >= limit) return rows;
    const from = rows.length > 0 ? rows[rows.length - 1]!.seq : afterSeq;
    for (const h of held) {
      if (rows.length >= limit) break;
      if (h.seq > from) rows.push({ seq: h.seq, json: h.json });
    }
    return rows;
  }

  /** Every event, oldest first, parsed (held ones included). */
  all(conversationId: string): Event[] {
    const rows = this.#db.prepare('SELECT json FROM events WHERE conversation_id = ? ORDER BY seq').all(conversationId) as { json: string }[];
    for (const h of this.#held.get(conversationId) ?? []) rows.push({ json: h.json });
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

  /** Id of the last saved event that is not a state update (the HEAD of the event tree), or null. */
  /** The value of the last ConversationStateUpdateEvent with this key (e.g. `goal`), undefined when none. */
  lastStateValue(conversationId: string, key: string): unknown {
    const row = this.#stmt("SELECT json FROM events WHERE conversation_id = ? AND kind = 'ConversationStateUpdateEvent' AND json_extract(json, '$.key') = ? ORDER BY seq DESC LIMIT 1").get(conversationId, key) as { json: string } | undefined;
    return row ? (JSON.parse(row.json) as { value: unknown }).value : undefined;
  }

  lastNodeId(conversationId: string): string | null {
    const row = this.#stmt("SELECT id FROM events WHERE conversation_id = ? AND kind != 'ConversationStateUpdateEvent' ORDER BY seq DESC LIMIT 1").get(conversationId) as { id: string } | undefined;
    return row?.id ?? null;
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
    this.#held.delete(conversationId);
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
