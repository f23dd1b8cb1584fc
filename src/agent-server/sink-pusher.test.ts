// The event-sink push against a real local HTTP sink that fails on purpose.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import Database from 'better-sqlite3';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { Value } from 'typebox/value';
import { SinkConversationUpdate, SinkEventBatch } from '../api/event-sink.ts';
import { parseEvent } from '../api/events/index.ts';
import { agentMessage, eventually, startRequest, startTestServer, tempDir, userText, type TestServer } from './test-support.ts';

/** Stores events by (conversation, seq); answers the highest seq held without a gap. */
class FakeSink {
  server: Server;
  url = '';
  failNext = 0;
  down = false;
  requests = 0;
  readonly keys = new Set<string>();
  readonly events = new Map<string, Map<number, { id: string }>>();
  readonly arrivals: { conversation: string; seqs: number[] }[] = [];
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
        const json = JSON.parse(body) as unknown;
        const m = /^\/sink\/events\/([^/]+)$/.exec(req.url ?? '');
        if (m && Value.Check(SinkEventBatch, json)) {
          const held = this.events.get(m[1]!) ?? new Map();
          this.events.set(m[1]!, held);
          for (const item of json.items) held.set(item.seq, parseEvent(item.event)); // strict validation, as the API does
          this.arrivals.push({ conversation: m[1]!, seqs: json.items.map((i) => i.seq) });
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

  ids(conversation: string): string[] {
    const held = this.events.get(conversation) ?? new Map();
    return [...held.keys()].sort((a, b) => a - b).map((k) => held.get(k)!.id);
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((r) => this.server.close(() => r()));
  }
}

let dir: ReturnType<typeof tempDir>;
let sink: FakeSink;
const servers: TestServer[] = [];

beforeEach(async () => {
  dir = tempDir();
  sink = new FakeSink();
  await sink.start();
});
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
  await sink.close();
  dir.remove();
});

async function start(): Promise<TestServer> {
  const s = await startTestServer(dir.path, {
    sink: { url: sink.url, key: 'sink-key' },
    tuning: { sink: { retryInitialMs: 10, retryMaxMs: 50, batchSize: 40 } },
  });
  servers.push(s);
  return s;
}

const storedIds = async (s: TestServer, id: string): Promise<string[]> => {
  const out: string[] = [];
  let page = (await s.api(`/api/conversations/${id}/events/search`)).body;
  for (;;) {
    out.push(...page.items.map((e: any) => e.id));
    if (!page.next_page_id) return out;
    page = (await s.api(`/api/conversations/${id}/events/search?page_id=${page.next_page_id}`)).body;
  }
};

describe('sink pusher', () => {
  it('pushes every event in order through failures, then the conversation summary', async () => {
    sink.failNext = 3;
    const s = await start();
    const id = (await s.api('/api/conversations', { method: 'POST', body: startRequest(join(dir.path, 'w'), { initial_message: userText('hi') }) })).body.id;
    await eventually(() => s.agents.hosts.length === 1);
    for (let i = 0; i < 150; i++) s.agents.hosts[0]!.emit(agentMessage(`m${i}`));
    const expected = await storedIds(s, id);
    await eventually(() => sink.ids(id).length === expected.length && sink.updates.at(-1)?.execution_status === 'finished');
    expect(sink.ids(id)).toEqual(expected);
    // Batches arrive in sequence order, each at most the batch size, each starting where the last ack ended.
    let next = 1;
    for (const a of sink.arrivals) {
      expect(a.seqs.length).toBeLessThanOrEqual(40);
      expect(a.seqs[0]).toBeLessThanOrEqual(next);
      expect(a.seqs).toEqual(a.seqs.map((_, i) => a.seqs[0]! + i));
      next = Math.max(next, a.seqs.at(-1)! + 1);
    }
    expect(sink.keys).toEqual(new Set(['sink-key']));
    expect(sink.updates.at(-1)).toMatchObject({ id, execution_status: 'finished' });
  });

  it('resumes from the stored cursor after a restart, re-sending nothing already acknowledged', async () => {
    const s = await start();
    const id = (await s.api('/api/conversations', { method: 'POST', body: startRequest(join(dir.path, 'w'), { initial_message: userText('hi') }) })).body.id;
    await eventually(async () => sink.ids(id).length === (await storedIds(s, id)).length && sink.ids(id).length > 0);
    const acked = sink.ids(id).length;
    sink.down = true;
    for (let i = 0; i < 30; i++) s.agents.hosts[0]!.emit(agentMessage(`while down ${i}`));
    await eventually(() => sink.requests > 2); // it kept retrying
    await s.close();
    servers.splice(0);

    sink.down = false;
    sink.arrivals.length = 0;
    const again = await start();
    const expected = await storedIds(again, id);
    await eventually(() => sink.ids(id).length === expected.length);
    expect(sink.ids(id)).toEqual(expected);
    expect(Math.min(...sink.arrivals.filter((a) => a.conversation === id).flatMap((a) => a.seqs))).toBe(acked + 1);
  });

  it('sends each conversation summary again after a restart, even with no event left to push', async () => {
    const s = await start();
    const id = (await s.api('/api/conversations', { method: 'POST', body: startRequest(join(dir.path, 'w'), { initial_message: userText('hi') }) })).body.id;
    await eventually(() => sink.updates.at(-1)?.execution_status === 'finished');
    await s.close();
    servers.splice(0);
    // The API may have marked the run lost meanwhile: the restarted server says where it stands.
    sink.updates.length = 0;
    sink.arrivals.length = 0;
    await start();
    await eventually(() => sink.updates.some((u) => u.id === id));
    expect(sink.updates.find((u) => u.id === id)).toMatchObject({ execution_status: 'finished' });
    expect(sink.arrivals).toEqual([]); // nothing re-sent
  });

  it('pushes a deleted conversation to the end, reports deleting, then drops its events locally', async () => {
    sink.down = true;
    const s = await start();
    const id = (await s.api('/api/conversations', { method: 'POST', body: startRequest(join(dir.path, 'w'), { initial_message: userText('bye') }) })).body.id;
    await eventually(async () => (await s.api(`/api/conversations/${id}`)).body.execution_status === 'finished');
    const expected = await storedIds(s, id);
    await s.api(`/api/conversations/${id}`, { method: 'DELETE' });
    sink.down = false;
    await eventually(() => sink.updates.at(-1)?.execution_status === 'deleting');
    expect(sink.ids(id)).toEqual(expected);
    const db = new Database(join(dir.path, 'data', 'agent-server.db'), { readonly: true });
    try {
      await eventually(() => (db.prepare('SELECT COUNT(*) AS n FROM events WHERE conversation_id = ?').get(id) as { n: number }).n === 0);
    } finally {
      db.close();
    }
  });
});
