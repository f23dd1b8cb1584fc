// ResourceStore on one SQLite file, for embedded mode: the API server's semantics for custom
// resources (one global resourceVersion, optimistic concurrency, spec/status split, finalizers,
// resumable watches with 410 Gone) without an API server. One process owns the file.
import { randomUUID } from 'node:crypto';
import Database from 'better-sqlite3';
import { BadRequest, Conflict, NotFound, Unavailable } from '../../api/errors.ts';
import type { KubeObject, OwnerReference, ResourceKind } from '../../api/meta.ts';
import { systemClock, type Clock } from '../../controller/clock.ts';
import { labelSelectorMatcher, matchesLabelSelector, parseLabelSelector, type LabelRequirement } from '../label-selector.ts';
import type { ListOptions, ListResult, ResourceStore, WatchEvent, WatchEventType, WatchOptions } from '../types.ts';
import { ObjectCodec } from './codec.ts';
import { collectDependents } from './garbage.ts';
import { openSchema, statements, type Statements } from './schema.ts';
import { ephemeralKey, loadOrCreateKeyFile, SecretBox } from './secret-box.ts';
import {
  DEFAULT_NAMESPACE,
  formatTime,
  hasFinalizers,
  markDeleting,
  namespaceOf,
  prepareCreate,
  prepareStatusUpdate,
  prepareUpdate,
  requireResourceVersion,
  sameLabels,
  sameObject,
  validate,
} from './semantics.ts';
import { WatchCursor, type ChangeFeed } from './watch.ts';

export interface SqliteStoreOptions {
  /** creationTimestamp and deletionTimestamp come from here. Default: the system clock. */
  clock?: Clock;
  /**
   * Change-log entries kept for watches (at least this many; compaction runs in steps). A watch
   * from an older resourceVersion gets Gone. Default 10 000.
   */
  eventRetention?: number;
  /** 32-byte AES-256 key for Secret data. Default: `<db>.key` beside the file (created 0600). */
  secretKey?: Buffer;
}

const DEFAULT_RETENTION = 10_000;
const SELECTOR_CACHE_SIZE = 1_000;
/** Shared lists kept (the facade asks for a few per user: conversations, sandboxes). */
const LIST_CACHE_SIZE = 1_000;
/** Compact once this many entries beyond the retention have piled up, not on every write. */
const COMPACT_STEP = 64;

export class SqliteStore implements ResourceStore {
  readonly #db: Database.Database;
  readonly #ownsDb: boolean;
  readonly #st: Statements;
  readonly #codec: ObjectCodec;
  readonly #clock: Clock;
  readonly #retention: number;
  /**
   * Watch cursors to wake after a commit, by kind: a commit wakes only the watches of the kinds it
   * wrote (each wake is a query of the change log). Waking every watch on every commit was the
   * largest CPU cost of a warm-pool start in `agentyard up` (issue #16): a dozen watches (the
   * controller's informers, the API's streams) each queried on each of a start's ~20 commits. Safe
   * because compaction is tracked per kind: a watch left behind by other kinds' writes is not Gone.
   */
  readonly #listeners = new Map<string, Set<() => void>>();
  /** The kinds the running transaction wrote (keys of #listeners). */
  readonly #written = new Set<string>();
  readonly #selectors = new Map<string, readonly LabelRequirement[]>();
  /**
   * Shared lists (ListOptions.shared) by kind, namespace and selector, with the write generation
   * they were read at. Every write of an object moves the generation (kept in memory: one process
   * owns the file, so no write goes past #write), so an entry of the current generation is what
   * the query would answer now, without asking SQLite even for the resourceVersion; any other is
   * stale. A write rolled back moves it too, which costs a read, never a stale answer.
   */
  readonly #lists = new Map<string, { generation: number; rv: string; items: readonly KubeObject[] }>();
  #generation = 0;
  /**
   * The change-log reads of the current write generation, by kind, namespace, position and page:
   * a commit wakes every watch of its kind, and those that stood at the same position (all of them,
   * usually: the controller's informer and the API's streams) read the same rows. Each such read
   * was three queries per watch per commit, the largest part of `up`'s CPU in a warm-pool start
   * after the writes themselves (issue #16). Rows are shared, never changed; each watch decodes its own objects.
   */
  readonly #feedReads = new Map<string, ReturnType<ChangeFeed['read']>>();
  /** The write generation #feedReads belong to; any write empties it. */
  #feedGeneration = 0;
  #committed = false;
  #closed = false;

  constructor(pathOrDb: string | Database.Database, opts: SqliteStoreOptions = {}) {
    this.#ownsDb = typeof pathOrDb === 'string';
    this.#db = typeof pathOrDb === 'string' ? new Database(pathOrDb) : pathOrDb;
    this.#clock = opts.clock ?? systemClock;
    this.#retention = opts.eventRetention ?? DEFAULT_RETENTION;
    if (!Number.isInteger(this.#retention) || this.#retention < 1) {
      throw new Error(`SqliteStore: eventRetention must be a positive integer, got ${opts.eventRetention}`);
    }
    try {
      openSchema(this.#db);
      this.#st = statements(this.#db);
      const inMemory = this.#db.memory || this.#db.name === '';
      const key = opts.secretKey ?? (inMemory ? ephemeralKey() : loadOrCreateKeyFile(`${this.#db.name}.key`));
      this.#codec = new ObjectCodec(new SecretBox(key));
    } catch (err) {
      if (this.#ownsDb) this.#db.close();
      throw err;
    }
  }

  /** The current (newest) resourceVersion. */
  get resourceVersion(): string {
    this.#checkOpen();
    return String(this.#st.counter.get('rv'));
  }

  /**
   * Drops change-log entries so that only the newest `keep` remain; returns the resourceVersion
   * compacted through (watches from before it get Gone). Runs on its own during writes; public
   * for tests and maintenance.
   */
  compact(keep = this.#retention): string {
    this.#checkOpen();
    return String(this.#db.transaction(() => this.#compactTo(this.#st.counter.get('rv')! - Math.max(0, keep))).immediate());
  }

  async get<T extends KubeObject>(kind: ResourceKind<T>, namespace: string, name: string): Promise<T | undefined> {
    this.#checkOpen();
    return this.#load(kind, namespace || DEFAULT_NAMESPACE, name);
  }

  async list<T extends KubeObject>(kind: ResourceKind<T>, namespace: string | undefined, opts: ListOptions = {}): Promise<ListResult<T>> {
    this.#checkOpen();
    const requirements = this.#requirements(opts.labelSelector);
    if (!opts.shared) return { items: this.#read(kind, namespace, requirements), resourceVersion: String(this.#st.counter.get('rv')) };
    const key = `${kind.apiVersion}\0${kind.kind}\0${namespace ?? ''}\0${opts.labelSelector ?? ''}`;
    let entry = this.#lists.get(key);
    if (entry?.generation !== this.#generation) {
      entry = { generation: this.#generation, rv: String(this.#st.counter.get('rv')), items: this.#read(kind, namespace, requirements).map(deepFreeze) };
      if (this.#lists.size >= LIST_CACHE_SIZE) this.#lists.clear();
      this.#lists.set(key, entry);
    }
    return { items: [...(entry.items as readonly T[])], resourceVersion: entry.rv };
  }

  async create<T extends KubeObject>(kind: ResourceKind<T>, obj: T): Promise<T> {
    this.#checkOpen();
    const next = prepareCreate(kind, obj, formatTime(this.#clock.now()), randomUUID());
    validate(kind, next);
    return this.#tx(() => {
      const { namespace, name } = next.metadata;
      if (this.#st.getObject.get(kind.apiVersion, kind.kind, namespace!, name) !== undefined) {
        throw new Conflict(`${kind.kind} ${namespace}/${name} already exists`);
      }
      return this.#write(kind, 'ADDED', next, undefined);
    });
  }

  async update<T extends KubeObject>(kind: ResourceKind<T>, obj: T): Promise<T> {
    this.#checkOpen();
    const now = formatTime(this.#clock.now());
    const rv = requireResourceVersion(kind, obj);
    validate(kind, { ...obj, apiVersion: kind.apiVersion, kind: kind.kind });
    return this.#tx(() => {
      const old = this.#current(kind, namespaceOf(obj), obj.metadata.name, rv);
      const next = prepareUpdate(kind, old, obj);
      // Removing the last finalizer of an object being deleted completes the delete.
      if (next.metadata.deletionTimestamp && !hasFinalizers(next)) return this.#remove(next, old, now);
      if (sameObject(old, next)) return old;
      return this.#write(kind, 'MODIFIED', next, old);
    });
  }

  async updateStatus<T extends KubeObject>(kind: ResourceKind<T>, obj: T): Promise<T> {
    this.#checkOpen();
    if (!kind.hasStatus) throw new BadRequest(`${kind.kind} has no status subresource`);
    const rv = requireResourceVersion(kind, obj);
    validate(kind, { ...obj, apiVersion: kind.apiVersion, kind: kind.kind });
    return this.#tx(() => {
      const old = this.#current(kind, namespaceOf(obj), obj.metadata.name, rv);
      const next = prepareStatusUpdate(old, obj);
      return sameObject(old, next) ? old : this.#write(kind, 'MODIFIED', next, old);
    });
  }

  async delete<T extends KubeObject>(
    kind: ResourceKind<T>,
    namespace: string,
    name: string,
    opts: { resourceVersion?: string } = {},
  ): Promise<void> {
    this.#checkOpen();
    const now = formatTime(this.#clock.now());
    this.#tx(() => {
      const old = this.#current(kind, namespace || DEFAULT_NAMESPACE, name, opts.resourceVersion);
      if (!hasFinalizers(old)) {
        this.#remove(old, undefined, now);
        return;
      }
      const marked = markDeleting(old, now);
      if (marked) this.#write(kind, 'MODIFIED', marked, old);
    });
  }

  watch<T extends KubeObject>(kind: ResourceKind<T>, namespace: string | undefined, opts: WatchOptions = {}): AsyncIterable<WatchEvent<T>> {
    this.#checkOpen();
    let matches: ReturnType<typeof labelSelectorMatcher> | Error;
    let after = Number(this.#st.counter.get('rv'));
    try {
      matches = labelSelectorMatcher(opts.labelSelector);
      if (opts.resourceVersion !== undefined) after = parseRv(opts.resourceVersion);
    } catch (err) {
      matches = err as Error;
    }
    const feed: ChangeFeed = {
      read: (from, limit) => this.#changes(kind, namespace, from, limit),
      decode: (body) => this.#codec.decode(body),
      subscribe: (wake) => {
        const key = kindKey(kind);
        let set = this.#listeners.get(key);
        if (!set) this.#listeners.set(key, (set = new Set()));
        set.add(wake);
        return () => set.delete(wake);
      },
      isClosed: () => this.#closed,
    };
    return new WatchCursor<T>({ feed, after, matches, ...(opts.signal ? { signal: opts.signal } : {}) });
  }

  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#notify();
    if (this.#ownsDb) this.#db.close();
  }

  #changes(kind: ResourceKind, namespace: string | undefined, from: number, limit: number): ReturnType<ChangeFeed['read']> {
    const key = `${kindKey(kind)}\0${namespace ?? ''}\0${from}\0${limit}`;
    if (this.#feedGeneration !== this.#generation) {
      this.#feedReads.clear();
      this.#feedGeneration = this.#generation;
    }
    const cached = this.#feedReads.get(key);
    if (cached) return cached;
    const st = this.#st;
    const result = {
      rows: namespace ? st.changesNamespace.all(kind.apiVersion, kind.kind, from, namespace, limit) : st.changesAll.all(kind.apiVersion, kind.kind, from, limit),
      head: st.counter.get('rv')!,
      compacted: st.compactedFor.get(kind.apiVersion, kind.kind) ?? 0,
    };
    this.#feedReads.set(key, result);
    return result;
  }

  /** A selector parsed once: the facade lists by the same few (one per user) on every request. */
  #requirements(selector: string | undefined): readonly LabelRequirement[] {
    if (!selector) return [];
    let parsed = this.#selectors.get(selector);
    if (!parsed) {
      parsed = parseLabelSelector(selector); // throws Invalid, which is not kept
      if (this.#selectors.size >= SELECTOR_CACHE_SIZE) this.#selectors.clear();
      this.#selectors.set(selector, parsed);
    }
    return parsed;
  }

  /**
   * The rows a list has to look at: with a requirement the label index can answer (a value, a set
   * of values, or the key), only the objects that carry it, unsorted; otherwise the kind's whole
   * namespace in list order. Either way the caller matches the whole selector.
   */
  #rows(kind: ResourceKind, namespace: string | undefined, requirements: readonly LabelRequirement[]): { bodies: string[]; sorted: boolean } {
    const { apiVersion, kind: k } = kind;
    const byValue = requirements.find((r) => r.operator === 'Equals' || r.operator === 'In');
    if (byValue) {
      const q = { apiVersion, kind: k, key: byValue.key, values: JSON.stringify(byValue.values) };
      return { bodies: namespace ? this.#st.listByLabelValuesNamespace.all({ ...q, namespace }) : this.#st.listByLabelValuesAll.all(q), sorted: false };
    }
    const byKey = requirements.find((r) => r.operator === 'Exists');
    if (byKey) {
      const q = { apiVersion, kind: k, key: byKey.key };
      return { bodies: namespace ? this.#st.listByLabelKeyNamespace.all({ ...q, namespace }) : this.#st.listByLabelKeyAll.all(q), sorted: false };
    }
    return { bodies: namespace ? this.#st.listNamespace.all(apiVersion, k, namespace) : this.#st.listAll.all(apiVersion, k), sorted: true };
  }

  /** The objects a list answers, decoded, in the API server's order. */
  #read<T extends KubeObject>(kind: ResourceKind<T>, namespace: string | undefined, requirements: readonly LabelRequirement[]): T[] {
    const { bodies, sorted } = this.#rows(kind, namespace, requirements);
    const items = bodies.map((body) => this.#codec.decode<T>(body)).filter((o) => matchesLabelSelector(requirements, o.metadata.labels));
    // The API server's order, by the string "namespace/name" (as listAll orders).
    if (!sorted) items.sort((a, b) => compareKeys(`${a.metadata.namespace}/${a.metadata.name}`, `${b.metadata.namespace}/${b.metadata.name}`));
    return items;
  }

  #checkOpen(): void {
    if (this.#closed) throw new Unavailable('SqliteStore is closed');
  }

  #load<T extends KubeObject>(kind: ResourceKind<T>, namespace: string, name: string): T | undefined {
    const body = this.#st.getObject.get(kind.apiVersion, kind.kind, namespace, name);
    return body === undefined ? undefined : this.#codec.decode<T>(body);
  }

  /** The stored object, checked against an expected resourceVersion (when given). */
  #current<T extends KubeObject>(kind: ResourceKind<T>, namespace: string, name: string, rv: string | undefined): T {
    const old = this.#load(kind, namespace, name);
    if (!old) throw new NotFound(`${kind.kind} ${namespace}/${name} not found`);
    if (rv && old.metadata.resourceVersion !== rv) {
      throw new Conflict(
        `${kind.kind} ${namespace}/${name}: the object has been modified (resourceVersion ${rv}, now ${old.metadata.resourceVersion}); read it again and retry`,
      );
    }
    return old;
  }

  /** Removes an object inside a transaction, then its dependents as the garbage collector would. */
  #remove<T extends KubeObject>(obj: T, prev: T | undefined, now: string): T {
    this.#write(obj, 'DELETED', obj, prev);
    collectDependents(obj, now, {
      dependents: (namespace, uid) =>
        this.#st.mentioning
          .all(namespace, uid)
          .map((body) => this.#codec.decode(body))
          .filter((o) => o.metadata.ownerReferences?.some((r) => r.uid === uid)),
      exists: (namespace, ref: OwnerReference) => {
        const body = this.#st.getObject.get(ref.apiVersion, ref.kind, namespace, ref.name);
        return body !== undefined && (JSON.parse(body) as KubeObject).metadata.uid === ref.uid;
      },
      remove: (dep) => this.#remove(dep, undefined, now),
      modify: (next, prev) => this.#write(next, 'MODIFIED', next, prev),
    });
    return obj;
  }

  /**
   * One write inside a transaction: new resourceVersion, the row, and its change-log entry.
   * `kind` only names the table key, so objects of any kind (garbage collection) can be written.
   */
  #write<T extends KubeObject>(kind: { apiVersion: string; kind: string }, type: WatchEventType, obj: T, prev: T | undefined): T {
    this.#generation++;
    const rv = this.#st.nextRv.get()!;
    obj.metadata.resourceVersion = String(rv);
    const namespace = obj.metadata.namespace!;
    const name = obj.metadata.name;
    const body = this.#codec.encode(obj);
    const labelsChanged = !prev || !sameLabels(prev, obj);
    if (type === 'DELETED') this.#st.deleteObject.run(kind.apiVersion, kind.kind, namespace, name);
    else this.#st.putObject.run(kind.apiVersion, kind.kind, namespace, name, rv, body);
    if (type === 'DELETED' || labelsChanged) {
      this.#st.deleteLabels.run(kind.apiVersion, kind.kind, namespace, name);
      if (type !== 'DELETED') {
        for (const [key, value] of Object.entries(obj.metadata.labels ?? {})) this.#st.putLabel.run(kind.apiVersion, kind.kind, key, value, namespace, name);
      }
    }
    const prevBody = prev && labelsChanged ? this.#codec.encode(prev) : null;
    this.#st.appendChange.run(rv, kind.apiVersion, kind.kind, namespace, name, type, body, prevBody);
    if (rv - this.#retention - this.#st.counter.get('compacted_rv')! >= COMPACT_STEP) this.#compactTo(rv - this.#retention);
    this.#committed = true;
    this.#written.add(kindKey(kind));
    return obj;
  }

  #compactTo(target: number): number {
    const compacted = this.#st.counter.get('compacted_rv')!;
    if (target <= compacted) return compacted;
    this.#generation++; // compact() runs outside #write: what watches read moves here too
    this.#st.markCompacted.run(target);
    this.#st.compact.run(target);
    this.#st.setCompacted.run(target);
    return target;
  }

  /** Runs a write transaction and wakes watchers once it has committed. */
  #tx<R>(fn: () => R): R {
    this.#committed = false;
    this.#written.clear();
    const result = this.#db.transaction(fn).immediate();
    if (this.#committed) this.#notify(this.#written);
    return result;
  }

  /** Wakes the watches of `kinds` (all of them when not given: the store closes). */
  #notify(kinds?: ReadonlySet<string>): void {
    const wakes: (() => void)[] = [];
    for (const [key, set] of this.#listeners) if (!kinds || kinds.has(key)) wakes.push(...set);
    for (const wake of wakes) wake();
  }
}

const kindKey = (kind: { apiVersion: string; kind: string }): string => `${kind.apiVersion}\u0000${kind.kind}`;

/** Freezes an object and everything in it, so a caller that modifies a shared list item fails at once. */
function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const v of Object.values(value)) deepFreeze(v);
  }
  return value;
}

/** Names and namespaces are ASCII, so string order is SQLite's byte order (listAll's ORDER BY). */
function compareKeys(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function parseRv(rv: string): number {
  if (!/^\d+$/.test(rv)) throw new BadRequest(`invalid resourceVersion ${JSON.stringify(rv)}`);
  return Number(rv);
}
