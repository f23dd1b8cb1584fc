// One subscriber of `/sockets/events/{id}`: a cursor over the conversation's sequence numbers.
// It subscribes first, then replays from the store page by page (with flow control), and turns
// live in the same synchronous step that finds nothing more to replay, so no event is missed or
// sent twice. Live frames go through a bounded queue: a client that falls behind is closed with
// 1013 (it resumes with after_event_id / after_seq); the agent and other clients never wait.
// Frames sent in one synchronous step (an agent's step emits several events) leave in one write:
// the socket is corked until the step ends. One write per frame per subscriber was most of the
// server's time with a hundred subscribers (issue #16).
import type { Duplex } from 'node:stream';
import type { WebSocket } from 'ws';
import type { Published, EventBus } from '../conversation/bus.ts';
import type { EventStore } from '../store/event-store.ts';
import { toWireJson } from '../store/wire.ts';

export interface ClientLimits {
  /** Frames handed to the socket but not yet written out. */
  maxQueueEvents: number;
  /** Bytes buffered by the socket. */
  maxQueueBytes: number;
  /** How long a slow client gets to take its close frame before the socket is destroyed. */
  closeGraceMs: number;
}

const REPLAY_PAGE = 100;
export const SLOW_CLIENT_REASON = 'Client too slow; reconnect with after_event_id=<last event id received>';

export class SocketClient {
  readonly ws: WebSocket;
  /** The upgraded connection under `ws`, corked while a step's frames are handed to it. */
  readonly #socket: Duplex | undefined;
  #corked = false;
  readonly conversationId: string;
  readonly #events: EventStore;
  readonly #limits: ClientLimits;
  readonly #highWater: number;
  #unsubscribe: (() => void) | undefined;
  /** Sequence number of the last event handed to the socket. */
  #cursor = 0;
  #live = false;
  #pending = 0;
  #snapshot: Published | undefined;
  #drainWaiters: (() => void)[] = [];
  #closeTimer: NodeJS.Timeout | undefined;
  alive = true;

  constructor(ws: WebSocket, conversationId: string, events: EventStore, limits: ClientLimits, socket?: Duplex) {
    this.ws = ws;
    this.#socket = socket;
    this.conversationId = conversationId;
    this.#events = events;
    this.#limits = limits;
    this.#highWater = Math.max(1, Math.min(REPLAY_PAGE, Math.floor(limits.maxQueueEvents / 2)));
    ws.on('close', () => this.#dispose());
  }

  /** `afterSeq`: replay events after this sequence number (the store's last seq for live only). */
  start(bus: EventBus, fullState: Published, afterSeq: number): void {
    const sub = Object.assign((p: Published) => this.#onPublished(p), { end: () => this.close(4004, 'Conversation deleted') });
    this.#unsubscribe = bus.subscribe(this.conversationId, sub);
    this.#send(fullState.frame);
    this.#cursor = afterSeq;
    void this.#replay();
  }

  #onPublished(p: Published): void {
    if (p.seq === null) {
      // Snapshots carry no sequence number; during replay keep the newest for when we go live.
      // Streamed deltas (StreamingDeltaEvent) are a UX affordance: dropped during replay and for a
      // client falling behind (never a reason to cut it off); the persisted answer follows.
      const snapshot = p.event.kind === 'ConversationStateUpdateEvent';
      if (!snapshot && (!this.#live || this.#pending >= this.#highWater)) return;
      if (this.#live) this.#send(p.frame);
      else this.#snapshot = p;
      return;
    }
    if (!this.#live || p.seq <= this.#cursor) return;
    if (p.seq !== this.#cursor + 1) {
      // Cannot happen while appends publish synchronously in order; recover from the store anyway.
      this.#live = false;
      void this.#replay();
      return;
    }
    this.#cursor = p.seq;
    this.#send(p.frame);
  }

  async #replay(): Promise<void> {
    while (this.#open()) {
      const rows = this.#events.after(this.conversationId, this.#cursor, REPLAY_PAGE);
      if (rows.length === 0) {
        this.#live = true;
        const snap = this.#snapshot;
        this.#snapshot = undefined;
        if (snap) this.#send(snap.frame);
        return;
      }
      for (const row of rows) {
        if (this.#pending >= this.#highWater || this.ws.bufferedAmount > this.#limits.maxQueueBytes / 2) await this.#drained();
        if (!this.#open()) return;
        this.#cursor = row.seq;
        this.#send(toWireJson(row.json));
      }
    }
  }

  #send(data: string | Buffer): void {
    if (!this.#open()) return;
    if (this.#pending >= this.#limits.maxQueueEvents || this.ws.bufferedAmount > this.#limits.maxQueueBytes) {
      this.#closeSlow();
      return;
    }
    this.#pending++;
    this.#cork();
    // Text frames, also from bytes (ws would send a Buffer as a binary frame).
    this.ws.send(data, { binary: false }, () => {
      this.#pending--;
      if (this.#pending <= this.#highWater / 2 && this.ws.bufferedAmount <= this.#limits.maxQueueBytes / 4) {
        const waiters = this.#drainWaiters;
        this.#drainWaiters = [];
        for (const w of waiters) w();
      }
    });
  }

  /** Holds this step's frames in the socket; they leave together when the step ends. */
  #cork(): void {
    const socket = this.#socket;
    if (!socket || this.#corked) return;
    this.#corked = true;
    socket.cork();
    process.nextTick(() => {
      this.#corked = false;
      socket.uncork();
    });
  }

  #drained(): Promise<void> {
    return new Promise((resolve) => this.#drainWaiters.push(resolve));
  }

  #closeSlow(): void {
    this.close(1013, SLOW_CLIENT_REASON);
  }

  /** Closes with a code; a peer that does not take the close frame in time is cut off. */
  close(code: number, reason: string): void {
    if (this.ws.readyState === this.ws.CLOSED || this.#closeTimer) return;
    this.#unsubscribe?.();
    this.ws.close(code, reason);
    this.#closeTimer = setTimeout(() => this.ws.terminate(), this.#limits.closeGraceMs);
  }

  #open(): boolean {
    return this.ws.readyState === this.ws.OPEN && this.#closeTimer === undefined;
  }

  #dispose(): void {
    this.#unsubscribe?.();
    clearTimeout(this.#closeTimer);
    const waiters = this.#drainWaiters;
    this.#drainWaiters = [];
    for (const w of waiters) w();
  }
}
