// The conversation list's live feed: the facade's Server-Sent Events stream of the caller's
// conversations (GET /api/v1/app-conversations/changes), read with fetch rather than EventSource
// because an EventSource cannot send the API key (it would have to go in the URL, into logs). Each
// reconnect sends the last event id (Last-Event-ID), so the server resumes after it and nothing is
// missed; a position too old for the server starts over with a snapshot.
import { createParser } from 'eventsource-parser';
import { COOKIE_SESSION, KEY_REFUSED, type Conversation } from './api.ts';

export type ChangesState = 'connecting' | 'live' | 'reconnecting';

export interface ChangesHandlers {
  /** The list to show now (the search's first page with the same filters). */
  snapshot(items: Conversation[]): void;
  /** A conversation to show as it is now: new, or changed. */
  change(item: Conversation): void;
  /** A conversation to drop: deleted, or no longer matching. */
  remove(id: string): void;
  state(state: ChangesState): void;
  /**
   * The stream cannot be opened here: the server answered, but not with an event stream (an
   * older server, a proxy that refuses it). Given: the feed stops and the page polls instead;
   * not given: the feed keeps trying. A broken connection is not this: it reconnects.
   */
  unavailable?(): void;
}

export class ConversationChanges {
  readonly #key: string;
  readonly #query: string;
  readonly #on: ChangesHandlers;
  readonly #abort = new AbortController();
  #lastId: string | undefined;
  #retryMs = 2000;

  /** `query`: the search filters (URL query, without `?`). */
  constructor(key: string, query: string, on: ChangesHandlers) {
    this.#key = key;
    this.#query = query;
    this.#on = on;
  }

  start(): void {
    void this.#run();
  }

  close(): void {
    this.#abort.abort();
  }

  async #run(): Promise<void> {
    const signal = this.#abort.signal;
    while (!signal.aborted) {
      try {
        await this.#read(signal);
      } catch {
        // the connection broke: resume below
      }
      if (signal.aborted) return;
      this.#on.state('reconnecting');
      await new Promise((r) => setTimeout(r, this.#retryMs));
    }
  }

  /** One connection, until the server ends it or it breaks. */
  async #read(signal: AbortSignal): Promise<void> {
    const headers: Record<string, string> = { accept: 'text/event-stream' };
    if (this.#key !== COOKIE_SESSION) headers['authorization'] = `Bearer ${this.#key}`;
    if (this.#lastId) headers['last-event-id'] = this.#lastId;
    const res = await fetch(`/api/v1/app-conversations/changes${this.#query ? `?${this.#query}` : ''}`, { headers, signal, cache: 'no-store' });
    if (res.status === 401) {
      dispatchEvent(new Event(KEY_REFUSED));
      this.close();
      return;
    }
    if (!res.ok || !res.body || !res.headers.get('content-type')?.startsWith('text/event-stream')) {
      await res.body?.cancel();
      // A 5xx is a server having a bad moment (restarting behind a proxy): try again.
      if (this.#on.unavailable && res.status < 500) {
        this.close();
        this.#on.unavailable();
      }
      return;
    }
    const parser = createParser({
      onRetry: (ms) => (this.#retryMs = ms),
      onEvent: (e) => {
        const data = JSON.parse(e.data) as unknown;
        if (e.event === 'snapshot') this.#on.snapshot((data as { items: Conversation[] }).items);
        else if (e.event === 'change') this.#on.change(data as Conversation);
        else if (e.event === 'remove') this.#on.remove((data as { id: string }).id);
        // After it is applied: a reconnect resumes after the last event shown.
        if (e.id) this.#lastId = e.id;
      },
    });
    this.#on.state('live');
    const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return;
      parser.feed(value);
    }
  }
}
