// Time is injected everywhere lifecycle decisions are made, so tests move time instead of sleeping.
import { DateTime } from 'luxon';

export interface Clock {
  now(): DateTime;
}

export const systemClock: Clock = {
  now: () => DateTime.utc(),
};

/** A clock tests move by hand. */
export class ManualClock implements Clock {
  #now: DateTime;
  constructor(start: DateTime | string = '2026-01-01T00:00:00Z') {
    this.#now = typeof start === 'string' ? DateTime.fromISO(start, { zone: 'utc' }) : start.toUTC();
  }
  now(): DateTime {
    return this.#now;
  }
  advance(ms: number): DateTime {
    this.#now = this.#now.plus({ milliseconds: ms });
    return this.#now;
  }
  set(to: DateTime | string): void {
    this.#now = typeof to === 'string' ? DateTime.fromISO(to, { zone: 'utc' }) : to.toUTC();
  }
}
