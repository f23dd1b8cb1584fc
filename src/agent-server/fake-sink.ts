// A real local HTTP event sink for agent-server tests (test support, not a test file): keeps what
// it is sent, acknowledges like the API does, and fails on request.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Value } from 'typebox/value';
import { SINK_BATCH_MAX_BYTES, SinkConversationUpdate, SinkEventBatch } from '../api/event-sink.ts';
import { parseEvent } from '../api/events/index.ts';

/** Stores events by (conversation, seq); answers the highest seq held without a gap. */
export class FakeSink {
  server: Server;
  url = '';
  failNext = 0;
  down = false;
  requests = 0;
  readonly keys = new Set<string>();
  readonly events = new Map<string, Map<number, { id: string }>>();
  /** Times a seq-0 snapshot arrived. */
  snapshots = 0;
  readonly arrivals: { conversation: string; seqs: number[]; bytes: number }[] = [];
  /** Bodies over this get 413, as the API's sink route answers. */
  maxBodyBytes = SINK_BATCH_MAX_BYTES;
  tooLarge = 0;
  readonly updates: SinkConversationUpdate[] = [];

  constructor() {
    this.server = createServer((req, res) => {
      let body = '';
      req.on('data', (c) => (body += c));
      req.on('end', () => {
        this.requests++;
        this.keys.add(String(req.headers['x-session-api-key']));
        if (this.down || this.failNext > 0) {
          this.failNext = Math.max(0, this.failNext - 1);
          res.writeHead(503).end('{"detail":"try later"}');
          return;
        }
        const bytes = Buffer.byteLength(body);
        if (bytes > this.maxBodyBytes) {
          this.tooLarge++;
          res.writeHead(413).end('{"detail":"too large"}');
          return;
        }
        const json = JSON.parse(body) as unknown;
        const m = /^\/sink\/events\/([^/]+)$/.exec(req.url ?? '');
        if (m && Value.Check(SinkEventBatch, json)) {
          const held = this.events.get(m[1]!) ?? new Map();
          this.events.set(m[1]!, held);
          for (const item of json.items) {
            if (item.seq === 0) this.snapshots++;
            // The first snapshot is kept, as the API's log keeps what it holds at a seq.
            if (!held.has(item.seq)) held.set(item.seq, parseEvent(item.event)); // strict validation, as the API does
          }
          this.arrivals.push({ conversation: m[1]!, seqs: json.items.map((i) => i.seq), bytes });
          let acked = 0;
          while (held.has(acked + 1)) acked++;
          res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ acknowledged_seq: acked }));
        } else if (req.url === '/sink/conversations' && Value.Check(SinkConversationUpdate, json)) {
          this.updates.push(json);
          res.writeHead(200).end('{}');
        } else {
          res.writeHead(422).end('{"detail":"bad"}');
        }
      });
    });
  }

  async start(): Promise<void> {
    await new Promise<void>((r) => this.server.listen(0, '127.0.0.1', r));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/sink`;
  }

  /** The persisted events' ids, in seq order (the snapshot at seq 0 left out: snapshot()). */
  ids(conversation: string): string[] {
    const held = this.events.get(conversation) ?? new Map();
    return [...held.keys()].filter((k) => k > 0).sort((a, b) => a - b).map((k) => held.get(k)!.id);
  }

  /** The full_state snapshot the conversation's first batch opened with (seq 0). */
  snapshot(conversation: string): Record<string, unknown> | undefined {
    return this.events.get(conversation)?.get(0) as Record<string, unknown> | undefined;
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((r) => this.server.close(() => r()));
  }
}
