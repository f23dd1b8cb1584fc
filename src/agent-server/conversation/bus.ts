// Fan-out of a conversation's events to its live subscribers (WebSocket clients). Publishing is
// synchronous and never waits for a subscriber: each subscriber owns a bounded queue (ws/).
import type { Event } from '../../api/events/index.ts';
import { toWireJson } from '../store/wire.ts';

export class Published {
  /** Sequence number; null for events that are never persisted (full_state snapshots). */
  readonly seq: number | null;
  readonly event: Event;
  readonly #json: string;
  #wire: string | undefined;
  #frame: Buffer | undefined;

  constructor(seq: number | null, event: Event, json: string) {
    this.seq = seq;
    this.event = event;
    this.#json = json;
  }

  /** The `exclude_none` JSON sent on the socket, computed once for all subscribers. */
  get wire(): string {
    this.#wire ??= toWireJson(this.#json);
    return this.#wire;
  }

  /** The same as UTF-8 bytes, encoded once for all subscribers (a string is encoded on every send). */
  get frame(): Buffer {
    this.#frame ??= Buffer.from(this.wire);
    return this.#frame;
  }
}

export interface Subscriber {
  (p: Published): void;
  /** The conversation is gone (deleted): no more events will come. */
  end?: () => void;
}

export class EventBus {
  readonly #subs = new Map<string, Set<Subscriber>>();

  subscribe(conversationId: string, fn: Subscriber): () => void {
    let set = this.#subs.get(conversationId);
    if (!set) {
      set = new Set();
      this.#subs.set(conversationId, set);
    }
    set.add(fn);
    return () => {
      set.delete(fn);
      if (set.size === 0 && this.#subs.get(conversationId) === set) this.#subs.delete(conversationId);
    };
  }

  count(conversationId: string): number {
    return this.#subs.get(conversationId)?.size ?? 0;
  }

  end(conversationId: string): void {
    const set = this.#subs.get(conversationId);
    this.#subs.delete(conversationId);
    for (const fn of [...(set ?? [])]) fn.end?.();
  }

  publish(conversationId: string, p: Published): void {
    const set = this.#subs.get(conversationId);
    if (!set) return;
    for (const fn of [...set]) fn(p);
  }
}
