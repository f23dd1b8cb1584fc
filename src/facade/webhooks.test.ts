// The event sink (/api/v1/webhooks/{sandbox}/...) and the app events API that reads what it stored.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ConversationKind } from '../api/conversation.ts';
import { ANNOTATION_LAST_ACTIVITY } from '../api/meta.ts';
import { SandboxKind } from '../api/sandbox.ts';
import { eventually, makeSandbox, messageEvent, NS, pauseEvent, setStartTask, startConversationId, startHarness, type Harness } from './test-support.ts';

describe('event sink', () => {
  let h: Harness;
  let id: string;
  beforeEach(async () => {
    h = await startHarness();
    await makeSandbox(h.store, h.alice.user, 'sb-1', 'RUNNING', { url: 'http://127.0.0.1:1', key: 'sk-1' });
    id = await startConversationId(h, { sandbox_id: 'sb-1' });
    await setStartTask(h.store, id, 'READY', 'sb-1');
  });
  afterEach(() => h.close());

  const push = (items: unknown[], opts: { key?: string; sandbox?: string; conv?: string } = {}) =>
    h.call('POST', `/api/v1/webhooks/${opts.sandbox ?? 'sb-1'}/events/${opts.conv ?? id}`, {
      key: null,
      headers: { 'x-session-api-key': opts.key ?? 'sk-1' },
      body: { items },
    });

  it('authenticates with the sandbox session key, not an API key', async () => {
    expect((await push([], { key: 'wrong' })).status).toBe(401);
    expect((await push([], { sandbox: 'nope' })).status).toBe(401);
    const viaApiKey = await h.call('POST', `/api/v1/webhooks/sb-1/events/${id}`, { body: { items: [] } });
    expect(viaApiKey.status).toBe(401);
    expect(await push([])).toMatchObject({ status: 200, body: { acknowledged_seq: 0 } });
  });

  it('stores idempotently and acknowledges up to the first gap', async () => {
    expect((await push([{ seq: 1, event: messageEvent('e1', 'hello') }, { seq: 3, event: pauseEvent('e3') }])).body).toEqual({ acknowledged_seq: 1 });
    expect((await push([{ seq: 1, event: messageEvent('e1', 'hello') }])).body).toEqual({ acknowledged_seq: 1 });
    // Agent servers spell conversation ids as dashed UUIDs.
    const dashed = `${id.slice(0, 8)}-${id.slice(8, 12)}-${id.slice(12, 16)}-${id.slice(16, 20)}-${id.slice(20)}`;
    expect((await push([{ seq: 2, event: pauseEvent('e2') }], { conv: dashed })).body).toEqual({ acknowledged_seq: 3 });
    expect((await h.call('GET', `/api/v1/conversation/${id}/events/count`)).body).toBe(3);
  });

  it("keeps the full_state snapshot at seq 0 first in the log, without counting it toward the acknowledgement", async () => {
    const snapshot = { id: 'snap', timestamp: '2026-03-01T09:59:59.000Z', source: 'environment', key: 'full_state', value: { id, execution_status: 'idle' }, kind: 'ConversationStateUpdateEvent' };
    expect((await push([{ seq: 0, event: snapshot }, { seq: 1, event: messageEvent('e1', 'hello') }])).body).toEqual({ acknowledged_seq: 1 });
    // Sent again (a retried first push, another id): the first one stays.
    expect((await push([{ seq: 0, event: { ...snapshot, id: 'snap-2' } }, { seq: 1, event: messageEvent('e1', 'hello') }])).body).toEqual({ acknowledged_seq: 1 });
    const items = (await h.call('GET', `/api/v1/conversation/${id}/events/search`)).body.items;
    expect(items.map((e: { id: string }) => e.id)).toEqual(['snap', 'e1']);
    expect((await push([{ seq: -1, event: pauseEvent('neg') }])).status).toBe(422);
  });

  it('refuses invalid events with located 422s and stores nothing of the batch', async () => {
    const r = await push([{ seq: 1, event: pauseEvent('ok') }, { seq: 2, event: { id: 'x', timestamp: 't', kind: 'MessageEvent', bogus: 1 } }]);
    expect(r.status).toBe(422);
    expect(r.body.detail.every((i: { loc: unknown[] }) => JSON.stringify(i.loc.slice(0, 4)) === JSON.stringify(['body', 'items', 1, 'event']))).toBe(true);
    expect((await h.call('GET', `/api/v1/conversation/${id}/events/count`)).body).toBe(0);
  });

  it('refuses events for a conversation of another sandbox or an unknown one, and drains those of a deleted one', async () => {
    await makeSandbox(h.store, h.alice.user, 'sb-2', 'RUNNING', { key: 'sk-2' });
    // Another sandbox's conversation and an unknown one get the same answer (nothing tells them apart).
    const other = await push([{ seq: 1, event: pauseEvent('x') }], { sandbox: 'sb-2', key: 'sk-2' });
    const unknown = 'ffffffffffffffffffffffffffffffff';
    const none = await push([{ seq: 1, event: pauseEvent('x') }], { sandbox: 'sb-2', key: 'sk-2', conv: unknown });
    expect(other.status).toBe(404);
    expect(JSON.stringify(other.body).replaceAll(id, 'ID')).toBe(JSON.stringify(none.body).replaceAll(unknown, 'ID'));
    await h.store.delete(ConversationKind, NS, id);
    await eventually(() => h.db.wasDeleted(id), 'cleanup');
    expect((await push([{ seq: 4, event: pauseEvent('y') }, { seq: 5, event: pauseEvent('z') }])).body).toEqual({ acknowledged_seq: 5 });
    expect(await h.db.events.count(id, {})).toBe(0);
  });

  it('records activity on the Sandbox, at most once per 15 seconds', async () => {
    const stamp = async () => (await h.store.get(SandboxKind, NS, 'sb-1'))!.metadata.annotations?.[ANNOTATION_LAST_ACTIVITY];
    await push([{ seq: 1, event: pauseEvent('a') }]);
    expect(await stamp()).toBe('2026-03-01T10:00:00.000Z');
    const rv = (await h.store.get(SandboxKind, NS, 'sb-1'))!.metadata.resourceVersion;
    h.clock.advance(10_000);
    await push([{ seq: 2, event: pauseEvent('b') }]);
    expect((await h.store.get(SandboxKind, NS, 'sb-1'))!.metadata.resourceVersion).toBe(rv);
    h.clock.advance(6_000);
    await push([{ seq: 3, event: pauseEvent('c') }]);
    expect(await stamp()).toBe('2026-03-01T10:00:16.000Z');
  });

  it('writes execution status and metrics from conversation updates, and keeps the title', async () => {
    const update = (body: Record<string, unknown>) =>
      h.call('POST', '/api/v1/webhooks/sb-1/conversations', { key: null, headers: { 'x-session-api-key': 'sk-1' }, body });
    const metrics = { model_name: 'm', accumulated_cost: 1.25, accumulated_token_usage: { prompt_tokens: 100, completion_tokens: 7 } };
    expect(
      (await update({ id, execution_status: 'running', title: 'Fix the build', metrics, updated_at: '2026-03-01T10:02:00Z' })).body,
    ).toEqual({ success: true });
    const c = await h.store.get(ConversationKind, NS, id);
    expect(c!.status).toMatchObject({ executionStatus: 'running', metrics, startTask: { status: 'READY' }, sandboxName: 'sb-1' });
    await update({ id, execution_status: 'deleting', updated_at: '2026-03-01T10:03:00Z' });
    const rec = (await h.call('GET', `/api/v1/app-conversations?ids=${id}`)).body[0];
    expect(rec).toMatchObject({ execution_status: 'running', title: 'Fix the build', metrics, updated_at: '2026-03-01T10:03:00.000Z' });
    expect((await update({ id, execution_status: 'idle', updated_at: 'x' })).status).toBe(200);
    expect((await h.store.get(ConversationKind, NS, id))!.status!.executionStatus).toBe('idle');
    expect((await h.call('POST', '/api/v1/webhooks/sb-1/conversations', { key: null, headers: { 'x-session-api-key': 'nope' }, body: { id } })).status).toBe(401);
  });
});

describe('app events API', () => {
  let h: Harness;
  let id: string;
  beforeEach(async () => {
    h = await startHarness();
    await makeSandbox(h.store, h.alice.user, 'sb-1', 'RUNNING', { key: 'sk-1' });
    id = await startConversationId(h, { sandbox_id: 'sb-1' });
    await setStartTask(h.store, id, 'READY', 'sb-1');
    const items = Array.from({ length: 7 }, (_, i) => ({
      seq: i + 1,
      event: i % 3 === 0 ? messageEvent(`e${i + 1}`, `m${i}`, `2026-03-01T10:00:0${i}.000Z`) : pauseEvent(`e${i + 1}`, `2026-03-01T10:00:0${i}.000Z`),
    }));
    await h.call('POST', `/api/v1/webhooks/sb-1/events/${id}`, { key: null, headers: { 'x-session-api-key': 'sk-1' }, body: { items } });
  });
  afterEach(() => h.close());

  const ids = (r: { body: { items: { id: string }[] } }) => r.body.items.map((e) => e.id);

  it('pages in seq order with stable cursors, both directions', async () => {
    const p1 = await h.call('GET', `/api/v1/conversation/${id}/events/search?limit=3`);
    expect(ids(p1)).toEqual(['e1', 'e2', 'e3']);
    expect(p1.body.next_page_id).toBe('4');
    const p2 = await h.call('GET', `/api/v1/conversation/${id}/events/search?limit=10&page_id=4`);
    expect(ids(p2)).toEqual(['e4', 'e5', 'e6', 'e7']);
    expect(p2.body.next_page_id).toBeNull();
    const desc = await h.call('GET', `/api/v1/conversation/${id}/events/search?limit=2&sort_order=TIMESTAMP_DESC`);
    expect(ids(desc)).toEqual(['e7', 'e6']);
    expect((await h.call('GET', `/api/v1/conversation/${id}/events/search?page_id=abc`)).status).toBe(422);
    expect((await h.call('GET', `/api/v1/conversation/${id}/events/search?limit=101`)).status).toBe(422);
  });

  it('filters by kind in every OpenHands spelling and by time', async () => {
    const kinds = ['MessageEvent', 'openhands.sdk.event.llm_convertible.message.MessageEvent', 'openhands__sdk__event__llm_convertible__message__MessageEvent-Output__1'];
    for (const k of kinds) {
      expect(ids(await h.call('GET', `/api/v1/conversation/${id}/events/search?kind__eq=${k}`))).toEqual(['e1', 'e4', 'e7']);
    }
    expect((await h.call('GET', `/api/v1/conversation/${id}/events/search?kind__eq=Nope`)).body).toEqual({ items: [], next_page_id: null });
    const r = await h.call('GET', `/api/v1/conversation/${id}/events/count?timestamp__gte=2026-03-01T10:00:02Z&timestamp__lt=2026-03-01T10:00:05`);
    expect(r.body).toBe(3);
    expect((await h.call('GET', `/api/v1/conversation/${id}/events/count?kind__eq=PauseEvent`)).body).toBe(4);
  });

  it('reads events by id aligned with null, in the exclude_none wire form', async () => {
    const r = await h.call('GET', `/api/v1/conversation/${id}/events?id=e4&id=missing&id=e1`);
    expect(r.body.map((e: { id: string } | null) => e?.id ?? null)).toEqual(['e4', null, 'e1']);
    expect(r.body[0]).not.toHaveProperty('llm_response_id'); // null in storage, omitted on the wire
  });

  it('keeps the transcript readable after the sandbox is gone, and hides it from other users', async () => {
    await h.store.delete(SandboxKind, NS, 'sb-1');
    expect((await h.call('GET', `/api/v1/conversation/${id}/events/count`)).body).toBe(7);
    expect((await h.call('GET', `/api/v1/conversation/${id}/events/count`, { key: h.bob.key })).status).toBe(404);
    expect((await h.call('GET', `/api/v1/conversation/${id}/events?id=e1`, { key: h.bob.key })).status).toBe(404);
  });
});
