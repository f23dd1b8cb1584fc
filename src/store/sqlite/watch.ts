// One SqliteStore watch: a cursor over the change log. Every event is read from the log, never
// handed over by the writer, so history and live changes come in one order with no gap or
// duplicate; the writer only wakes waiting cursors. better-sqlite3 is synchronous, so between a
// read that found nothing and parking on the wake-up promise no write can slip in.
import { Gone } from '../../api/errors.ts';
import type { KubeObject } from '../../api/meta.ts';
import type { WatchEvent } from '../types.ts';
import type { Labels } from '../label-selector.ts';
import type { ChangeRow } from './schema.ts';

const PAGE = 256;

export interface ChangeFeed {
  /**
   * Up to `limit` changes after `after`, the newest resourceVersion, and the newest dropped entry
   * of this kind: all read at one instant.
   */
  read(after: number, limit: number): { rows: ChangeRow[]; head: number; compacted: number };
  decode(body: string): KubeObject;
  /** Calls `wake` after every commit until the returned function is called. */
  subscribe(wake: () => void): () => void;
  isClosed(): boolean;
}

export interface WatchCursorOptions {
  feed: ChangeFeed;
  /** Deliver changes with resourceVersion greater than this. */
  after: number;
  /** Label predicate, or an error (a bad selector) to throw from the first next(). */
  matches: ((labels: Labels) => boolean) | Error;
  signal?: AbortSignal;
}

export class WatchCursor<T extends KubeObject> implements AsyncIterableIterator<WatchEvent<T>> {
  readonly #feed: ChangeFeed;
  readonly #matches: ((labels: Labels) => boolean) | Error;
  readonly #signal: AbortSignal | undefined;
  readonly #buffer: WatchEvent<T>[] = [];
  #cursor: number;
  #done = false;
  #started = false;
  #waiters: (() => void)[] = [];
  #unsubscribe: (() => void) | undefined;
  readonly #onAbort = (): void => this.#poke();

  constructor(opts: WatchCursorOptions) {
    this.#feed = opts.feed;
    this.#cursor = opts.after;
    this.#matches = opts.matches;
    this.#signal = opts.signal;
  }

  [Symbol.asyncIterator](): this {
    return this;
  }

  async next(): Promise<IteratorResult<WatchEvent<T>>> {
    if (!this.#started) this.#start();
    for (;;) {
      if (this.#done) return { value: undefined, done: true };
      const event = this.#buffer.shift();
      if (event) return { value: event, done: false };
      if (this.#signal?.aborted || this.#feed.isClosed()) return this.#finish();
      this.#fill();
      if (this.#buffer.length === 0) await new Promise<void>((resolve) => this.#waiters.push(resolve));
    }
  }

  async return(): Promise<IteratorResult<WatchEvent<T>>> {
    return this.#finish();
  }

  /** Wakes a parked next(); called by the store after each commit, on abort and on close. */
  #poke(): void {
    const waiters = this.#waiters;
    this.#waiters = [];
    for (const wake of waiters) wake();
  }

  #start(): void {
    this.#started = true;
    if (this.#matches instanceof Error) {
      this.#finish();
      throw this.#matches;
    }
    // Subscribing lazily means a watch nobody iterates holds nothing in the store.
    this.#unsubscribe = this.#feed.subscribe(() => this.#poke());
    this.#signal?.addEventListener('abort', this.#onAbort, { once: true });
  }

  #fill(): void {
    const { rows, head, compacted } = this.#feed.read(this.#cursor, PAGE);
    // Gone only if an entry this watch has not delivered yet was dropped.
    if (this.#cursor < compacted) {
      this.#finish();
      throw new Gone(`too old resource version: ${this.#cursor} (${compacted})`);
    }
    const matches = this.#matches as (labels: Labels) => boolean;
    for (const row of rows) {
      this.#cursor = row.rv;
      const event = this.#toEvent(row, matches);
      if (event) this.#buffer.push(event);
    }
    // A short page means nothing more of this kind up to head.
    if (rows.length < PAGE) this.#cursor = Math.max(this.#cursor, head);
  }

  /** As the API server's watch filter: entering the selection is ADDED, leaving it DELETED. */
  #toEvent(row: ChangeRow, matches: (labels: Labels) => boolean): WatchEvent<T> | undefined {
    const obj = this.#feed.decode(row.body) as T;
    const prev = row.prev_body === null ? undefined : (this.#feed.decode(row.prev_body) as T);
    const now = matches(obj.metadata.labels);
    const before = prev ? matches(prev.metadata.labels) : now;
    if (row.type === 'ADDED') return now ? { type: 'ADDED', object: obj } : undefined;
    if (row.type === 'DELETED') {
      if (now) return { type: 'DELETED', object: obj };
      return prev && before ? { type: 'DELETED', object: withRv(prev, row.rv) } : undefined;
    }
    if (now && before) return { type: 'MODIFIED', object: obj };
    if (now) return { type: 'ADDED', object: obj };
    if (before && prev) return { type: 'DELETED', object: withRv(prev, row.rv) };
    return undefined;
  }

  #finish(): IteratorResult<WatchEvent<T>> {
    this.#done = true;
    this.#buffer.length = 0;
    this.#unsubscribe?.();
    this.#unsubscribe = undefined;
    this.#signal?.removeEventListener('abort', this.#onAbort);
    this.#poke();
    return { value: undefined, done: true };
  }
}

function withRv<T extends KubeObject>(obj: T, rv: number): T {
  obj.metadata.resourceVersion = String(rv);
  return obj;
}
