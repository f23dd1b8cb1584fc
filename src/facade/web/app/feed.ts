// A conversation's events for the transcript: the history from the app API's event search, then
// the agent server's WebSocket for live events. The socket authenticates by its first frame (the
// key never goes in a URL) and resumes after the last event seen (after_event_id), so a reconnect
// leaves no gap; events are kept once by id, whichever path brought them.
import { api, type AgentEvent, type Conversation } from './api.ts';

interface EventPage {
  items: AgentEvent[];
  next_page_id: string | null;
}

/**
 * Frames the agent server sends but does not store, so they cannot be resumed after: the
 * full_state snapshot at every connect, and errors about a frame this client sent.
 */
function transient(e: AgentEvent): boolean {
  return e.kind === 'ServerErrorEvent' || (e.kind === 'ConversationStateUpdateEvent' && e['key'] === 'full_state');
}

export type FeedState = 'loading' | 'live' | 'reconnecting' | 'offline';

export class EventFeed {
  readonly #key: string;
  readonly #id: string;
  readonly #onChange: (events: AgentEvent[], state: FeedState) => void;
  readonly #events: AgentEvent[] = [];
  readonly #seen = new Set<string>();
  #socket: WebSocket | undefined;
  #timer: ReturnType<typeof setTimeout> | undefined;
  #closed = false;
  #state: FeedState = 'loading';
  /** The last stored event seen: where a reconnect resumes. */
  #cursor: string | undefined;

  constructor(key: string, conversationId: string, onChange: (events: AgentEvent[], state: FeedState) => void) {
    this.#key = key;
    this.#id = conversationId;
    this.#onChange = onChange;
  }

  async start(): Promise<void> {
    let page: string | null = null;
    do {
      const q: string = `limit=100${page ? `&page_id=${encodeURIComponent(page)}` : ''}`;
      const res: EventPage = await api<EventPage>(this.#key, 'GET', `/conversation/${this.#id}/events/search?${q}`);
      this.#add(res.items);
      page = res.next_page_id;
    } while (page && !this.#closed);
    await this.#connect();
  }

  close(): void {
    this.#closed = true;
    clearTimeout(this.#timer);
    this.#socket?.close();
  }

  #add(events: AgentEvent[]): void {
    let changed = false;
    for (const e of events) {
      if (typeof e.id !== 'string' || this.#seen.has(e.id)) continue;
      this.#seen.add(e.id);
      this.#events.push(e);
      if (!transient(e)) this.#cursor = e.id;
      changed = true;
    }
    if (changed) this.#emit();
  }

  #emit(state: FeedState = this.#state): void {
    this.#state = state;
    this.#onChange([...this.#events], state);
  }

  /** The record is read again at every (re)connect: a resumed sandbox has a new URL and key. */
  async #connect(): Promise<void> {
    if (this.#closed) return;
    let conv: Conversation | undefined;
    try {
      [conv] = await api<Conversation[]>(this.#key, 'GET', `/app-conversations?ids=${this.#id}`);
    } catch {
      conv = undefined;
    }
    if (!conv?.conversation_url || !conv.session_api_key) {
      this.#emit('offline');
      this.#retry();
      return;
    }
    const base = new URL(conv.conversation_url);
    const url = new URL(`/sockets/events/${this.#id}`, base);
    url.protocol = base.protocol === 'https:' ? 'wss:' : 'ws:';
    if (this.#cursor) url.searchParams.set('after_event_id', this.#cursor);
    else url.searchParams.set('resend_mode', 'all');
    const ws = new WebSocket(url);
    this.#socket = ws;
    const key = conv.session_api_key;
    ws.onopen = () => {
      ws.send(JSON.stringify({ type: 'auth', session_api_key: key }));
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
      this.#emit('reconnecting');
      this.#retry();
    };
  }

  #retry(): void {
    if (this.#closed) return;
    clearTimeout(this.#timer);
    this.#timer = setTimeout(() => void this.#connect(), 2000);
  }
}
