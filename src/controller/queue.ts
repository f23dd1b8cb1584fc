// A de-duplicating work queue with client-go's guarantees: a key is queued at most once, is never
// processed by two workers at once, and a key made dirty while it is processed runs once more.
// Failed keys back off exponentially per key; deadlines are served by one timer for all keys.

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

export interface QueueOptions {
  baseDelayMs?: number;
  maxDelayMs?: number;
  /** Per-pass timeout; the pass's AbortSignal fires after it. */
  passTimeoutMs?: number;
  onError?: (key: string, err: unknown, terminal: boolean) => void;
}

export class WorkQueue {
  readonly #queue: string[] = [];
  readonly #dirty = new Set<string>();
  readonly #processing = new Set<string>();
  readonly #failures = new Map<string, number>();
  /** key → due time (ms since epoch); the earliest wins. */
  readonly #delayed = new Map<string, number>();
  #timer: NodeJS.Timeout | undefined;
  #waiters: (() => void)[] = [];
  #shuttingDown = false;
  readonly #opts: Required<Omit<QueueOptions, 'onError'>> & Pick<QueueOptions, 'onError'>;

  constructor(opts: QueueOptions = {}) {
    this.#opts = { baseDelayMs: 5, maxDelayMs: 1_000_000, passTimeoutMs: 60_000, ...opts };
  }

  get length(): number {
    return this.#queue.length;
  }

  add(key: string): void {
    if (this.#shuttingDown || this.#dirty.has(key)) return;
    this.#dirty.add(key);
    if (this.#processing.has(key)) return; // re-queued by done()
    this.#queue.push(key);
    this.#wake();
  }

  addAfter(key: string, ms: number): void {
    if (ms <= 0) return this.add(key);
    const due = Date.now() + ms;
    const current = this.#delayed.get(key);
    if (current !== undefined && current <= due) return;
    this.#delayed.set(key, due);
    this.#armTimer();
  }

  addRateLimited(key: string): void {
    const failures = this.#failures.get(key) ?? 0;
    this.#failures.set(key, failures + 1);
    this.addAfter(key, Math.min(this.#opts.baseDelayMs * 2 ** failures, this.#opts.maxDelayMs));
  }

  forget(key: string): void {
    this.#failures.delete(key);
  }

  failures(key: string): number {
    return this.#failures.get(key) ?? 0;
  }

  /** Takes the next key, waiting for one; undefined once shut down. */
  async get(): Promise<string | undefined> {
    while (this.#queue.length === 0) {
      if (this.#shuttingDown) return undefined;
      await new Promise<void>((resolve) => this.#waiters.push(resolve));
    }
    const key = this.#queue.shift()!;
    this.#dirty.delete(key);
    this.#processing.add(key);
    return key;
  }

  done(key: string): void {
    this.#processing.delete(key);
    if (this.#dirty.has(key)) {
      this.#queue.push(key);
      this.#wake();
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
    const timeout = setTimeout(() => controller.abort(new Error(`reconcile of ${key} timed out`)), this.#opts.passTimeoutMs);
    try {
      const result = await reconcile(key, controller.signal);
      this.forget(key);
      if (result.requeueAfterMs !== undefined && result.requeueAfterMs >= 0) this.addAfter(key, result.requeueAfterMs);
    } catch (err) {
      const terminal = err instanceof TerminalError;
      this.#opts.onError?.(key, err, terminal);
      if (terminal) this.forget(key);
      else this.addRateLimited(key);
    } finally {
      clearTimeout(timeout);
      this.done(key);
    }
  }

  shutdown(): void {
    this.#shuttingDown = true;
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#delayed.clear();
    this.#wake();
  }

  #wake(): void {
    const waiters = this.#waiters;
    this.#waiters = [];
    for (const w of waiters) w();
  }

  #armTimer(): void {
    if (this.#shuttingDown) return;
    if (this.#timer) clearTimeout(this.#timer);
    let earliest = Infinity;
    for (const due of this.#delayed.values()) earliest = Math.min(earliest, due);
    if (earliest === Infinity) return;
    // setTimeout caps at ~24.8 days; a longer wait just re-arms.
    const wait = Math.min(Math.max(0, earliest - Date.now()), 2 ** 31 - 1);
    this.#timer = setTimeout(() => this.#fireDue(), wait);
    this.#timer.unref?.();
  }

  #fireDue(): void {
    this.#timer = undefined;
    const now = Date.now();
    for (const [key, due] of this.#delayed) {
      if (due <= now) {
        this.#delayed.delete(key);
        this.add(key);
      }
    }
    this.#armTimer();
  }
}
