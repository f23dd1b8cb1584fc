// Every resource is owned: another user's conversations, start tasks, sandboxes and events read
// exactly like unknown ones (null in batch reads, 404 on single routes, absent from search).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeSandbox, pauseEvent, setStartTask, startConversationId, startHarness, type Harness } from './test-support.ts';

describe('cross-user isolation', () => {
  let h: Harness;
  let conv: string;
  let task: string;
  beforeAll(async () => {
    h = await startHarness();
    await makeSandbox(h.store, h.alice.user, 'sb-a', 'RUNNING', { url: 'http://127.0.0.1:1', key: 'sk-a' });
    task = (await h.call('POST', '/api/v1/app-conversations', { body: { sandbox_id: 'sb-a' } })).body.id;
    conv = await startConversationId(h, { sandbox_id: 'sb-a' });
    await setStartTask(h.store, conv, 'READY', 'sb-a');
    await h.call('POST', `/api/v1/webhooks/sb-a/events/${conv}`, { key: null, headers: { 'x-session-api-key': 'sk-a' }, body: { items: [{ seq: 1, event: pauseEvent('e1') }] } });
  });
  afterAll(() => h.close());

  const asBob = (method: string, path: string, body?: unknown) => h.call(method, path, { key: h.bob.key, ...(body !== undefined ? { body } : {}) });

  it('hides the owner’s records from batch reads, searches and counts', async () => {
    expect((await asBob('GET', `/api/v1/app-conversations?ids=${conv}`)).body).toEqual([null]);
    expect((await asBob('GET', `/api/v1/app-conversations/start-tasks?ids=${task}`)).body).toEqual([null]);
    expect((await asBob('GET', '/api/v1/sandboxes?id=sb-a')).body).toEqual([null]);
    expect((await asBob('GET', '/api/v1/app-conversations/search')).body).toEqual({ items: [], next_page_id: null });
    expect((await asBob('GET', '/api/v1/app-conversations/start-tasks/search')).body).toEqual({ items: [], next_page_id: null });
    expect((await asBob('GET', '/api/v1/sandboxes/search')).body).toEqual({ items: [], next_page_id: null });
    expect((await asBob('GET', '/api/v1/app-conversations/count')).body).toBe(0);
    expect((await asBob('GET', '/api/v1/app-conversations/start-tasks/count')).body).toBe(0);
    // The owner sees them.
    expect((await h.call('GET', '/api/v1/app-conversations/count')).body).toBe(2);
  });

  it('answers 404 on every single-resource route, like an unknown id', async () => {
    const unknown = 'ffffffffffffffffffffffffffffffff';
    for (const target of [conv, unknown]) {
      expect((await asBob('POST', `/api/v1/app-conversations/${target}/send-message`, { content: [{ type: 'text', text: 'x' }] })).status).toBe(404);
      expect((await asBob('GET', `/api/v1/conversation/${target}/events/search`)).status).toBe(404);
      expect((await asBob('GET', `/api/v1/conversation/${target}/events/count`)).status).toBe(404);
      expect((await asBob('GET', `/api/v1/conversation/${target}/events?id=e1`)).status).toBe(404);
      expect((await asBob('PATCH', `/api/v1/app-conversations/${target}`, {})).status).toBe(404);
    }
    for (const target of ['sb-a', 'sb-unknown']) {
      expect((await asBob('POST', `/api/v1/sandboxes/${target}/pause`)).status).toBe(404);
      expect((await asBob('POST', `/api/v1/sandboxes/${target}/resume`)).status).toBe(404);
      expect((await asBob('DELETE', `/api/v1/sandboxes/${target}`)).status).toBe(404);
    }
    expect((await asBob('POST', '/api/v1/app-conversations', { sandbox_id: 'sb-a' })).status).toBe(404);
  });

  it('answers a foreign id exactly like an unknown one on every conversation route, and changes nothing', async () => {
    const unknown = 'ffffffffffffffffffffffffffffffff';
    const before = (await h.call('GET', `/api/v1/app-conversations?ids=${conv}`)).body;
    const routes: [method: string, path: (id: string) => string, body?: unknown][] = [
      ['GET', (id) => `/api/v1/app-conversations/${id}/file?file_path=/etc/hostname`],
      ['GET', (id) => `/api/v1/app-conversations/${id}/git/changes?path=/workspace`],
      ['GET', (id) => `/api/v1/app-conversations/${id}/git/diff?path=/workspace/a.txt`],
      ['GET', (id) => `/api/v1/app-conversations/${id}/download`],
      ['GET', (id) => `/api/v1/app-conversations/${id}/skills`],
      ['GET', (id) => `/api/v1/app-conversations/${id}/hooks`],
      ['GET', (id) => `/api/v1/app-conversations/${id}/files`],
      ['PATCH', (id) => `/api/v1/app-conversations/${id}`, { title: 'taken over' }],
      ['DELETE', (id) => `/api/v1/app-conversations/${id}`],
    ];
    for (const [method, path, body] of routes) {
      const foreign = await h.call(method, path(conv), { key: h.bob.key, ...(body !== undefined ? { body } : {}) });
      const none = await h.call(method, path(unknown), { key: h.bob.key, ...(body !== undefined ? { body } : {}) });
      const what = `${method} ${path('{id}')}`;
      expect(foreign.status, what).toBe(404);
      expect(foreign.body, what).toEqual({ detail: `Conversation ${conv} not found` });
      // Same status, same shape, same headers that matter: nothing tells the two apart.
      expect(JSON.stringify(foreign.body).replaceAll(conv, 'ID'), what).toBe(JSON.stringify(none.body).replaceAll(unknown, 'ID'));
      expect(foreign.headers.get('content-type'), what).toBe(none.headers.get('content-type'));
      expect(foreign.headers.get('content-disposition'), what).toBeNull();
    }
    // Bob's PATCH and DELETE touched nothing of Alice's.
    expect((await h.call('GET', `/api/v1/app-conversations?ids=${conv}`)).body).toEqual(before);
    expect((await h.call('GET', `/api/v1/conversation/${conv}/events/count`)).body).toBe(1);
  });

  it('does not let one sandbox key write into another user’s conversation', async () => {
    await makeSandbox(h.store, h.bob.user, 'sb-b', 'RUNNING', { key: 'sk-b' });
    const r = await h.call('POST', `/api/v1/webhooks/sb-b/events/${conv}`, { key: null, headers: { 'x-session-api-key': 'sk-b' }, body: { items: [{ seq: 2, event: pauseEvent('x') }] } });
    const unknown = 'ffffffffffffffffffffffffffffffff';
    const none = await h.call('POST', `/api/v1/webhooks/sb-b/events/${unknown}`, { key: null, headers: { 'x-session-api-key': 'sk-b' }, body: { items: [{ seq: 2, event: pauseEvent('x') }] } });
    // The same answer as for a conversation that does not exist: the sandbox learns nothing (#18 finding 11).
    expect(r.status).toBe(404);
    expect(JSON.stringify(r.body).replaceAll(conv, 'ID')).toBe(JSON.stringify(none.body).replaceAll(unknown, 'ID'));
    // Status updates for it are a no-op, as for an unknown id.
    const title = (await h.call('GET', `/api/v1/app-conversations?ids=${conv}`)).body[0].title;
    for (const id of [conv, unknown]) {
      expect((await h.call('POST', '/api/v1/webhooks/sb-b/conversations', { key: null, headers: { 'x-session-api-key': 'sk-b' }, body: { id, execution_status: 'finished', title: 'hijacked', updated_at: '2026-03-01T11:00:00Z' } })).body).toEqual({ success: true });
    }
    expect((await h.call('GET', `/api/v1/app-conversations?ids=${conv}`)).body[0].title).toBe(title);
    expect((await h.call('POST', `/api/v1/webhooks/sb-a/events/${conv}`, { key: null, headers: { 'x-session-api-key': 'sk-b' }, body: { items: [] } })).status).toBe(401);
  });
});
