import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { join } from 'node:path';
import { eventually, startRequest, startTestServer, tempDir, userText, type TestServer } from '../test-support.ts';

let dir: ReturnType<typeof tempDir>;
let s: TestServer;
let src: string;

beforeEach(async () => {
  dir = tempDir();
  s = await startTestServer(dir.path);
  const body = startRequest(join(dir.path, 'w'), { initial_message: userText('first'), tags: { team: 'a' }, secrets: { TOKEN: 'tok_secret' } });
  src = (await s.api('/api/conversations', { method: 'POST', body })).body.id;
  await eventually(async () => (await s.api(`/api/conversations/${src}`)).body.execution_status === 'finished');
});
afterEach(async () => {
  await s.close();
  dir.remove();
});

const ids = async (id: string) => (await s.api(`/api/conversations/${id}/events/search`)).body.items.map((e: any) => e.id) as string[];

describe('fork', () => {
  it('copies the events with their ids, starts idle, takes tags only from the request, leaves the source alone', async () => {
    const before = await ids(src);
    const res = await s.api(`/api/conversations/${src}/fork`, { method: 'POST', body: { title: 'Branch', tags: { exp: '1' } } });
    expect(res.status).toBe(201);
    const fork = res.body;
    expect(fork).toMatchObject({ execution_status: 'idle', title: 'Branch', tags: { exp: '1', title: 'Branch' }, forked_from_conversation_id: src });
    expect(fork.id).not.toBe(src);
    expect(await ids(fork.id)).toEqual(before);
    expect(fork.workspace.working_dir).toBe(join(dir.path, 'w'));

    await s.api(`/api/conversations/${fork.id}/events`, { method: 'POST', body: userText('on the fork', true) });
    await eventually(async () => (await s.api(`/api/conversations/${fork.id}`)).body.execution_status === 'finished');
    expect(await ids(src)).toEqual(before);
    // The fork's agent has the source's memory, its secrets and its model.
    const forkHost = s.agents.hosts.find((h) => h.conversationId === fork.id)!;
    expect(forkHost.events().slice(0, before.length).map((e) => e.id)).toEqual(before);
    expect(forkHost.secrets).toEqual({ TOKEN: 'tok_secret' });
    expect(forkHost.llm?.model).toBe('test/model');
  });

  it('forks at an event, with a chosen id; 409 on a taken id, 404 on unknown source or event', async () => {
    const all = await ids(src);
    const id = '11111111-2222-4333-8444-555555555555';
    const res = await s.api(`/api/conversations/${src}/fork`, { method: 'POST', body: { id, from_event_id: all[0] } });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ id, forked_from_event_id: all[0] });
    expect(await ids(id)).toEqual([all[0]]);
    expect((await s.api(`/api/conversations/${src}/fork`, { method: 'POST', body: { id } })).status).toBe(409);
    expect((await s.api(`/api/conversations/${src}/fork`, { method: 'POST', body: { from_event_id: 'nope' } })).status).toBe(404);
    expect((await s.api(`/api/conversations/${id.replace('1', '9')}/fork`, { method: 'POST' })).status).toBe(404);
  });
});
