// The controller's informer cache and the client that reads from it (controller-runtime's cache and
// its delegating client): a reconcile reads its objects from memory and writes to the store. On a
// cluster a GET per pass was most of a pass's time — at 10,000 Sandboxes the first pass alone was
// 10,000 GETs — and the cache is kept current by the watch the controller runs anyway. A read may
// lag the store by the watch's delay: a write based on it then fails its resourceVersion
// precondition (Conflict) and the key is retried, and the write's own watch event queues the key
// again, as in controller-runtime.
import type { KubeObject, ResourceKind } from '../api/meta.ts';
import { labelSelectorMatcher } from '../store/label-selector.ts';
import type { ListOptions, ListResult, ResourceStore, WatchEvent, WatchOptions } from '../store/types.ts';
import { objectKey } from './keys.ts';

/** One kind's objects as the controller's informer last saw them (one namespace, or all). */
export class InformerCache {
  readonly #objects = new Map<string, KubeObject>();
  /** undefined: every namespace. */
  readonly namespace: string | undefined;
  #synced = false;
  #resourceVersion = '';

  constructor(namespace: string | undefined) {
    this.namespace = namespace;
  }

  /** Whether the first list has filled it: before that, reads go to the store. */
  get synced(): boolean {
    return this.#synced;
  }

  get size(): number {
    return this.#objects.size;
  }

  /** A (re)list: its objects replace the cache's. */
  replace(items: readonly KubeObject[], resourceVersion: string): void {
    this.#objects.clear();
    for (const o of items) this.#objects.set(objectKey(o.metadata.namespace, o.metadata.name), o);
    this.#resourceVersion = resourceVersion;
    this.#synced = true;
  }

  /** A watch event. */
  apply(event: WatchEvent<KubeObject>): void {
    const key = objectKey(event.object.metadata.namespace, event.object.metadata.name);
    if (event.type === 'DELETED') this.#objects.delete(key);
    else this.#objects.set(key, event.object);
    if (event.object.metadata.resourceVersion) this.#resourceVersion = event.object.metadata.resourceVersion;
  }

  peek(namespace: string | undefined, name: string): KubeObject | undefined {
    return this.#objects.get(objectKey(namespace, name));
  }

  /** Whether reads of `namespace` (undefined: all) can be served from here. */
  covers(namespace: string | undefined): boolean {
    return this.#synced && (this.namespace === undefined || this.namespace === namespace);
  }

  get resourceVersion(): string {
    return this.#resourceVersion;
  }

  values(): IterableIterator<KubeObject> {
    return this.#objects.values();
  }
}

/**
 * A ResourceStore whose get and list of the cached kinds come from the controller's informer
 * caches; everything else (other kinds, other namespaces, every write, watches) goes to `store`.
 * Reads return copies: a reconciler may change what it read without changing the cache.
 */
export class CachedStore implements ResourceStore {
  readonly #store: ResourceStore;
  readonly #cacheOf: (kind: ResourceKind) => InformerCache | undefined;

  /** `cacheOf`: the controller's cache of a kind, looked up at each read (it exists once the controller starts). */
  constructor(store: ResourceStore, cacheOf: (kind: ResourceKind) => InformerCache | undefined) {
    this.#store = store;
    this.#cacheOf = cacheOf;
  }

  async get<T extends KubeObject>(kind: ResourceKind<T>, namespace: string, name: string): Promise<T | undefined> {
    const cache = this.#cacheOf(kind);
    if (!cache?.covers(namespace)) return this.#store.get(kind, namespace, name);
    const obj = cache.peek(namespace, name);
    return obj && (structuredClone(obj) as T);
  }

  async list<T extends KubeObject>(kind: ResourceKind<T>, namespace: string | undefined, opts: ListOptions = {}): Promise<ListResult<T>> {
    const cache = this.#cacheOf(kind);
    if (!cache?.covers(namespace)) return this.#store.list(kind, namespace, opts);
    const matches = labelSelectorMatcher(opts.labelSelector);
    const items: T[] = [];
    for (const obj of cache.values()) {
      if (namespace !== undefined && obj.metadata.namespace !== namespace) continue;
      if (matches(obj.metadata.labels)) items.push(structuredClone(obj) as T);
    }
    const key = (o: KubeObject) => `${o.metadata.namespace ?? ''}/${o.metadata.name}`;
    items.sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0));
    return { items, resourceVersion: cache.resourceVersion };
  }

  create<T extends KubeObject>(kind: ResourceKind<T>, obj: T): Promise<T> {
    return this.#store.create(kind, obj);
  }

  update<T extends KubeObject>(kind: ResourceKind<T>, obj: T): Promise<T> {
    return this.#store.update(kind, obj);
  }

  updateStatus<T extends KubeObject>(kind: ResourceKind<T>, obj: T): Promise<T> {
    return this.#store.updateStatus(kind, obj);
  }

  delete<T extends KubeObject>(kind: ResourceKind<T>, namespace: string, name: string, opts?: { resourceVersion?: string }): Promise<void> {
    return this.#store.delete(kind, namespace, name, opts);
  }

  watch<T extends KubeObject>(kind: ResourceKind<T>, namespace: string | undefined, opts?: WatchOptions): AsyncIterable<WatchEvent<T>> {
    return this.#store.watch(kind, namespace, opts);
  }
}
