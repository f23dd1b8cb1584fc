// A Server-Sent Events client for tests: one open stream over real HTTP, its events kept as they
// arrive (parsed by eventsource-parser, as the web app parses them), and a wait for the next one
// that matches.
import { createParser, type EventSourceMessage } from 'eventsource-parser';

export class SseStream {
  readonly events: EventSourceMessage[] = [];
  readonly #abort = new AbortController();
  #wake: (() => void) | undefined;
  status = 0;
  contentType = '';
  /** The server ended the stream. */
  ended = false;

  static async open(url: string, headers: Record<string, string>): Promise<SseStream> {
    const s = new SseStream();
    const res = await fetch(url, { headers, signal: s.#abort.signal });
    s.status = res.status;
    s.contentType = res.headers.get('content-type') ?? '';
    if (!res.ok) {
      await res.body?.cancel();
      return s;
    }
    const parser = createParser({
      onEvent: (e) => {
        s.events.push(e);
        s.#wake?.();
      },
    });
    void (async () => {
      const decoder = new TextDecoder();
      for await (const chunk of res.body!) parser.feed(decoder.decode(chunk as Uint8Array, { stream: true }));
      s.ended = true;
      s.#wake?.();
    })().catch(() => undefined);
    return s;
  }

  /** The first event from index `from` on that satisfies `ok`, waiting for it up to `ms`. */
  async next(ok: (e: EventSourceMessage) => boolean, from = 0, ms = 10_000): Promise<EventSourceMessage> {
    const deadline = Date.now() + ms;
    for (;;) {
      const hit = this.events.slice(from).find(ok);
      if (hit) return hit;
      if (Date.now() > deadline) throw new Error(`no such event; got ${JSON.stringify(this.events.map((e) => [e.event, e.data]))}`);
      await new Promise<void>((r) => {
        this.#wake = r;
        setTimeout(r, 100);
      });
    }
  }

  close(): void {
    this.#abort.abort();
  }
}
