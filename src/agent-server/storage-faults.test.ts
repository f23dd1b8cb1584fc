// A full disk under a running agent server, on a real filesystem (a small tmpfs, filled and freed):
// the run stops with an error that says so, the server stays up and refuses writes with 507, the
// events it could not save reach the sink from memory, and once space returns everything is saved
// (no gap, no duplicate) and new messages work, without a restart.
import Database from 'better-sqlite3';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { mountSmallFs, type SmallFs } from '../testing/full-disk.ts';
import { FakeSink } from './fake-sink.ts';
import { agentMessage, echoScript, eventually, FakeAgents, FrameCollector, startRequest, startTestServer, TEST_KEY, tempDir, userText, type Script, type TestServer } from './test-support.ts';

const fs = mountSmallFs(8);
const skip = 'skip' in fs ? fs.skip : undefined;
if (skip) console.warn(`storage-faults.test.ts skipped: ${skip}`);

/** Emits 2 KB messages until stopped: enough to fill what the filler file leaves. */
const chatty: Script = async (host, signal) => {
  for (let i = 0; i < 20_000 && !signal.aborted; i++) {
    host.emit(agentMessage(`step ${i} ${'x'.repeat(2000)}`));
    await new Promise((r) => setImmediate(r));
  }
};

describe.skipIf(skip !== undefined)('agent server on a full disk', () => {
  const disk = fs as SmallFs;
  const work = tempDir();
  let sink: FakeSink;
  let s: TestServer | undefined;

  beforeAll(async () => {
    sink = new FakeSink();
    await sink.start();
  });
  afterEach(async () => {
    await s?.close();
    s = undefined;
    disk.free();
  });
  afterAll(async () => {
    await sink.close();
    disk.unmount();
    work.remove();
  });

  it('stops the run with a StorageFullError, answers 507 to writes, and recovers by itself when space returns', async () => {
    const agents = new FakeAgents(chatty);
    const dataDir = join(disk.path, 'data');
    const start = () =>
      startTestServer(work.path, { agents, dataDir, sink: { url: sink.url, key: 'sink-key' }, tuning: { storageRetryMs: 50, minFreeDiskBytes: 1024 * 1024 } });
    s = await start();
    const id = (await s.api('/api/conversations', { method: 'POST', body: startRequest(join(work.path, 'w')) })).body.id as string;
    const release = agents.hold();
    expect((await s.api(`/api/conversations/${id}/events`, { method: 'POST', body: userText('go', true) })).status).toBe(200);
    expect(disk.fill()).toBeGreaterThan(0);
    release();

    // The run ends in error, saying why; the server is up and its health says the disk refuses writes.
    const info = await eventually(async () => {
      const r = await s!.api(`/api/conversations/${id}`);
      return r.body.execution_status === 'error' ? r.body : undefined;
    }, 20_000);
    expect(info.id).toBe(id);
    const health = await s.api('/health', { key: null });
    expect(health.status).toBe(200);
    expect(health.body).toMatchObject({ status: 'degraded', storage: { status: 'faulted', code: 'SQLITE_FULL' }, disk: { low: true } });

    // The error event was delivered from memory: the sink has it although the disk has not.
    const sinkError = await eventually(() => [...(sink.events.get(id)?.values() ?? [])].find((e: any) => e.kind === 'ConversationErrorEvent') as any, 10_000);
    expect(sinkError.code).toBe('StorageFullError');
    expect(sinkError.detail).toContain('the disk is full (SQLITE_FULL)');

    // Writes are refused, clearly; reads still work.
    const refused = await fetch(`${s.url}/api/conversations/${id}/events`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-session-api-key': TEST_KEY },
      body: JSON.stringify(userText('more', true)),
    });
    expect(refused.status).toBe(507);
    expect(refused.headers.get('retry-after')).toBe('30');
    expect(((await refused.json()) as { detail: string }).detail).toMatch(/^Insufficient storage: .*the disk is full \(SQLITE_FULL\)/);
    expect((await s.api(`/api/conversations/${id}/events/search?limit=5`)).status).toBe(200);
    // So are messages over the events socket, which no HTTP route sees.
    const ws = new FrameCollector(`${s.url.replace('http', 'ws')}/sockets/events/${id}`, { 'x-session-api-key': TEST_KEY });
    await ws.until(1);
    ws.ws.send(JSON.stringify(userText('over the socket')));
    const [wsError] = (await ws.until((f) => f.some((e) => e.kind === 'ServerErrorEvent'))).filter((e) => e.kind === 'ServerErrorEvent');
    expect(wsError).toMatchObject({ code: 'InsufficientStorage', detail: expect.stringContaining('SQLITE_FULL') });
    await ws.close();

    // Space returns: the held events are saved without any request, and new messages run again.
    disk.free();
    await eventually(async () => (await s!.api('/health', { key: null })).body.storage.status === 'ok', 10_000);
    agents.script = echoScript;
    expect((await s.api(`/api/conversations/${id}/events`, { method: 'POST', body: userText('again', true) })).status).toBe(200);
    await eventually(async () => (await s!.api(`/api/conversations/${id}`)).body.execution_status === 'finished', 10_000);

    // Nothing lost, nothing duplicated: the database has 1..N without a gap, and the sink the same events in the same order.
    const db = new Database(join(dataDir, 'agent-server.db'), { readonly: true });
    let rows: { seq: number; id: string; kind: string }[];
    try {
      rows = db.prepare('SELECT seq, id, kind FROM events WHERE conversation_id = ? ORDER BY seq').all(id) as typeof rows;
    } finally {
      db.close();
    }
    expect(rows.map((r) => r.seq)).toEqual(rows.map((_, i) => i + 1));
    expect(new Set(rows.map((r) => r.id)).size).toBe(rows.length);
    expect(rows.filter((r) => r.kind === 'ConversationErrorEvent')).toHaveLength(1);
    await eventually(() => sink.ids(id).length === rows.length, 10_000);
    expect(sink.ids(id)).toEqual(rows.map((r) => r.id));

    // And a restart finds them all.
    await s.close();
    s = await start();
    const count = await s.api(`/api/conversations/${id}/events/count`);
    expect(count.body).toBe(rows.length);
  }, 60_000);
});
