// GET /api/v1/app-conversations (batch), /search, /count and the 501 routes.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ConversationKind } from '../api/conversation.ts';
import { SandboxKind } from '../api/sandbox.ts';
import { makeSandbox, NS, setSandboxPhase, setStartTask, startConversationId, startHarness, type Harness } from './test-support.ts';

describe('app-conversation records', () => {
  let h: Harness;
  beforeEach(async () => (h = await startHarness()));
  afterEach(() => h.close());

  const start = (body: Record<string, unknown> = {}, key = h.alice.key) => startConversationId(h, body, key);

  it('shows sandbox status, execution status, metrics and the agent server address', async () => {
    const id = await start({ selected_repository: 'acme/api', title: 'Fix tests' });
    let rec = (await h.call('GET', `/api/v1/app-conversations?ids=${id}`)).body[0];
    expect(rec).toMatchObject({ id, sandbox_id: null, sandbox_status: 'STARTING', execution_status: null, metrics: null, title: 'Fix tests', conversation_url: null });

    await makeSandbox(h.store, h.alice.user, 'sb-1', 'RUNNING', { url: 'http://127.0.0.1:7000', key: 'sk-1' });
    const c = await setStartTask(h.store, id, 'READY', 'sb-1');
    const metrics = { accumulated_cost: 0.5, accumulated_token_usage: { prompt_tokens: 10, completion_tokens: 2 } };
    await h.store.updateStatus(ConversationKind, { ...c, status: { ...c.status, executionStatus: 'running', metrics } });
    rec = (await h.call('GET', `/api/v1/app-conversations?ids=${id}`)).body[0];
    expect(rec).toMatchObject({
      sandbox_id: 'sb-1',
      sandbox_status: 'RUNNING',
      execution_status: 'running',
      metrics,
      selected_repository: 'acme/api',
      conversation_url: `http://127.0.0.1:7000/api/conversations/${id}`,
      session_api_key: 'sk-1',
    });

    await setSandboxPhase(h.store, 'sb-1', 'PAUSED');
    rec = (await h.call('GET', `/api/v1/app-conversations?ids=${id}`)).body[0];
    expect(rec).toMatchObject({ sandbox_status: 'PAUSED', execution_status: 'running', session_api_key: null, conversation_url: null });

    await h.store.delete(SandboxKind, NS, 'sb-1');
    rec = (await h.call('GET', `/api/v1/app-conversations?ids=${id}`)).body[0];
    expect(rec.sandbox_status).toBe('MISSING');
  });

  it('reports ERROR for a start that failed before placement', async () => {
    const id = await start();
    await setStartTask(h.store, id, 'ERROR');
    expect((await h.call('GET', `/api/v1/app-conversations?ids=${id}`)).body[0].sandbox_status).toBe('ERROR');
  });

  it('answers batches aligned with null for unknown and foreign ids, and refuses 100 or more', async () => {
    const mine = await start();
    const theirs = await start({}, h.bob.key);
    const r = await h.call('GET', `/api/v1/app-conversations?ids=${mine}&ids=${theirs}&ids=nope`);
    expect(r.body.map((x: { id: string } | null) => x?.id ?? null)).toEqual([mine, null, null]);
    const many = Array.from({ length: 101 }, () => `ids=${mine}`).join('&');
    expect((await h.call('GET', `/api/v1/app-conversations?${many}`)).status).toBe(422);
  });

  it('searches newest first with filters and a cursor that new conversations do not shift', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 4; i++) {
      ids.push(await start({ title: i % 2 ? `Odd ${i}` : `Even ${i}` }));
      h.clock.advance(60_000);
    }
    await start({}, h.bob.key);
    const p1 = await h.call('GET', '/api/v1/app-conversations/search?limit=3');
    expect(p1.body.items.map((x: { id: string }) => x.id)).toEqual([ids[3], ids[2], ids[1]]);
    await start({ title: 'newer' });
    const p2 = await h.call('GET', `/api/v1/app-conversations/search?limit=3&page_id=${encodeURIComponent(p1.body.next_page_id)}`);
    expect(p2.body).toEqual({ items: [expect.objectContaining({ id: ids[0] })], next_page_id: null });

    const odd = await h.call('GET', '/api/v1/app-conversations/search?title__contains=odd');
    expect(odd.body.items.map((x: { id: string }) => x.id)).toEqual([ids[3], ids[1]]);
    expect((await h.call('GET', '/api/v1/app-conversations/count?created_at__gte=2026-03-01T10:01:00Z&created_at__lt=2026-03-01T10:03:00Z')).body).toBe(2);
    expect((await h.call('GET', '/api/v1/app-conversations/count')).body).toBe(5);
    expect((await h.call('GET', '/api/v1/app-conversations/count?created_at__gte=yesterday')).status).toBe(422);

    await makeSandbox(h.store, h.alice.user, 'sb-x', 'RUNNING');
    await setStartTask(h.store, ids[2]!, 'READY', 'sb-x');
    expect((await h.call('GET', '/api/v1/app-conversations/search?sandbox_id__eq=sb-x')).body.items.map((x: { id: string }) => x.id)).toEqual([ids[2]]);
  });

  it('answers 501 for routes a later issue builds, after the ownership check', async () => {
    const id = await start();
    const theirs = await start({}, h.bob.key);
    for (const [method, path] of [
      ['GET', '/files'],
    ] as const) {
      const r = await h.call(method, `/api/v1/app-conversations/${id}${path}`);
      expect(r.status, `${method} ${path}`).toBe(501);
      expect(r.body.detail).toMatch(/is not implemented yet$/);
      expect((await h.call(method, `/api/v1/app-conversations/${theirs}${path}`)).status).toBe(404);
    }
  });
});
