// The event-sink push against a real local HTTP sink that fails on purpose.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import Database from 'better-sqlite3';
import { join } from 'node:path';
import { FakeSink } from './fake-sink.ts';
import { agentMessage, eventually, startRequest, startTestServer, tempDir, userText, type TestServer } from './test-support.ts';

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
    // The log opens with the full_state snapshot (seq 0), dated at the conversation's creation, sent
    // with the first batch only.
    const snap = sink.snapshot(id)!;
    expect(snap).toMatchObject({ kind: 'ConversationStateUpdateEvent', key: 'full_state', value: { id } });
    expect(String(snap['timestamp']) <= String((await s.api(`/api/conversations/${id}/events/search?limit=1`)).body.items[0].timestamp)).toBe(true);
    expect(sink.snapshots).toBe(1);
    expect(sink.updates.at(-1)).toMatchObject({ id, execution_status: 'finished' });
  });

  it('splits batches that would exceed the sink body limit instead of retrying one forever', async () => {
    // 40 events of 600 KB are 24 MB: over the sink's 16 MiB limit as one batch of 40.
    const s = await start();
    const id = (await s.api('/api/conversations', { method: 'POST', body: startRequest(join(dir.path, 'w'), { initial_message: userText('hi') }) })).body.id;
    await eventually(() => s.agents.hosts.length === 1);
    const big = 'x'.repeat(600_000);
    for (let i = 0; i < 40; i++) s.agents.hosts[0]!.emit(agentMessage(`${i} ${big}`));
    const expected = await storedIds(s, id);
    await eventually(() => sink.ids(id).length === expected.length, 20_000);
    expect(sink.ids(id)).toEqual(expected);
    expect(sink.tooLarge).toBe(0);
    expect(Math.max(...sink.arrivals.map((a) => a.bytes))).toBeLessThanOrEqual(sink.maxBodyBytes);
    expect(sink.arrivals.filter((a) => a.conversation === id).length).toBeGreaterThan(1);
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
