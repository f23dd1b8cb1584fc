// One full garbage collection once the agent server has had no run for 10 s (bench/RESULTS.md,
// "Agent server RSS after 1,000 steps").
//
// Why: nothing is retained per step (heap snapshots at steps 200 and 800: +2.3 MiB live, the events
// and the model's message list a conversation needs), but every step sends the whole history to the
// model, so each step leaves a JSON body and its encoded bytes behind (hundreds of KiB late in a long
// conversation: large-object space and ArrayBuffers, which only a full GC frees). V8 lets that
// garbage pile up between full GCs, so RSS read after a run is anywhere between the live size and
// ~100 MiB above it (170-254 MiB after the same 1,000 steps), and it stays there while the sandbox
// waits for its user: V8's memory reducer, meant for that, fired in some idle runs and not in others.
// Collecting during a run would cost CPU per step (a smaller heap growing factor: +30-60 %); once no
// run is left, one collection costs the idle process a few tens of ms and hands the pile back.
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

/**
 * How long the server must stay without a run: a person reading the answer, not a client sending the
 * next message at once. At 2 s the collection also fired between runs sent back to back (a loaded
 * machine stretches those gaps) and the next run then paid for the smaller heap with more frequent GCs
 * (CPU per step at step 1,000 up to 1.5x); at 10 s it did not (bench/RESULTS.md).
 */
export const IDLE_COLLECT_DELAY_MS = 10_000;

export interface IdleCollectorOptions {
  /** Runs a full collection. */
  collect: () => void;
  /** Schedules `fn` after `ms` (default: an unref'd setTimeout); returns a cancel function. */
  schedule?: (fn: () => void, ms: number) => () => void;
  delayMs?: number;
}

export class IdleCollector {
  readonly #o: IdleCollectorOptions;
  #running = 0;
  #cancel: (() => void) | undefined;

  constructor(o: IdleCollectorOptions) {
    this.#o = o;
  }

  runStarted(): void {
    this.#running++;
    this.#cancel?.();
    this.#cancel = undefined;
  }

  runEnded(): void {
    this.#running = Math.max(0, this.#running - 1);
    if (this.#running > 0 || this.#cancel) return;
    const schedule = this.#o.schedule ?? ((fn, ms) => {
      const t = setTimeout(fn, ms);
      t.unref();
      return () => clearTimeout(t);
    });
    this.#cancel = schedule(() => {
      this.#cancel = undefined;
      if (this.#running === 0) this.#o.collect();
    }, this.#o.delayMs ?? IDLE_COLLECT_DELAY_MS);
  }
}

let installed: IdleCollector | undefined;

/** The process's collector: a no-op until enableIdleCollection (the agent server's own process only, not a test's). */
export function idleCollector(): IdleCollector | undefined {
  return installed;
}

/** Called once at the agent server's start: V8's gc() is only exposed to contexts created after the flag is set. */
export function enableIdleCollection(): void {
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc') as () => void;
  installed = new IdleCollector({ collect: () => gc() });
}
