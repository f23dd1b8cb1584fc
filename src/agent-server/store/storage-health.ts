// Whether the agent server can write to its database now. The first failed write (disk full, I/O
// error) marks it faulted; what could not be written is held in memory by the stores (events with
// their sequence numbers, conversation changes, the sink cursor) and written by `retry`, which runs
// on a timer while faulted and before each write request, until a write succeeds again.
import { describeStorageFault, storageFaultOf, type StorageFault } from '../../util/storage-fault.ts';
import type { Logger } from '../../util/log.ts';

export interface StorageFaultState extends StorageFault {
  since: string;
  detail: string;
}

export class StorageHealth {
  #fault: StorageFaultState | undefined;
  #flush: (() => void) | undefined;
  #timer: NodeJS.Timeout | undefined;
  readonly #retryMs: number;
  readonly #log: Logger | undefined;
  readonly #listeners = new Set<(fault: StorageFaultState | undefined) => void>();

  constructor(opts: { retryMs?: number; log?: Logger } = {}) {
    this.#retryMs = opts.retryMs ?? 5000;
    this.#log = opts.log;
  }

  /** What writes everything held in memory, in one transaction; throws when it cannot. */
  setFlush(flush: () => void): void {
    this.#flush = flush;
  }

  get fault(): StorageFaultState | undefined {
    return this.#fault;
  }

  /** Called when the fault starts and when it ends (with undefined). */
  onChange(fn: (fault: StorageFaultState | undefined) => void): () => void {
    this.#listeners.add(fn);
    return () => this.#listeners.delete(fn);
  }

  /**
   * A write failed. True when it was a storage fault (the caller keeps what it wanted to write, and
   * `retry` will write it); false for any other error, which the caller rethrows.
   */
  report(err: unknown): boolean {
    const f = storageFaultOf(err);
    if (!f) return false;
    if (!this.#fault) {
      this.#fault = { ...f, since: new Date().toISOString(), detail: `The agent server cannot save to its database: ${describeStorageFault(f)}.` };
      this.#log?.error({ code: f.code }, 'storage fault: holding unsaved writes in memory until the disk accepts them');
      this.#schedule();
      for (const fn of this.#listeners) fn(this.#fault);
    }
    return true;
  }

  /** Writes what is held; true when nothing is held any more (the fault is over). */
  retry(): boolean {
    if (!this.#fault) return true;
    try {
      this.#flush?.();
    } catch (err) {
      if (!storageFaultOf(err)) this.#log?.error({ err }, 'writing held events failed');
      return false;
    }
    this.#log?.info({ code: this.#fault.code, since: this.#fault.since }, 'storage recovered: held writes saved');
    this.#fault = undefined;
    clearTimeout(this.#timer);
    this.#timer = undefined;
    for (const fn of this.#listeners) fn(undefined);
    return true;
  }

  close(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  #schedule(): void {
    if (this.#timer) return;
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      if (!this.retry()) this.#schedule();
    }, this.#retryMs);
    this.#timer.unref();
  }
}
