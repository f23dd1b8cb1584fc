import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { join } from 'node:path';
import type { AgentHost } from '../../agent/types.ts';
import { SLOW_CLIENT_REASON } from './client.ts';
import { agentMessage, eventually, FrameCollector, startRequest, startTestServer, tempDir, TEST_KEY, userText, type TestServer } from '../test-support.ts';

let dir: ReturnType<typeof tempDir>;
let s: TestServer;
let cid: string;
let host: AgentHost;
const sockets: FrameCollector[] = [];

beforeEach(async () => {
  dir = tempDir();
  s = await startTestServer(dir.path, { tuning: { sockets: { authTimeoutMs: 300, maxQueueEvents: 50, closeGraceMs: 5000 } } });
  cid = (await s.api('/api/conversations', { method: 'POST', body: startRequest(join(dir.path, 'w'), { initial_message: userText('hi') }) })).body.id;
  await eventually(async () => (await s.api(`/api/conversations/${cid}`)).body.execution_status === 'finished');
  host = s.agents.hosts[0]!;
});
afterEach(async () => {
  await Promise.all(sockets.splice(0).map((c) => c.close()));
  await s.close();
  dir.remove();
});

function connect(query = '', headers: Record<string, string> = { 'x-session-api-key': TEST_KEY }, id = cid): FrameCollector {
  const c = new FrameCollector(`${s.url.replace('http', 'ws')}/sockets/events/${id}${query}`, headers);
  sockets.push(c);
  return c;
}
const stored = async () => (await s.api(`/api/conversations/${cid}/events/search`)).body.items.map((e: any) => e.id) as string[];

describe('events socket', () => {
  it('sends full_state first, then live events only when no replay is asked', async () => {
    const c = connect();
    await c.until(1);
    expect(c.frames[0]).toMatchObject({ kind: 'ConversationStateUpdateEvent', key: 'full_state', value: { id: cid, execution_status: 'finished' } });
    host.emit(agentMessage('live'));
    await c.until(2);
    expect(c.frames[1].llm_message.content[0].text).toBe('live');
    // full_state snapshots are never persisted.
    // (last_user_message_id and the two execution statuses of the setup run)
    expect((await s.api(`/api/conversations/${cid}/events/count?kind=ConversationStateUpdateEvent`)).body).toBe(3);
  });

  it('sends the events of one synchronous step to every subscriber whole, in order, as text frames', async () => {
    const clients = [connect(), connect(), connect()];
    await Promise.all(clients.map((c) => c.until(1)));
    for (let i = 0; i < 20; i++) host.emit(agentMessage(`step ${i}`));
    for (const c of clients) {
      await c.until(21);
      expect(c.frames.slice(1).map((f) => f.llm_message.content[0].text)).toEqual(Array.from({ length: 20 }, (_, i) => `step ${i}`));
      expect(c.binaryFrames).toBe(0);
    }
  });

  it('replays everything with resend_mode=all and the deprecated resend_all=true', async () => {
    const ids = await stored();
    for (const q of ['?resend_mode=all', '?resend_all=true']) {
      const c = connect(q);
      await c.until(1 + ids.length);
      expect(c.frames.slice(1).map((f) => f.id)).toEqual(ids);
    }
  });

  it('replays since a timestamp', async () => {
    const before = await stored();
    await new Promise((r) => setTimeout(r, 5)); // distinct millisecond timestamps
    const cut = new Date().toISOString();
    host.emit(agentMessage('after cut'));
    const c = connect(`?resend_mode=since&after_timestamp=${encodeURIComponent(cut)}`);
    await c.until(2);
    expect(c.frames.slice(1).map((f) => f.llm_message?.content[0].text)).toEqual(['after cut']);
    expect(before.length).toBeGreaterThan(0);
  });

  it('resumes after_seq / after_event_id with no gap and no duplicate while events keep arriving', async () => {
    for (let i = 0; i < 300; i++) host.emit(agentMessage(`bulk ${i}`));
    const all = (await s.api(`/api/conversations/${cid}/events/search?limit=100`)).body.items.map((e: any) => e.id);
    const c = connect('?after_seq=2');
    // Emit while the replay (300+ events, paged) is in progress.
    const live: string[] = [];
    for (let i = 0; i < 50; i++) {
      const e = agentMessage(`during ${i}`);
      live.push(e.id);
      host.emit(e);
      if (i % 10 === 0) await new Promise((r) => setImmediate(r));
    }
    const total = 4 + 300 + 50; // initial run: message, running, echo, finished
    await c.until(1 + total - 2);
    const got = c.frames.slice(1).map((f) => f.id);
    expect(new Set(got).size).toBe(got.length);
    expect(got.slice(0, all.length - 2)).toEqual(all.slice(2));
    expect(got.slice(-50)).toEqual(live);
    const byId = connect(`?after_event_id=${got[got.length - 51]}`);
    await byId.until(51);
    expect(byId.frames.slice(1).map((f) => f.id)).toEqual(live);
  });

  it('accepts first-message auth, rejects a bad or missing one with 4001, a wrong key with the upgrade with 403', async () => {
    const ok = connect('', {});
    await ok.opened;
    ok.ws.send(JSON.stringify({ type: 'auth', session_api_key: TEST_KEY }));
    await ok.until(1);
    expect(ok.frames[0].key).toBe('full_state');

    const bad = connect('', {});
    await bad.opened;
    bad.ws.send(JSON.stringify({ type: 'auth', session_api_key: 'nope' }));
    expect((await bad.done).code).toBe(4001);

    const silent = connect('', {});
    expect((await silent.done).code).toBe(4001); // auth timeout
    // A wrong key given with the upgrade is refused before it, with HTTP 403 (as OpenHands).
    const wrongHeader = connect('', { 'x-session-api-key': 'nope' });
    wrongHeader.opened.catch(() => undefined);
    const refused = await new Promise<number | undefined>((resolve) => {
      wrongHeader.ws.once('unexpected-response', (_req, res) => resolve(res.statusCode));
      wrongHeader.ws.once('open', () => resolve(undefined));
    });
    expect(refused).toBe(403);
    const query = connect(`?session_api_key=${TEST_KEY}`, {});
    await query.until(1);
  });

  it('closes 4004 for an unknown conversation', async () => {
    const c = connect('', undefined, '0f8e1c2a-9b7d-4c55-a90e-2b1f7e6d5c4a');
    expect((await c.done).code).toBe(4004);
  });

  it('treats a client Message frame as send_message with run', async () => {
    const c = connect();
    await c.until(1);
    c.ws.send(JSON.stringify({ role: 'user', content: [{ type: 'text', text: 'from socket' }] }));
    await c.until((f) => f.some((e) => e.llm_message?.content?.[0]?.text === 'echo: from socket'));
    c.ws.send('not json');
    await c.until((f) => f.some((e) => e.kind === 'ServerErrorEvent'));
  });

  it('closes a client that stops reading with 1013, without slowing the agent or other clients', async () => {
    const slow = connect();
    const fast = connect();
    await slow.until(1);
    await fast.until(1);
    slow.ws.pause(); // stops reading its socket
    const big = 'x'.repeat(64 * 1024);
    const sent = 400; // 25 MiB: far more than the socket buffers hold
    // The agent emits synchronously; emit never waits on subscribers.
    for (let i = 0; i < sent; i++) {
      host.emit(agentMessage(`${i} ${big}`));
      // Pace the agent to the fast reader (never more than 20 frames behind, well inside its bound).
      if (i % 20 === 19) await fast.until(2 + i);
    }
    await fast.until(1 + sent);
    expect(fast.frames.length).toBe(1 + sent);
    slow.ws.resume();
    const closed = await slow.done;
    expect(closed).toEqual({ code: 1013, reason: SLOW_CLIENT_REASON });
    expect(slow.frames.length).toBeLessThan(1 + sent);
    // It resumes from the last event it got, with nothing missing.
    const last = slow.frames[slow.frames.length - 1].id;
    const again = connect(`?after_event_id=${last}`);
    await again.until(1 + sent - (slow.frames.length - 1));
    expect([...slow.frames.slice(1), ...again.frames.slice(1)].map((f) => f.id)).toEqual(fast.frames.slice(1).map((f) => f.id));
  });

  it('closes sockets of a deleted conversation with 4004', async () => {
    const c = connect();
    await c.until(1);
    await s.api(`/api/conversations/${cid}`, { method: 'DELETE' });
    expect((await c.done).code).toBe(4004);
  });

  it('treats after_seq past the head as the head', async () => {
    const c = connect('?after_seq=100000');
    await c.until(1);
    host.emit(agentMessage('next'));
    await c.until(2);
    expect(c.frames[1].llm_message.content[0].text).toBe('next');
  });

  it('cuts off a peer that stops answering pings', async () => {
    const other = await startTestServer(join(dir.path, 'ping'), { tuning: { sockets: { pingIntervalMs: 30 } } });
    try {
      const id = (await other.api('/api/conversations', { method: 'POST', body: startRequest(join(dir.path, 'w2')) })).body.id;
      const live = new FrameCollector(`${other.url.replace('http', 'ws')}/sockets/events/${id}`, { 'x-session-api-key': TEST_KEY });
      const dead = new FrameCollector(`${other.url.replace('http', 'ws')}/sockets/events/${id}`, { 'x-session-api-key': TEST_KEY }, { autoPong: false });
      sockets.push(live, dead);
      await live.until(1);
      expect((await dead.done).code).toBe(1006); // terminated, no close frame
      expect(live.closed).toBeUndefined();
    } finally {
      await other.close();
    }
  });
});
