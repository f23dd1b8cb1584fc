// Runs reconcilers over a ResourceStore the way controller-runtime does: list+watch each kind into
// a work queue of `namespace/name` keys, map related objects onto each other, and let workers
// reconcile. After a restart everything is recomputed from the store and the runtime.
import { setTimeout as sleep } from 'node:timers/promises';
import { ConversationKind, type Conversation } from '../api/conversation.ts';
import { Gone } from '../api/errors.ts';
import { LABEL_SANDBOX, type KubeObject, type ResourceKind } from '../api/meta.ts';
import { SandboxKind, type Sandbox } from '../api/sandbox.ts';
import type { ResourceStore } from '../store/types.ts';
import type { Logger } from '../util/log.ts';
import { defaultRegistry, type Registry } from '../util/metrics.ts';
import { InformerCache } from './cache.ts';
import { objectKey } from './keys.ts';
import { queueMetrics, sandboxPhases, startTaskSteps } from './metrics.ts';
import { WorkQueue, type Reconcile } from './queue.ts';

export interface ControllerSpec<T extends KubeObject> {
  name: string;
  kind: ResourceKind<T>;
  reconcile: Reconcile;
  /** Sees every change of the primary kind before it is queued (for indexes). */
  observe?: (obj: T, deleted: boolean) => void;
  /**
   * controller-runtime's update predicate on the primary kind: a watched change from `old` to `obj`
   * for which it returns false queues nothing (the cache and `observe` still see it). Lists,
   * additions and deletions always queue.
   */
  updatePredicate?: (old: T, obj: T) => boolean;
  /** Other kinds whose changes enqueue keys of this controller. */
  watches?: { kind: ResourceKind; map: (obj: KubeObject, deleted: boolean) => string[] }[];
  /** Events from outside the store (controller-runtime's source.Channel): e.g. the runtime's liveness watch. */
  sources?: Source[];
  workers?: number;
}

/** Feeds keys into a controller's queue until `signal` aborts. */
export type Source = (enqueue: (key: string) => void, signal: AbortSignal) => Promise<void>;

const RELIST_BACKOFF_MS = 1_000;

export class Controller {
  readonly #store: ResourceStore;
  readonly #namespace: string | undefined;
  readonly #log: Logger | undefined;
  readonly #specs: ControllerSpec<KubeObject>[] = [];
  readonly #queues = new Map<string, WorkQueue>();
  readonly #abort = new AbortController();
  readonly #running: Promise<void>[] = [];
  readonly #metrics: Registry;
  readonly #caches = new Map<string, InformerCache>();

  /** `metrics`: where reconcile and work-queue metrics go (default: the process's registry). */
  constructor(opts: { store: ResourceStore; namespace?: string; log?: Logger; metrics?: Registry }) {
    this.#store = opts.store;
    this.#namespace = opts.namespace;
    this.#log = opts.log;
    this.#metrics = opts.metrics ?? defaultRegistry();
  }

  register<T extends KubeObject>(spec: ControllerSpec<T>): this {
    this.#specs.push(spec as unknown as ControllerSpec<KubeObject>);
    return this;
  }

  queue(name: string): WorkQueue | undefined {
    return this.#queues.get(name);
  }

  /** The informer cache of a kind this controller watches (from start() on); reconcilers read it through a CachedStore. */
  cache(kind: ResourceKind): InformerCache | undefined {
    return this.#caches.get(cacheKey(kind));
  }

  async start(): Promise<void> {
    /**
     * `listed`: the object came from a (re)list, not a watch event: its key waits in the low-priority
     * lane. `old`: for a watched modification, the object as the cache held it before.
     */
    type Handler = (obj: KubeObject, deleted: boolean, listed: boolean, old?: KubeObject) => void;
    const feeds = new Map<ResourceKind, Handler[]>();
    const feed = (kind: ResourceKind, fn: Handler) => feeds.set(kind, [...(feeds.get(kind) ?? []), fn]);
    for (const spec of this.#specs) {
      const workers = spec.workers ?? 2;
      const queue = new WorkQueue({
        metrics: queueMetrics(this.#metrics, spec.name, workers),
        onError: (key, err, terminal) => this.#log?.warn({ controller: spec.name, key, err, terminal }, 'reconcile failed'),
      });
      this.#queues.set(spec.name, queue);
      feed(spec.kind, (obj, deleted, listed, old) => {
        spec.observe?.(obj, deleted);
        if (old && !deleted && spec.updatePredicate && !spec.updatePredicate(old, obj)) return;
        queue.add(objectKey(obj.metadata.namespace, obj.metadata.name), { lowPriority: listed });
      });
      for (const w of spec.watches ?? []) feed(w.kind, (obj, deleted, listed) => w.map(obj, deleted).forEach((k) => queue.add(k, { lowPriority: listed })));
      for (const source of spec.sources ?? []) {
        this.#running.push(
          source((key) => queue.add(key), this.#abort.signal).catch((err: unknown) => {
            if (!this.#abort.signal.aborted) this.#log?.error({ controller: spec.name, err }, 'event source stopped');
          }),
        );
      }
    }
    // Sandboxes by phase, from the Sandbox informer that a registered controller already runs.
    if (feeds.has(SandboxKind)) feed(SandboxKind, sandboxPhases(this.#metrics));
    if (feeds.has(ConversationKind)) feed(ConversationKind, startTaskSteps(this.#metrics));
    const synced: Promise<void>[] = [];
    for (const [kind, handlers] of feeds) {
      let markSynced!: () => void;
      synced.push(new Promise<void>((r) => (markSynced = r)));
      this.#running.push(this.#informer(kind, (obj, deleted, listed, old) => handlers.forEach((h) => h(obj, deleted, listed, old)), markSynced));
    }
    await Promise.all(synced);
    // Workers start once every informer has listed (controller-runtime's WaitForCacheSync): a pass
    // reads indexes fed by the informers (conversations per sandbox), complete only from then on.
    for (const spec of this.#specs) {
      const queue = this.#queues.get(spec.name)!;
      for (let i = 0; i < (spec.workers ?? 2); i++) this.#running.push(queue.work(spec.reconcile));
    }
  }

  async stop(): Promise<void> {
    this.#abort.abort();
    for (const q of this.#queues.values()) q.shutdown();
    await Promise.allSettled(this.#running);
  }

  /**
   * List, then watch from the list's resourceVersion; relist on Gone or a broken watch. An object a
   * relist no longer finds was deleted while no watch ran: handlers are told so (with its last
   * state in the cache), or indexes fed by them would keep it for good. The cache (cache(kind)) is
   * filled before handlers run, so a pass they queue reads at least what they saw.
   */
  async #informer(kind: ResourceKind, onChange: (obj: KubeObject, deleted: boolean, listed: boolean, old?: KubeObject) => void, synced: () => void): Promise<void> {
    const signal = this.#abort.signal;
    const cache = new InformerCache(this.#namespace);
    this.#caches.set(cacheKey(kind), cache);
    while (!signal.aborted) {
      try {
        const list = await this.#store.list(kind, this.#namespace);
        const listed = new Set(list.items.map((o) => objectKey(o.metadata.namespace, o.metadata.name)));
        const gone = [...cache.values()].filter((o) => !listed.has(objectKey(o.metadata.namespace, o.metadata.name)));
        cache.replace(list.items, list.resourceVersion);
        for (const obj of gone) onChange(obj, true, true);
        for (const item of list.items) onChange(item, false, true);
        synced();
        for await (const event of this.#store.watch(kind, this.#namespace, { resourceVersion: list.resourceVersion, signal })) {
          const old = event.type === 'MODIFIED' ? cache.peek(event.object.metadata.namespace, event.object.metadata.name) : undefined;
          cache.apply(event);
          onChange(event.object, event.type === 'DELETED', false, old);
        }
      } catch (err) {
        if (signal.aborted) return;
        // Gone is the normal end of a watch that fell behind: relist at once. Anything else waits a little.
        if (err instanceof Gone) continue;
        this.#log?.warn({ kind: kind.kind, err }, 'watch failed; relisting');
        await sleep(RELIST_BACKOFF_MS, undefined, { signal }).catch(() => undefined);
      }
    }
  }
}

function cacheKey(kind: ResourceKind): string {
  return `${kind.apiVersion}/${kind.kind}`;
}

/** A Conversation change wakes its Sandbox (conversation count). */
export function sandboxKeysOfConversation(obj: KubeObject): string[] {
  const conv = obj as Conversation;
  const name = conv.status?.sandboxName ?? conv.metadata.labels?.[LABEL_SANDBOX];
  return name ? [objectKey(conv.metadata.namespace, name)] : [];
}

/**
 * Conversations per sandbox by the sandbox label, without those being deleted: the count a Sandbox's
 * status shows, read from memory instead of a list of all conversations on every pass.
 */
export class ConversationCounts {
  readonly #bySandbox = new Map<string, Set<string>>();
  readonly #byConversation = new Map<string, string>();
  /** Conversations whose execution status is `running` (a running agent is activity: no idle pause). */
  readonly #running = new Set<string>();

  observe(obj: KubeObject, deleted: boolean): void {
    const convKey = objectKey(obj.metadata.namespace, obj.metadata.name);
    this.#running.delete(convKey);
    if (!deleted && !obj.metadata.deletionTimestamp && (obj as Conversation).status?.executionStatus === 'running') this.#running.add(convKey);
    const previous = this.#byConversation.get(convKey);
    if (previous) {
      const set = this.#bySandbox.get(previous)!;
      set.delete(convKey);
      if (set.size === 0) this.#bySandbox.delete(previous);
      this.#byConversation.delete(convKey);
    }
    const sandbox = obj.metadata.labels?.[LABEL_SANDBOX];
    if (deleted || obj.metadata.deletionTimestamp || !sandbox) return;
    const sandboxKey = objectKey(obj.metadata.namespace, sandbox);
    this.#byConversation.set(convKey, sandboxKey);
    this.#bySandbox.set(sandboxKey, (this.#bySandbox.get(sandboxKey) ?? new Set()).add(convKey));
  }

  of(sb: KubeObject): number {
    return this.#bySandbox.get(objectKey(sb.metadata.namespace, sb.metadata.name))?.size ?? 0;
  }

  /** How many of the sandbox's conversations are running. */
  runningOn(sb: KubeObject): number {
    let n = 0;
    for (const key of this.#bySandbox.get(objectKey(sb.metadata.namespace, sb.metadata.name)) ?? []) if (this.#running.has(key)) n++;
    return n;
  }
}

/** Which conversations sit on which sandbox, so a Sandbox change can wake its waiting starts. */
export class PlacementIndex {
  readonly #bySandbox = new Map<string, Set<string>>();
  readonly #byConversation = new Map<string, string>();

  observe(obj: KubeObject, deleted: boolean): void {
    const convKey = objectKey(obj.metadata.namespace, obj.metadata.name);
    const previous = this.#byConversation.get(convKey);
    if (previous) this.#bySandbox.get(previous)?.delete(convKey);
    this.#byConversation.delete(convKey);
    const [sandboxKey] = deleted ? [] : sandboxKeysOfConversation(obj);
    if (!sandboxKey) return;
    this.#byConversation.set(convKey, sandboxKey);
    this.#bySandbox.set(sandboxKey, (this.#bySandbox.get(sandboxKey) ?? new Set()).add(convKey));
  }

  conversationsOf(sb: KubeObject): string[] {
    return [...(this.#bySandbox.get(objectKey(sb.metadata.namespace, sb.metadata.name)) ?? [])];
  }
}

export { ConversationKind, SandboxKind, type Sandbox };
