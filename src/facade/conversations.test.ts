// GET /api/v1/app-conversations (batch), /search and /count.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ConversationKind } from '../api/conversation.ts';
import { SandboxKind } from '../api/sandbox.ts';
import { makeSandbox, messageEvent, NS, setSandboxPhase, setStartTask, startConversationId, startHarness, type Harness } from './test-support.ts';

describe('app-conversation records', () => {
  let h: Harness;
  beforeEach(async () => (h = await startHarness()));
  afterEach(() => h.close());

  const start = (body: Record<string, unknown> = {}, key = h.alice.key) => startConversationId(h, body, key);

  it('titles a conversation: the given title, else the first line of its message, else Conversation <id>', async () => {
    const message = (text: string) => ({ initial_message: { role: 'user', content: [{ type: 'text', text }], run: false } });
    const given = await start({ ...message('ignored'), title: 'Fix tests' });
    const fromMessage = await start(message('\n  Fix the   flaky payment tests\nthen open a PR'));
    const long = await start(message('x'.repeat(80)));
    const none = await start();
    const rows = (await h.call('GET', `/api/v1/app-conversations?ids=${given}&ids=${fromMessage}&ids=${long}&ids=${none}`)).body;
    expect(rows.map((r: { title: string }) => r.title)).toEqual(['Fix tests', 'Fix the flaky payment tests', `${'x'.repeat(49)}…`, `Conversation ${none.slice(0, 5)}`]);
    const found = (await h.call('GET', '/api/v1/app-conversations/search?title__contains=payment')).body.items;
    expect(found.map((r: { id: string }) => r.id)).toEqual([fromMessage]);
  });

  it('shows sandbox status, execution status, metrics and the agent server address', async () => {
    const id = await start({ selected_repository: 'acme/api', title: 'Fix tests' });
    let rec = (await h.call('GET', `/api/v1/app-conversations?ids=${id}`)).body[0];
    expect(rec).toMatchObject({ id, app_conversation_id: id, sandbox_id: null, sandbox_status: 'STARTING', execution_status: null, metrics: null, title: 'Fix tests', conversation_url: null });
    // OpenHands' fields for ACP agents and agent profiles (not built here): there, and null.
    expect(rec).toMatchObject({ acp_server: null, launched_agent_profile: null });

    await makeSandbox(h.store, h.alice.user, 'sb-1', 'RUNNING', { url: 'http://127.0.0.1:7000', key: 'sk-1' });
    const c = await setStartTask(h.store, id, 'READY', 'sb-1');
    const metrics = { model_name: 'openai/gpt-test', accumulated_cost: 0.5, accumulated_token_usage: { prompt_tokens: 10, completion_tokens: 2 } };
    await h.store.updateStatus(ConversationKind, { ...c, status: { ...c.status, executionStatus: 'running', metrics } });
    rec = (await h.call('GET', `/api/v1/app-conversations?ids=${id}`)).body[0];
    expect(rec).toMatchObject({
      sandbox_id: 'sb-1',
      sandbox_status: 'RUNNING',
      execution_status: 'running',
      metrics,
      llm_model: 'openai/gpt-test',
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

  it('reads PAUSED while the agent waits for confirmation or is paused on its running sandbox, and RUNNING again when it goes on (spec part 3)', async () => {
    await makeSandbox(h.store, h.alice.user, 'sb-1', 'RUNNING', { url: 'http://127.0.0.1:7000', key: 'sk-1' });
    const id = await start();
    await setStartTask(h.store, id, 'READY', 'sb-1');
    const sink = { key: null, headers: { 'x-session-api-key': 'sk-1' } };
    const seen: [string, string, string | null][] = [];
    for (const execution of ['running', 'waiting_for_confirmation', 'running', 'paused', 'idle']) {
      expect((await h.call('POST', '/api/v1/webhooks/sb-1/conversations', { ...sink, body: { id, execution_status: execution, updated_at: '2026-03-01T10:20:00Z' } })).status).toBe(200);
      const rec = (await h.call('GET', `/api/v1/app-conversations?ids=${id}`)).body[0];
      seen.push([rec.execution_status, rec.sandbox_status, rec.conversation_url]);
    }
    const url = `http://127.0.0.1:7000/api/conversations/${id}`;
    // The sandbox itself keeps running: the agent server stays reachable, the sandbox record says RUNNING.
    expect(seen).toEqual([
      ['running', 'RUNNING', url],
      ['waiting_for_confirmation', 'PAUSED', url],
      ['running', 'RUNNING', url],
      ['paused', 'PAUSED', url],
      ['idle', 'RUNNING', url],
    ]);
    expect((await h.call('GET', '/api/v1/sandboxes?id=sb-1')).body[0].status).toBe('RUNNING');
  });

  it('reads PAUSED while the run waits for the model provider\'s rate limit, RUNNING again after (spec part 3), the execution status staying running', async () => {
    await makeSandbox(h.store, h.alice.user, 'sb-1', 'RUNNING', { url: 'http://127.0.0.1:7000', key: 'sk-1' });
    const id = await start();
    await setStartTask(h.store, id, 'READY', 'sb-1');
    const sink = { key: null, headers: { 'x-session-api-key': 'sk-1' } };
    const seen: [string, string][] = [];
    const limited = '2026-03-01T10:20:05.000Z';
    // running; waiting for the rate limit; going on (null); waiting again; the run ends (an update without the field).
    for (const until of [null, limited, null, limited, undefined]) {
      const body = { id, execution_status: until === undefined ? 'finished' : 'running', updated_at: '2026-03-01T10:20:00Z', ...(until === undefined ? {} : { rate_limited_until: until }) };
      expect((await h.call('POST', '/api/v1/webhooks/sb-1/conversations', { ...sink, body })).status).toBe(200);
      const rec = (await h.call('GET', `/api/v1/app-conversations?ids=${id}`)).body[0];
      seen.push([rec.execution_status, rec.sandbox_status]);
    }
    expect(seen).toEqual([
      ['running', 'RUNNING'],
      ['running', 'PAUSED'],
      ['running', 'RUNNING'],
      ['running', 'PAUSED'],
      ['finished', 'RUNNING'],
    ]);
    const conv = await h.store.get(ConversationKind, NS, id);
    expect(conv?.status?.rateLimitedUntil).toBeUndefined();
    // A malformed time is no wait.
    await h.call('POST', '/api/v1/webhooks/sb-1/conversations', { ...sink, body: { id, execution_status: 'running', updated_at: '2026-03-01T10:20:00Z', rate_limited_until: 'soon' } });
    expect((await h.call('GET', `/api/v1/app-conversations?ids=${id}`)).body[0].sandbox_status).toBe('RUNNING');
  });

  it('reports ERROR for a start that failed before placement', async () => {
    const id = await start();
    await setStartTask(h.store, id, 'ERROR');
    expect((await h.call('GET', `/api/v1/app-conversations?ids=${id}`)).body[0].sandbox_status).toBe('ERROR');
  });

  it('answers batches aligned with null for unknown and foreign ids, and refuses 100 or more', async () => {
    const mine = await start();
    const theirs = await start({}, h.bob.key);
    const r = await h.call('GET', `/api/v1/app-conversations?ids=${mine}&ids=${theirs}&ids=ffffffffffffffffffffffffffffffff`);
    expect(r.body.map((x: { id: string } | null) => x?.id ?? null)).toEqual([mine, null, null]);
    const malformed = await h.call('GET', `/api/v1/app-conversations?ids=${mine}&ids=nope`);
    expect(malformed.status).toBe(422);
    expect(malformed.body.detail.map((i: { loc: unknown[] }) => i.loc)).toEqual([['query', 'ids', 1]]);
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

  it('filters search and count by updated_at (events, start task, agent server summary), >= inclusive and < exclusive', async () => {
    await makeSandbox(h.store, h.alice.user, 'sb-1', 'RUNNING', { url: 'http://127.0.0.1:9', key: 'sk-1' });
    const sink = { key: null, headers: { 'x-session-api-key': 'sk-1' } };
    const ids: string[] = [];
    for (let i = 0; i < 4; i++) {
      ids.push(await start());
      h.clock.advance(60_000);
    }
    const [a, b, c, d] = ids as [string, string, string, string];
    for (const id of [a, b, d]) await setStartTask(h.store, id, 'READY', 'sb-1', '2026-03-01T10:05:00Z');
    // a: its newest event; b: its start task; d: the agent server's summary; c: only its creation.
    expect((await h.call('POST', `/api/v1/webhooks/sb-1/events/${a}`, { ...sink, body: { items: [{ seq: 1, event: messageEvent('e1', 'hi', '2026-03-01T10:30:00.000Z') }] } })).status).toBe(200);
    await setStartTask(h.store, b, 'READY', 'sb-1', '2026-03-01T10:10:00Z');
    expect((await h.call('POST', '/api/v1/webhooks/sb-1/conversations', { ...sink, body: { id: d, execution_status: 'idle', updated_at: '2026-03-01T10:20:00Z' } })).status).toBe(200);
    await start({}, h.bob.key); // Bob's (updated 10:04, inside the __lt windows): never in Alice's results

    const search = async (q: string) => {
      const r = await h.call('GET', `/api/v1/app-conversations/search?${q}`);
      expect(r.status, q).toBe(200);
      return r.body.items.map((x: { id: string; updated_at: string }) => [x.id, x.updated_at]);
    };
    const count = async (q: string) => (await h.call('GET', `/api/v1/app-conversations/count?${q}`)).body;
    expect(await search('')).toEqual([
      [d, '2026-03-01T10:20:00.000Z'],
      [c, '2026-03-01T10:02:00.000Z'],
      [b, '2026-03-01T10:10:00.000Z'],
      [a, '2026-03-01T10:30:00.000Z'],
    ]);
    expect((await search('updated_at__gte=2026-03-01T10:10:00Z')).map(([id]: string[]) => id)).toEqual([d, b, a]);
    expect((await search('updated_at__lt=2026-03-01T10:10:00Z')).map(([id]: string[]) => id)).toEqual([c]);
    expect((await search('updated_at__gte=2026-03-01T10:10:00Z&updated_at__lt=2026-03-01T10:30:00Z')).map(([id]: string[]) => id)).toEqual([d, b]);
    expect((await search('updated_at__gte=2026-03-01T10:30:00Z')).map(([id]: string[]) => id)).toEqual([a]);
    expect(await search('updated_at__gte=2026-03-01T10:30:00.001Z')).toEqual([]);
    // Any zone spelling names the same instant.
    expect((await search(`updated_at__gte=${encodeURIComponent('2026-03-01T11:20:00+01:00')}`)).map(([id]: string[]) => id)).toEqual([d, a]);
    // With the other filters and a cursor.
    expect((await search('updated_at__gte=2026-03-01T10:10:00Z&created_at__lt=2026-03-01T10:03:00Z')).map(([id]: string[]) => id)).toEqual([b, a]);
    const p1 = await h.call('GET', '/api/v1/app-conversations/search?updated_at__gte=2026-03-01T10:10:00Z&limit=2');
    expect(p1.body.items.map((x: { id: string }) => x.id)).toEqual([d, b]);
    const p2 = await h.call('GET', `/api/v1/app-conversations/search?updated_at__gte=2026-03-01T10:10:00Z&limit=2&page_id=${encodeURIComponent(p1.body.next_page_id)}`);
    expect(p2.body).toEqual({ items: [expect.objectContaining({ id: a })], next_page_id: null });

    expect(await count('updated_at__gte=2026-03-01T10:10:00Z')).toBe(3);
    expect(await count('updated_at__lt=2026-03-01T10:10:00Z')).toBe(1);
    expect(await count('updated_at__gte=2026-03-01T10:10:00Z&updated_at__lt=2026-03-01T10:30:00Z')).toBe(2);
    expect(await count('updated_at__lt=2026-03-01T10:02:00Z')).toBe(0);
    for (const name of ['updated_at__gte', 'updated_at__lt']) {
      for (const route of ['search', 'count']) {
        const r = await h.call('GET', `/api/v1/app-conversations/${route}?${name}=last-tuesday`);
        expect(r.status).toBe(422);
        expect(r.body.detail).toEqual([expect.objectContaining({ loc: ['query', name], type: 'datetime_parsing' })]);
      }
    }
  });
});
