import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { join } from 'node:path';
import { newEventBase, type Event } from '../../api/events/index.ts';
import { agentMessage, eventually, startRequest, startTestServer, tempDir, userText, type TestServer } from '../test-support.ts';

let dir: ReturnType<typeof tempDir>;
let s: TestServer;
let cid: string;

beforeEach(async () => {
  dir = tempDir();
  s = await startTestServer(dir.path);
  cid = (await s.api('/api/conversations', { method: 'POST', body: startRequest(join(dir.path, 'w')) })).body.id;
});
afterEach(async () => {
  await s.close();
  dir.remove();
});

const host = () => s.agents.hosts[0]!;
const events = (path = '') => s.api(`/api/conversations/${cid}/events${path}`);

async function emitMany(n: number): Promise<void> {
  // The agent is created on the first run; this conversation's run finishes at once (echo).
  if (s.agents.hosts.length === 0) {
    await s.api(`/api/conversations/${cid}/events`, { method: 'POST', body: userText('start', true) });
    await eventually(async () => (await s.api(`/api/conversations/${cid}`)).body.execution_status === 'finished');
  }
  for (let i = 0; i < n; i++) host().emit(agentMessage(`message ${i}`));
}

describe('sending messages', () => {
  it('appends a user MessageEvent; run=true runs the agent to finished', async () => {
    expect((await s.api(`/api/conversations/${cid}/events`, { method: 'POST', body: userText('hello', true) })).body).toEqual({ success: true });
    await eventually(async () => (await s.api(`/api/conversations/${cid}`)).body.execution_status === 'finished');
    const page = (await events('/search')).body;
    const messages = page.items.filter((e: any) => e.kind === 'MessageEvent');
    expect(messages.map((e: any) => [e.source, e.llm_message.content[0].text])).toEqual([
      ['user', 'hello'],
      ['agent', 'echo: hello'],
    ]);
    const updates = page.items.filter((e: any) => e.kind === 'ConversationStateUpdateEvent').map((e: any) => [e.key, e.value]);
    // The user message updates last_user_message_id (as OpenHands 1.58 says it), then the run's statuses.
    expect(updates).toEqual([['last_user_message_id', messages[0].id], ['execution_status', 'running'], ['execution_status', 'finished']]);
    const info = (await s.api(`/api/conversations/${cid}`)).body;
    expect(info.last_user_message_id).toBe(messages[0].id);
  });

  it('run=false only appends', async () => {
    await s.api(`/api/conversations/${cid}/events`, { method: 'POST', body: userText('quiet') });
    expect(s.agents.runs).toBe(0);
    // The message and its last_user_message_id update.
    expect((await events('/count')).body).toBe(2);
  });

  it('rejects other roles with 422', async () => {
    const res = await s.api(`/api/conversations/${cid}/events`, { method: 'POST', body: { role: 'assistant', content: [] } });
    expect(res.status).toBe(422);
    expect(res.body.detail[0].loc).toEqual(['body', 'role']);
  });
});

describe('search and count', () => {
  it('pages with a cursor that stays stable while events are appended', async () => {
    await emitMany(25);
    const total = (await events('/count')).body as number;
    const seen: string[] = [];
    let page = (await events('/search?limit=10')).body;
    let appended = false;
    for (;;) {
      seen.push(...page.items.map((e: any) => e.id));
      if (!appended) {
        // New events arrive between pages: they show up at the end, nothing shifts or repeats.
        host().emit(agentMessage('late 1'));
        host().emit(agentMessage('late 2'));
        appended = true;
      }
      if (!page.next_page_id) break;
      page = (await events(`/search?limit=10&page_id=${page.next_page_id}`)).body;
    }
    expect(new Set(seen).size).toBe(seen.length);
    expect(seen.length).toBe(total + 2);
    const all = (await events('/search?limit=100')).body.items.map((e: any) => e.id);
    expect(seen).toEqual(all);
  });

  it('sorts descending and pages backwards', async () => {
    await emitMany(5);
    const asc = (await events('/search')).body.items.map((e: any) => e.id);
    const first = (await events('/search?sort_order=TIMESTAMP_DESC&limit=3')).body;
    const second = (await events(`/search?sort_order=TIMESTAMP_DESC&limit=3&page_id=${first.next_page_id}`)).body;
    expect([...first.items, ...second.items].map((e: any) => e.id).slice(0, asc.length)).toEqual([...asc].reverse().slice(0, 6));
  });

  it('filters by kind in every spelling, source, body and timestamp', async () => {
    await emitMany(3);
    const short = (await events('/search?kind=MessageEvent')).body.items;
    const fq = (await events('/search?kind=openhands.sdk.event.llm_convertible.message.MessageEvent')).body.items;
    expect(short.length).toBe(5); // start, echo, 3 emitted
    expect(fq.map((e: any) => e.id)).toEqual(short.map((e: any) => e.id));
    expect((await events('/count?kind=MessageEvent&source=user')).body).toBe(1);
    expect((await events('/count?body=MESSAGE%201')).body).toBe(1);
    expect((await events('/search?body=echo')).body.items[0].llm_message.content[0].text).toBe('echo: start');
    const future = new Date(Date.now() + 60_000).toISOString();
    expect((await events(`/count?timestamp__gte=${future}`)).body).toBe(0);
    expect((await events(`/count?timestamp__lt=${future}`)).body).toBe((await events('/count')).body);
    expect((await events('/count?timestamp__gte=yesterday')).status).toBe(422);
    expect((await events('/search?page_id=999999x')).status).toBe(422);
  });

  it('leaves nulls out of search items (exclude_none)', async () => {
    await emitMany(0);
    host().emit({ ...agentMessage('with nulls'), sender: null, critic_result: null } as Event);
    const item = (await events('/search?body=with%20nulls')).body.items[0];
    expect(item).not.toHaveProperty('sender');
    expect(item).not.toHaveProperty('critic_result');
  });
});

describe('reads by id', () => {
  it('gets one event (404 when unknown) and batch-gets with null for unknown ids', async () => {
    await emitMany(2);
    const [a, b] = (await events('/search')).body.items;
    expect((await events(`/${a.id}`)).body.id).toBe(a.id);
    expect((await events('/nope')).status).toBe(404);
    const batch = await s.api(`/api/conversations/${cid}/events`, { body: [b.id, 'missing', a.id] });
    expect(batch.status).toBe(200);
    expect(batch.body.map((e: any) => e?.id ?? null)).toEqual([b.id, null, a.id]);
  });

  it('answers 422 when the batch body is not an array of strings', async () => {
    for (const body of [{ ids: [] }, [1, 2], 'x']) {
      const res = await s.api(`/api/conversations/${cid}/events`, { body });
      expect(res.status).toBe(422);
      expect(Array.isArray(res.body.detail)).toBe(true);
      expect(res.body.detail[0]).toHaveProperty('loc');
    }
    expect((await s.api(`/api/conversations/${cid}/events`)).status).toBe(422);
  });

  it('404s for an unknown conversation', async () => {
    expect((await s.api('/api/conversations/0f8e1c2a-9b7d-4c55-a90e-2b1f7e6d5c4a/events/search')).status).toBe(404);
  });

  it('refuses invalid events from the agent', async () => {
    await emitMany(0);
    expect(() => host().emit({ ...newEventBase('agent'), kind: 'MessageEvent' } as never)).toThrow();
  });
});
