// A list+watch cache over any ResourceStore, for the controller: the initial list fills the cache,
// a watch from the list's resourceVersion keeps it current, a watch that fails is resumed from the
// last resourceVersion after a backoff, and Gone (410) triggers a fresh list whose differences are
// emitted as events. client-node's own informer stops on any non-410 error; this one never stops
// until stop() is called.
import type { KubeObject, ResourceKind } from '../../api/meta.ts';
import { Gone } from '../../api/errors.ts';
import { createLogger, type Logger } from '../../util/log.ts';
import type { ResourceStore, WatchEvent } from '../types.ts';

export type InformerHandler<T> = (event: WatchEvent<T>) => void;

export interface InformerOptions {
  /** Undefined: all namespaces. */
  namespace?: string;
  labelSelector?: string;
  backoffStartMs?: number;
  backoffMaxMs?: number;
  log?: Logger;
}

export function objectKey(obj: KubeObject): string {
  return `${obj.metadata.namespace ?? ''}/${obj.metadata.name}`;
}

export class Informer<T extends KubeObject> {
  readonly #store: ResourceStore;
  readonly #kind: ResourceKind<T>;
  readonly #opts: InformerOptions;
  readonly #log: Logger;
  readonly #cache = new Map<string, T>();
  readonly #handlers = new Set<InformerHandler<T>>();
  #abort: AbortController | undefined;
  #loop: Promise<void> | undefined;
  #synced = false;
  #lastRv = '';
  #sleepTimer: NodeJS.Timeout | undefined;
  #wakeSleep: (() => void) | undefined;
  /** How many times the cache was (re)filled from a list; tests and metrics read it. */
  lists = 0;

  constructor(store: ResourceStore, kind: ResourceKind<T>, opts: InformerOptions = {}) {
    this.#store = store;
    this.#kind = kind;
    this.#opts = opts;
    this.#log = opts.log ?? createLogger('informer');
  }

  /** Handlers run synchronously for every change, in order; returns an unsubscribe function. */
  on(handler: InformerHandler<T>): () => void {
    this.#handlers.add(handler);
    return () => this.#handlers.delete(handler);
  }

  get synced(): boolean {
    return this.#synced;
  }

  /** The resourceVersion the cache reflects. */
  get resourceVersion(): string {
    return this.#lastRv;
  }

  get(namespace: string, name: string): T | undefined {
    return this.#cache.get(`${namespace}/${name}`);
  }

  list(namespace?: string): T[] {
    const all = [...this.#cache.values()];
    return namespace === undefined ? all : all.filter((o) => o.metadata.namespace === namespace);
  }

  /** Resolves once the first list has filled the cache (retrying it with backoff until it works). */
  async start(): Promise<void> {
    if (this.#loop) throw new Error('informer already started');
    const abort = new AbortController();
    this.#abort = abort;
    let resolveSynced!: () => void;
    const synced = new Promise<void>((r) => (resolveSynced = r));
    this.#loop = this.#run(abort.signal, resolveSynced);
    await Promise.race([synced, this.#loop]);
  }

  async stop(): Promise<void> {
    this.#abort?.abort();
    clearTimeout(this.#sleepTimer);
    this.#wakeSleep?.();
    await this.#loop;
    this.#loop = undefined;
  }

  async #run(signal: AbortSignal, onSynced: () => void): Promise<void> {
    const start = this.#opts.backoffStartMs ?? 1000;
    const max = this.#opts.backoffMaxMs ?? 30_000;
    let backoff = start;
    let needList = true;
    while (!signal.aborted) {
      try {
        if (needList) {
          await this.#relist();
          needList = false;
          backoff = start;
          if (!this.#synced) {
            this.#synced = true;
            onSynced();
          }
        }
        await this.#watch(signal, () => (backoff = start));
        // The stream ended without an error: only an abort does that.
      } catch (err) {
        if (signal.aborted) break;
        if (err instanceof Gone) {
          this.#log.info({ kind: this.#kind.kind, rv: this.#lastRv }, 'watch expired; relisting');
          needList = true;
          continue;
        }
        this.#log.warn({ kind: this.#kind.kind, err: String(err), backoffMs: backoff }, 'list/watch failed; retrying');
        await this.#sleep(backoff);
        backoff = Math.min(backoff * 2, max);
      }
    }
  }

  async #relist(): Promise<void> {
    const { namespace, labelSelector } = this.#opts;
    const res = await this.#store.list(this.#kind, namespace, labelSelector ? { labelSelector } : {});
    this.lists++;
    const fresh = new Map(res.items.map((o) => [objectKey(o), o] as const));
    const events: WatchEvent<T>[] = [];
    for (const [key, old] of this.#cache) {
      if (!fresh.has(key)) events.push({ type: 'DELETED', object: old });
    }
    for (const [key, obj] of fresh) {
      const old = this.#cache.get(key);
      if (!old) events.push({ type: 'ADDED', object: obj });
      else if (old.metadata.resourceVersion !== obj.metadata.resourceVersion) events.push({ type: 'MODIFIED', object: obj });
    }
    this.#cache.clear();
    for (const [key, obj] of fresh) this.#cache.set(key, obj);
    this.#lastRv = res.resourceVersion;
    for (const e of events) this.#emit(e);
  }

  async #watch(signal: AbortSignal, onEvent: () => void): Promise<void> {
    const { namespace, labelSelector } = this.#opts;
    const stream = this.#store.watch(this.#kind, namespace, {
      resourceVersion: this.#lastRv,
      signal,
      ...(labelSelector ? { labelSelector } : {}),
    });
    for await (const event of stream) {
      onEvent();
      const key = objectKey(event.object);
      if (event.type === 'DELETED') this.#cache.delete(key);
      else this.#cache.set(key, event.object);
      if (event.object.metadata.resourceVersion) this.#lastRv = event.object.metadata.resourceVersion;
      this.#emit(event);
    }
  }

  #emit(event: WatchEvent<T>): void {
    for (const h of this.#handlers) {
      try {
        h(event);
      } catch (err) {
        this.#log.error({ kind: this.#kind.kind, err: String(err) }, 'informer handler threw');
      }
    }
  }

  #sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      this.#wakeSleep = resolve;
      this.#sleepTimer = setTimeout(resolve, ms);
    });
  }
}
