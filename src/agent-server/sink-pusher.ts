// Pushes every persisted event to the API's event sink, per conversation, in sequence order, in
// batches, and records what the sink acknowledged. Failures back off exponentially and retry from
// the stored cursor; nothing is dropped, and a restarted server resumes where it left off.
// Conversation summaries (status, title, usage) follow each batch of events, coalesced. The first
// batch of a conversation opens with its full_state snapshot at seq 0.
import { SINK_BATCH_MAX_BYTES, SinkAck, type SinkConversationUpdate, type SinkEventBatch } from '../api/event-sink.ts';
import { Value } from 'typebox/value';
import type { Logger } from '../util/log.ts';
import type { SinkCursorStore } from './store/conversation-store.ts';
import type { EventStore } from './store/event-store.ts';

export interface SinkPusherOptions {
  url: string;
  key: string;
  events: EventStore;
  cursor: SinkCursorStore;
  /** The conversation's summary now; undefined when it no longer exists at all. */
  describe(conversationId: string): SinkConversationUpdate | undefined;
  /** Called once a deleted conversation has everything acknowledged: drop its rows. */
  purge(conversationId: string): void;
  isDeleted(conversationId: string): boolean;
  /** The conversation's full_state snapshot (seq 0), sent with its first batch; undefined: none. */
  snapshot?(conversationId: string): unknown;
  log: Logger;
  batchSize?: number;
  /** At most this many bytes of event JSON per batch (the sink's body limit, less room for the envelope). */
  batchMaxBytes?: number;
  retryInitialMs?: number;
  retryMaxMs?: number;
  requestTimeoutMs?: number;
}

interface State {
  convDirty: boolean;
  working: Promise<void> | undefined;
  timer: NodeJS.Timeout | undefined;
  backoffMs: number;
}

class SinkHttpError extends Error {}

export class SinkPusher {
  readonly #o: SinkPusherOptions;
  readonly #states = new Map<string, State>();
  readonly #abort = new AbortController();
  readonly #batch: number;
  readonly #batchBytes: number;
  readonly #initial: number;
  readonly #max: number;
  #closed = false;

  constructor(o: SinkPusherOptions) {
    this.#o = o;
    this.#batch = Math.min(Math.max(o.batchSize ?? 100, 1), 100);
    // The envelope adds `{"seq":N,"event":}` per item and the outer object: 64 KiB covers 100 items.
    this.#batchBytes = o.batchMaxBytes ?? SINK_BATCH_MAX_BYTES - 64 * 1024;
    this.#initial = o.retryInitialMs ?? 500;
    // Short: a restarted API should see what happened while it was down within seconds, not after a
    // backoff grown through the outage (one failed request per conversation every 5 s meanwhile).
    this.#max = o.retryMaxMs ?? 5_000;
  }

  /** Pushes from now on authenticate with `key` (the sandbox was handed over and its session key rotated). */
  setKey(key: string): void {
    this.#o.key = key;
  }

  /** New events were appended to the conversation. */
  notifyEvents(conversationId: string): void {
    this.#kick(conversationId);
  }

  /** Status, title or usage changed. */
  notifyConversation(conversationId: string): void {
    this.#state(conversationId).convDirty = true;
    this.#kick(conversationId);
  }

  /**
   * Resume after a restart: every conversation may have events the sink has not acknowledged, and
   * its summary is sent again (the API may have marked the run lost while this server was down).
   */
  resume(conversationIds: Iterable<string>): void {
    for (const id of conversationIds) {
      this.#state(id).convDirty = true;
      this.#kick(id);
    }
  }

  /** One last attempt for everything pending (waiting at most `timeoutMs`), then stop. */
  async close(timeoutMs = 2000): Promise<void> {
    for (const [id, st] of this.#states) {
      if (st.timer) {
        clearTimeout(st.timer);
        st.timer = undefined;
        this.#kick(id);
      }
    }
    let timer: NodeJS.Timeout | undefined;
    const pending = [...this.#states.values()].flatMap((s) => (s.working ? [s.working] : []));
    await Promise.race([Promise.all(pending), new Promise((r) => (timer = setTimeout(r, timeoutMs)))]);
    clearTimeout(timer);
    this.#closed = true;
    this.#abort.abort();
    for (const st of this.#states.values()) clearTimeout(st.timer);
    await Promise.all([...this.#states.values()].flatMap((s) => (s.working ? [s.working] : [])));
  }

  #state(id: string): State {
    let st = this.#states.get(id);
    if (!st) {
      st = { convDirty: false, working: undefined, timer: undefined, backoffMs: this.#initial };
      this.#states.set(id, st);
    }
    return st;
  }

  #kick(id: string): void {
    const st = this.#state(id);
    // While working, the loop re-reads the cursor and the flags; while backing off, the timer will.
    if (this.#closed || st.working || st.timer) return;
    // The push starts once this turn of the event loop is over: what caused the kick (a start's
    // POST /api/conversations, an event appended during a request) answers its caller first, and
    // kicks meanwhile join this push. A warm-pool start waited on the create's answer while its
    // first push was set up in front of it (issue #16).
    st.working = new Promise<void>((resolve) => setImmediate(resolve))
      .then(() => this.#work(id, st))
      .finally(() => (st.working = undefined));
  }

  async #work(id: string, st: State): Promise<void> {
    try {
      for (;;) {
        if (this.#closed) return;
        if (await this.#pushBatch(id)) continue;
        if (st.convDirty) {
          st.convDirty = false;
          const update = this.#o.describe(id);
          try {
            if (update) await this.#post('/conversations', update);
          } catch (err) {
            st.convDirty = true;
            throw err;
          }
          continue;
        }
        break;
      }
      st.backoffMs = this.#initial;
      if (this.#o.isDeleted(id)) {
        this.#o.purge(id);
        this.#states.delete(id);
      }
    } catch (err) {
      if (this.#closed) return;
      this.#o.log.warn({ conversationId: id, retryInMs: st.backoffMs, err: err instanceof SinkHttpError ? err.message : err }, 'event sink push failed');
      st.timer = setTimeout(() => {
        st.timer = undefined;
        this.#kick(id);
      }, st.backoffMs);
      st.backoffMs = Math.min(st.backoffMs * 2, this.#max);
    }
  }

  /** Pushes one batch; false when there was nothing to push. */
  async #pushBatch(id: string): Promise<boolean> {
    const acked = this.#o.cursor.get(id);
    // Nothing acknowledged yet: the snapshot goes first (again after a failed first push; the sink
    // keeps the first one it got at seq 0, and the snapshot's id is the same every time).
    const snapshot = acked === 0 ? this.#o.snapshot?.(id) : undefined;
    const room = snapshot === undefined ? this.#batch : Math.max(this.#batch - 1, 1);
    const rows = this.#withinBudget(this.#o.events.after(id, acked, room));
    if (rows.length === 0) return false;
    const items: SinkEventBatch['items'] = rows.map((r) => ({ seq: r.seq, event: JSON.parse(r.json) as unknown }));
    const body: SinkEventBatch = { items: snapshot === undefined ? items : [{ seq: 0, event: snapshot }, ...items] };
    const res = await this.#post(`/events/${id}`, body);
    if (!Value.Check(SinkAck, res)) throw new SinkHttpError('event sink answered without acknowledged_seq');
    const last = rows[rows.length - 1]!.seq;
    const ack = Math.min(res.acknowledged_seq, last);
    // The sink says what it holds without a gap; a lower number means it wants those events again.
    if (ack === acked) throw new SinkHttpError(`event sink acknowledged nothing past seq ${acked}`);
    this.#o.cursor.set(id, ack);
    return true;
  }

  /**
   * The longest prefix of `rows` whose JSON fits the byte budget, and always the first row: a batch
   * over the sink's body limit would be refused (413) and retried forever.
   */
  #withinBudget<R extends { json: string }>(rows: R[]): R[] {
    let bytes = 0;
    for (let i = 0; i < rows.length; i++) {
      bytes += Buffer.byteLength(rows[i]!.json);
      if (bytes > this.#batchBytes && i > 0) return rows.slice(0, i);
    }
    return rows;
  }

  async #post(path: string, body: unknown): Promise<unknown> {
    const signal = AbortSignal.any([this.#abort.signal, AbortSignal.timeout(this.#o.requestTimeoutMs ?? 30_000)]);
    const res = await fetch(this.#o.url.replace(/\/+$/, '') + path, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-session-api-key': this.#o.key },
      body: JSON.stringify(body),
      signal,
    });
    const text = await res.text();
    if (!res.ok) throw new SinkHttpError(`event sink answered ${res.status} for ${path.split('/')[1]}`);
    return text === '' ? undefined : (JSON.parse(text) as unknown);
  }
}
