// Virtual time for tests of timing logic: a ManualClock plus a Sleep whose wake-ups fire only when
// the test advances the clock, in due order, letting the promise callbacks of each wake-up run
// before the next. Durations of minutes run in milliseconds and the outcome never depends on load.
import { DateTime } from 'luxon';
import { ManualClock } from '../clock.ts';
import type { Sleep } from './leader-elector.ts';

interface Timer {
  at: number;
  seq: number;
  wake: () => void;
}

export class VirtualTime {
  readonly clock: ManualClock;
  #timers: Timer[] = [];
  #seq = 0;

  constructor(start = '2026-01-01T00:00:00Z') {
    this.clock = new ManualClock(start);
  }

  /** Milliseconds since the epoch on the virtual clock. */
  get now(): number {
    return this.clock.now().toMillis();
  }

  /** Timers not yet fired (a test that ends with waiters still parked leaked a loop). */
  get pending(): number {
    return this.#timers.length;
  }

  readonly sleep: Sleep = (ms, signal) =>
    new Promise<void>((resolve) => {
      if (signal?.aborted) return resolve();
      const onAbort = (): void => {
        this.#timers = this.#timers.filter((t) => t !== timer);
        resolve();
      };
      const timer: Timer = {
        at: this.now + Math.max(0, ms),
        seq: this.#seq++,
        wake: () => {
          signal?.removeEventListener('abort', onAbort);
          resolve();
        },
      };
      this.#timers.push(timer);
      signal?.addEventListener('abort', onAbort, { once: true });
    });

  /** Runs every callback that is ready without moving time (in-memory I/O only needs this). */
  async settle(): Promise<void> {
    for (let i = 0; i < 10; i++) await new Promise<void>((r) => setImmediate(r));
  }

  /** Moves time forward by `ms`, firing each timer that falls due on the way at its own instant. */
  async advance(ms: number): Promise<void> {
    const end = this.now + ms;
    await this.settle();
    for (;;) {
      const next = this.#earliest();
      if (!next || next.at > end) break;
      this.#timers = this.#timers.filter((t) => t !== next);
      if (next.at > this.now) this.#set(next.at);
      next.wake();
      await this.settle();
    }
    this.#set(end);
    await this.settle();
  }

  /** Advances in small steps until `done()` holds; returns the virtual time it took. Throws after `maxMs`. */
  async until(done: () => boolean, maxMs: number, stepMs = 10): Promise<number> {
    const start = this.now;
    await this.settle();
    while (!done()) {
      if (this.now - start >= maxMs) throw new Error(`condition not met within ${maxMs} virtual ms`);
      await this.advance(stepMs);
    }
    return this.now - start;
  }

  #earliest(): Timer | undefined {
    let best: Timer | undefined;
    for (const t of this.#timers) if (!best || t.at < best.at || (t.at === best.at && t.seq < best.seq)) best = t;
    return best;
  }

  #set(ms: number): void {
    this.clock.set(DateTime.fromMillis(ms, { zone: 'utc' }));
  }
}
