// A de-duplicating work queue with client-go's guarantees: a key is queued at most once, is never
// processed by two workers at once, and a key made dirty while it is processed runs once more.
// Failed keys back off exponentially per key; deadlines of all keys are served by one timer over
// a heap of due times. Keys queued by an informer's (re)list wait in a low-priority lane behind
// everything else, as in controller-runtime's priority queue: after a restart with 10,000 objects
// the first pass over all of them must not hold up a deadline or a change that falls due meanwhile.
import { performance } from 'node:perf_hooks';
import { DeadlineHeap } from './deadline-heap.ts';

export class TerminalError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'TerminalError';
  }
}

export interface Result {
  requeueAfterMs?: number;
}

export type Reconcile = (key: string, signal: AbortSignal) => Promise<Result>;

/** What a queue reports for Prometheus (src/controller/metrics.ts names it as controller-runtime does). */
export interface QueueMetrics {
  /** A key was queued (not a duplicate). */
  added(): void;
  /** Keys waiting for a worker, after a change. */
  depth(n: number): void;
  /** A worker took a key that waited `seconds` since it was queued. */
  waited(seconds: number): void;
  /** A pass ended: `result` as controller-runtime labels it, `seconds` it took. */
  reconciled(result: 'success' | 'error' | 'requeue_after', seconds: number, terminal: boolean): void;
  /** A failed key was put back with backoff. */
  retried(): void;
  /** Workers in a pass now. */
  active(n: number): void;
}

export interface QueueOptions {
  /** First retry delay after an error; doubles per consecutive failure of the key. */
  baseDelayMs?: number;
  /** Cap of the per-key backoff. */
  maxDelayMs?: number;
  /** Per-pass timeout; the pass's AbortSignal fires after it. */
  passTimeoutMs?: number;
  onError?: (key: string, err: Error, terminal: boolean) => void;
  /** The wall clock deadlines are measured on (tests use fake timers, which fake Date.now too). */
  now?: () => number;
  metrics?: QueueMetrics;
}

/** setTimeout's limit (~24.8 days); a longer wait re-arms when it fires. */
const MAX_TIMER_MS = 2 ** 31 - 1;

export class WorkQueue {
  readonly #queue: string[] = [];
  /** The low-priority lane: keys only a list queued. An entry not in #lowKeys was promoted or taken. */
  readonly #low: string[] = [];
  #lowHead = 0;
  readonly #lowKeys = new Set<string>();
  readonly #dirty = new Set<string>();
  readonly #processing = new Set<string>();
  readonly #failures = new Map<string, number>();
  readonly #delayed = new DeadlineHeap();
  #timer: NodeJS.Timeout | undefined;
  #timerDue: number | undefined;
  #waiters: (() => void)[] = [];
  #idleWaiters: (() => void)[] = [];
  #shuttingDown = false;
  readonly #opts: Required<Omit<QueueOptions, 'onError' | 'metrics'>> & Pick<QueueOptions, 'onError'>;
  readonly #metrics: QueueMetrics | undefined;
  /** When each queued key was queued (only kept with metrics: queue latency). */
  readonly #queuedAt = new Map<string, number>();

  constructor(opts: QueueOptions = {}) {
    const { metrics, ...rest } = opts;
    this.#opts = { baseDelayMs: 5, maxDelayMs: 1_000_000, passTimeoutMs: 60_000, now: Date.now, ...rest };
    this.#metrics = metrics;
  }

  #pushed(key: string): void {
    if (!this.#metrics) return;
    this.#queuedAt.set(key, this.#opts.now());
    this.#metrics.depth(this.length);
  }

  /** Keys waiting to be handed to a worker (not the delayed ones). */
  get length(): number {
    return this.#queue.length + this.#lowKeys.size;
  }

  /** Of those, the keys waiting in the low-priority lane. */
  get lowPriority(): number {
    return this.#lowKeys.size;
  }

  /** Keys waiting for a deadline or a backoff. */
  get delayed(): number {
    return this.#delayed.size;
  }

  get shuttingDown(): boolean {
    return this.#shuttingDown;
  }

  /**
   * Queues the key. `lowPriority`: only a list saw it (no change, no deadline), so it waits behind
   * every other key; a later add without it moves the key to the front lane.
   */
  add(key: string, opts: { lowPriority?: boolean } = {}): void {
    if (this.#shuttingDown) return;
    if (this.#dirty.has(key)) {
      if (!opts.lowPriority && this.#lowKeys.delete(key)) this.#queue.push(key);
      return;
    }
    this.#dirty.add(key);
    this.#metrics?.added();
    if (this.#processing.has(key)) return; // re-queued by done()
    if (opts.lowPriority) {
      this.#lowKeys.add(key);
      this.#low.push(key);
    } else this.#queue.push(key);
    this.#pushed(key);
    this.#wake();
  }

  /** The next key: the front lane first, then the low-priority one. */
  #take(): string | undefined {
    if (this.#queue.length) return this.#queue.shift();
    while (this.#lowHead < this.#low.length) {
      const key = this.#low[this.#lowHead++]!;
      if (this.#lowHead > 1024 && this.#lowHead * 2 > this.#low.length) {
        this.#low.splice(0, this.#lowHead);
        this.#lowHead = 0;
      }
      if (this.#lowKeys.delete(key)) return key;
    }
    this.#low.length = 0;
    this.#lowHead = 0;
    return undefined;
  }

  /** Adds the key once `ms` have passed; an earlier pending deadline of the key wins. */
  addAfter(key: string, ms: number): void {
    if (this.#shuttingDown) return;
    if (ms <= 0) return this.add(key);
    if (this.#delayed.push(key, this.#opts.now() + ms)) this.#armTimer();
  }

  addRateLimited(key: string): void {
    this.addAfter(key, this.#nextBackoff(key));
  }

  forget(key: string): void {
    this.#failures.delete(key);
  }

  failures(key: string): number {
    return this.#failures.get(key) ?? 0;
  }

  /** Takes the next key, waiting for one; undefined once shut down and drained. */
  async get(): Promise<string | undefined> {
    while (this.length === 0) {
      if (this.#shuttingDown) return undefined;
      await new Promise<void>((resolve) => this.#waiters.push(resolve));
    }
    const key = this.#take()!;
    this.#dirty.delete(key);
    this.#processing.add(key);
    if (this.#metrics) {
      const at = this.#queuedAt.get(key);
      this.#queuedAt.delete(key);
      if (at !== undefined) this.#metrics.waited(Math.max(0, this.#opts.now() - at) / 1000);
      this.#metrics.depth(this.length);
      this.#metrics.active(this.#processing.size);
    }
    return key;
  }

  done(key: string): void {
    this.#processing.delete(key);
    this.#metrics?.active(this.#processing.size);
    if (this.#dirty.has(key)) {
      this.#queue.push(key);
      this.#pushed(key);
      this.#wake();
    }
    if (this.#processing.size === 0 && this.length === 0) {
      const idle = this.#idleWaiters;
      this.#idleWaiters = [];
      for (const w of idle) w();
    }
  }

  /** Runs `reconcile` for keys until shutdown, with the Result semantics of controller-runtime. */
  async work(reconcile: Reconcile): Promise<void> {
    for (;;) {
      const key = await this.get();
      if (key === undefined) return;
      await this.#process(key, reconcile);
    }
  }

  async #process(key: string, reconcile: Reconcile): Promise<void> {
    const controller = new AbortController();
    const timeout = setTimeout(() => controller.abort(new Error(`reconcile of ${key} timed out after ${this.#opts.passTimeoutMs} ms`)), this.#opts.passTimeoutMs);
    const started = performance.now();
    try {
      // Called inside the try, so a reconciler that throws synchronously is handled like a rejection.
      const result = await reconcile(key, controller.signal);
      this.forget(key);
      const requeue = result?.requeueAfterMs !== undefined && result.requeueAfterMs >= 0;
      this.#metrics?.reconciled(requeue ? 'requeue_after' : 'success', (performance.now() - started) / 1000, false);
      if (requeue) this.addAfter(key, result.requeueAfterMs!);
    } catch (thrown) {
      const err = thrown instanceof Error ? thrown : new Error(`reconcile of ${key} threw ${String(thrown)}`, { cause: thrown });
      const terminal = err instanceof TerminalError;
      this.#metrics?.reconciled('error', (performance.now() - started) / 1000, terminal);
      try {
        this.#opts.onError?.(key, err, terminal);
      } catch {
        // a failing error hook must not stop the worker
      }
      if (terminal) this.forget(key);
      else {
        this.#metrics?.retried();
        this.addRateLimited(key);
      }
    } finally {
      clearTimeout(timeout);
      this.done(key);
    }
  }

  /**
   * Stops taking keys: add/addAfter become no-ops, pending deadlines are dropped, and workers
   * return once the keys already queued and the passes in flight are done.
   */
  shutdown(): void {
    this.#shuttingDown = true;
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#timerDue = undefined;
    this.#delayed.clear();
    this.#wake();
  }

  /** shutdown(), then resolves when nothing is queued or in flight any more. */
  async shutdownAndDrain(): Promise<void> {
    this.shutdown();
    if (this.#processing.size === 0 && this.length === 0) return;
    await new Promise<void>((resolve) => this.#idleWaiters.push(resolve));
  }

  #nextBackoff(key: string): number {
    const failures = this.#failures.get(key) ?? 0;
    this.#failures.set(key, failures + 1);
    return Math.min(this.#opts.baseDelayMs * 2 ** Math.min(failures, 60), this.#opts.maxDelayMs);
  }

  #wake(): void {
    const waiters = this.#waiters;
    this.#waiters = [];
    for (const w of waiters) w();
  }

  /** One timer, for the earliest due key; re-armed only when that changes. */
  #armTimer(): void {
    if (this.#shuttingDown) return;
    const due = this.#delayed.peek();
    if (due === this.#timerDue) return;
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#timerDue = due;
    if (due === undefined) return;
    const wait = Math.min(Math.max(0, due - this.#opts.now()), MAX_TIMER_MS);
    this.#timer = setTimeout(() => this.#fireDue(), wait);
    // Deadlines alone must not keep the process alive; the workers' owner decides that.
    this.#timer.unref?.();
  }

  #fireDue(): void {
    this.#timer = undefined;
    this.#timerDue = undefined;
    for (const key of this.#delayed.popDue(this.#opts.now())) this.add(key);
    this.#armTimer();
  }
}
