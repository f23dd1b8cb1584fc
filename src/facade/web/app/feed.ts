// A conversation's events for the transcript: the history from the app API's event search, then
// the facade's relay of the agent server's WebSocket (event-relay.ts) for live events. The socket authenticates by its first frame (the
// key never goes in a URL) and resumes after the last event seen (after_event_id), so a reconnect
// leaves no gap; events are kept once by id, whichever path brought them.
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

export type FeedState = 'loading' | 'live' | 'reconnecting' | 'offline';

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
    const ws = new WebSocket(url);
    this.#socket = ws;
    ws.onopen = () => {
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
    ws.onclose = (ev) => {
      if (this.#socket !== ws || this.#closed) return;
      // 4400: the agent server does not know the cursor (its store was reset): replay everything,
      // the events already shown are skipped by id.
      if (ev.code === 4400) this.#cursor = undefined;
      if (ev.code === 4001) dispatchEvent(new Event(KEY_REFUSED));
      this.#emit(ev.code === 4409 ? 'offline' : 'reconnecting');
      this.#retry();
    };
  }

  #retry(): void {
    if (this.#closed) return;
    clearTimeout(this.#timer);
    this.#timer = setTimeout(() => this.#connect(), 2000);
  }
}
