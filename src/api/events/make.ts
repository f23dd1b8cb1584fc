// One way to stamp new events, so every producer emits the same id and timestamp format.
import { randomUUID } from 'node:crypto';
import type { EventSource } from './events.ts';

export interface EventBase {
  id: string;
  /** UTC ISO 8601 with milliseconds and 'Z', e.g. `2026-08-22T10:15:30.123Z`. */
  timestamp: string;
  source: EventSource;
}

/** `{id, timestamp, source}` for a new event. `now` is injectable for tests (default: the wall clock). */
export function newEventBase(source: EventSource, now: () => Date = () => new Date()): EventBase {
  return { id: randomUUID(), timestamp: now().toISOString(), source };
}
