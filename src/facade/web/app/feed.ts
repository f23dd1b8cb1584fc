// A conversation's events for the transcript: the history from the app API's event search, then
// the facade's relay of the agent server's WebSocket (event-relay.ts) for live events. The socket authenticates by its first frame (the
// key never goes in a URL) and resumes after the last event seen (after_event_id), so a reconnect
// leaves no gap; events are kept once by id, whichever path brought them. Where the socket cannot
// be opened at all (a proxy that refuses WebSocket upgrades), each failed attempt reads what the
// event log has beyond the events shown instead, so the page goes on by polling until a socket opens.
import { api, COOKIE_SESSION, KEY_REFUSED, sessionCsrfToken, type AgentEvent } from './api.ts';

interface EventPage {
  items: AgentEvent[];
  next_page_id: string | null;
}

/**
 * Frames the agent server sends but does not store, so they cannot be resumed after: the
 * full_state snapshot at every connect, the answer's streamed pieces (StreamingDeltaEvent), and
 * errors about a frame this client sent.
 */
function transient(e: AgentEvent): boolean {
  return e.kind === 'ServerErrorEvent' || e.kind === 'StreamingDeltaEvent' || (e.kind === 'ConversationStateUpdateEvent' && e['key'] === 'full_state');
}

export type FeedState = 'loading' | 'live' | 'reconnecting' | 'offline' | 'polling';

export class EventFeed {
  readonly #key: string;
  readonly #id: string;
  readonly #onEvents: (added: AgentEvent[]) => void;
  readonly #onState: (state: FeedState) => void;
  readonly #seen = new Set<string>();
  #socket: WebSocket | undefined;
  #timer: ReturnType<typeof setTimeout> | undefined;
  #closed = false;
  #state: FeedState = 'loading';
  /** The last stored event seen: where a reconnect resumes. */
  #cursor: string | undefined;

  /** `onEvents` gets each new event once, in order; `onState` the connection's state. */
  constructor(key: string, conversationId: string, onEvents: (added: AgentEvent[]) => void, onState: (state: FeedState) => void) {
    this.#key = key;
    this.#id = conversationId;
    this.#onEvents = onEvents;
    this.#onState = onState;
  }

  async start(): Promise<void> {
    let page: string | null = null;
    do {
      const q: string = `limit=100${page ? `&page_id=${encodeURIComponent(page)}` : ''}`;
      const res: EventPage = await api<EventPage>(this.#key, 'GET', `/conversation/${this.#id}/events/search?${q}`);
      this.#add(res.items);
      page = res.next_page_id;
    } while (page && !this.#closed);
    this.#connect();
  }

  close(): void {
    this.#closed = true;
    clearTimeout(this.#timer);
    this.#socket?.close();
  }

  #add(events: AgentEvent[]): void {
    const added: AgentEvent[] = [];
    for (const e of events) {
      if (typeof e.id !== 'string') continue;
      // Snapshots are not stored events: each connect sends a new one, with the same id at times.
      if (transient(e)) {
        added.push(e);
        continue;
      }
      if (this.#seen.has(e.id)) continue;
      this.#seen.add(e.id);
      this.#cursor = e.id;
      added.push(e);
    }
    if (added.length > 0) this.#onEvents(added);
  }

  #emit(state: FeedState): void {
    this.#state = state;
    this.#onState(state);
  }

  /**
   * Through the facade's relay (same origin: in a cluster the browser cannot reach a sandbox, and
   * it never holds a sandbox's key). 4409: the sandbox does not serve now (paused, starting): try
   * again later, the relay never resumes it.
   */
  #connect(): void {
    if (this.#closed) return;
    const url = new URL(`/api/v1/conversation/${this.#id}/events/socket`, location.href);
    url.protocol = location.protocol === 'https:' ? 'wss:' : 'ws:';
    if (this.#cursor) url.searchParams.set('after_event_id', this.#cursor);
    else url.searchParams.set('resend_mode', 'all');
    let ws: WebSocket;
    try {
      ws = new WebSocket(url);
    } catch {
      // Refused before any connection (the page's policy): as a socket that never opened.
      void this.#poll().then(() => this.#retry());
      return;
    }
    this.#socket = ws;
    let opened = false;
    ws.onopen = () => {
      opened = true;
      // A browser session (the cookie goes with the upgrade) shows its CSRF token, as a change would.
      ws.send(JSON.stringify(this.#key === COOKIE_SESSION ? { type: 'auth', csrf_token: sessionCsrfToken() } : { type: 'auth', api_key: this.#key }));
    };
    ws.onmessage = (m) => {
      // Accepted: the server's first frame after the auth frame is the full_state snapshot.
      if (this.#state !== 'live') this.#emit('live');
      try {
        this.#add([JSON.parse(String(m.data)) as AgentEvent]);
      } catch {
        // not an event frame
      }
    };
    // A socket that fails before it opens may report only an error (a blocked connection).
    ws.onerror = () => {
      if (!opened && this.#socket === ws && !this.#closed) this.#notOpened(ws);
    };
    ws.onclose = (ev) => {
      if (this.#socket !== ws || this.#closed) return;
      // 4400: the agent server does not know the cursor (its store was reset): replay everything,
      // the events already shown are skipped by id.
      if (ev.code === 4400) this.#cursor = undefined;
      if (ev.code === 4001) dispatchEvent(new Event(KEY_REFUSED));
      if (!opened) return this.#notOpened(ws);
      this.#emit(ev.code === 4409 ? 'offline' : 'reconnecting');
      this.#retry();
    };
  }

  /** The socket could not be opened: what it would have brought comes by polling, then it is tried again. */
  #notOpened(ws: WebSocket): void {
    this.#socket = undefined; // its close, if one still comes, is not a drop to handle again
    ws.onclose = null;
    ws.close();
    void this.#poll().then(() => this.#retry());
  }

  #retry(): void {
    if (this.#closed) return;
    clearTimeout(this.#timer);
    this.#timer = setTimeout(() => this.#connect(), 2000);
  }

  /**
   * The events the log holds beyond those shown: newest first, back to the first one already seen
   * (by id, so neither a clock nor a cursor can skip one), then added oldest first.
   */
  async #poll(): Promise<void> {
    const fresh: AgentEvent[] = [];
    try {
      let page: string | null = null;
      reading: do {
        const q: string = `sort_order=TIMESTAMP_DESC&limit=100${page ? `&page_id=${encodeURIComponent(page)}` : ''}`;
        const res: EventPage = await api<EventPage>(this.#key, 'GET', `/conversation/${this.#id}/events/search?${q}`);
        for (const e of res.items) {
          if (typeof e.id === 'string' && this.#seen.has(e.id)) break reading;
          fresh.push(e);
        }
        page = res.next_page_id;
      } while (page && !this.#closed);
    } catch {
      // the API is not there either: 'reconnecting', and the socket is tried again
      this.#emit('reconnecting');
      return;
    }
    if (this.#closed) return;
    this.#emit('polling');
    this.#add(fresh.reverse());
  }
}
