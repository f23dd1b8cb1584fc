// OpenHands app-API routes beyond spec part 2, over HTTP: sandbox specs, models and providers,
// pending messages, stream-start, the conversation schema, and 501 (never 404) for the rest.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { NOT_BUILT_ROUTES } from '../api/app/compat.ts';
import { ConversationKind } from '../api/conversation.ts';
import { LABEL_START_TASK } from '../api/meta.ts';
import { eventually, makeSandbox, NS, setStartTask, startConversationId, startFakeAgentServer, startHarness, type FakeAgentServer, type Harness } from './test-support.ts';

const text = (t: string) => ({ role: 'user', content: [{ type: 'text', text: t }] });

describe('sandbox specs', () => {
  let h: Harness;
  afterEach(() => h.close());

  it('embedded: one default spec, a process sandbox without image', async () => {
    h = await startHarness();
    const r = await h.call('GET', '/api/v1/sandbox-specs/search');
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ items: [{ id: 'default', runtime: 'process', image: null, resources: null }], next_page_id: null });
    const batch = await h.call('GET', '/api/v1/sandbox-specs?id=default&id=nope');
    expect(batch.body).toEqual([r.body.items[0], null]);
  });

  it("cluster: the chart's sandbox image and resources, and the spec a sandbox reports", async () => {
    const resources = { requests: { cpu: '100m', memory: '256Mi' }, limits: { memory: '2Gi' } };
    h = await startHarness({}, { sandboxSpec: { runtime: 'kubernetes', image: 'ghcr.io/acme/toolchain:1.2', resources, readAt: '2026-03-01T09:00:00.000Z' } });
    const r = await h.call('GET', '/api/v1/sandbox-specs/search?limit=1');
    expect(r.body.items).toEqual([
      { id: 'default', runtime: 'kubernetes', image: 'ghcr.io/acme/toolchain:1.2', command: null, created_at: '2026-03-01T09:00:00.000Z', initial_env: {}, working_dir: '/workspace/project', resources },
    ]);
    const sb = await h.call('POST', '/api/v1/sandboxes?sandbox_spec_id=default');
    expect(sb.status).toBe(200);
    expect(sb.body.sandbox_spec_id).toBe('default');
  });
});

describe('models and providers', () => {
  let h: Harness;
  afterEach(() => h.close());

  it('list the configured model and its provider, filtered by query', async () => {
    h = await startHarness({}, { modelUpstream: { model: 'anthropic/claude-sonnet-4-5', baseUrl: 'http://127.0.0.1:9/v1' } });
    expect((await h.call('GET', '/api/v1/config/models/search')).body).toEqual({ items: [{ id: 'anthropic/claude-sonnet-4-5', provider: 'anthropic', is_default: true }], next_page_id: null });
    expect((await h.call('GET', '/api/v1/config/models/search?query=gpt')).body.items).toEqual([]);
    expect((await h.call('GET', '/api/v1/config/providers/search')).body.items).toEqual([{ id: 'anthropic', models: ['anthropic/claude-sonnet-4-5'] }]);
  });

  it('are empty without a configured model', async () => {
    h = await startHarness();
    expect((await h.call('GET', '/api/v1/config/models/search')).body).toEqual({ items: [], next_page_id: null });
  });
});

describe('pending messages', () => {
  let h: Harness;
  let agent: FakeAgentServer;
  beforeEach(async () => {
    h = await startHarness({ capacity: 5, maxPendingMessages: 2 });
    agent = await startFakeAgentServer('sk-1');
    await makeSandbox(h.store, h.alice.user, 'sb-1', 'RUNNING', { url: agent.url, key: 'sk-1' });
  });
  afterEach(async () => {
    await h.close();
    await agent.close();
  });

  it('queue by start task id while starting, deliver in order at READY, 429 past the limit', async () => {
    const started = await h.call('POST', '/api/v1/app-conversations', { body: { sandbox_id: 'sb-1' } });
    const taskId = started.body.id as string;
    const first = await h.call('POST', `/api/v1/conversations/task-${taskId}/pending-messages`, { body: text('one') });
    expect(first).toMatchObject({ status: 201, body: { queued: true, position: 1 } });
    const { items } = await h.store.list(ConversationKind, NS, { labelSelector: `${LABEL_START_TASK}=${taskId}` });
    const conv = items[0]!;
    const second = await h.call('POST', `/api/v1/conversations/${conv.metadata.name}/pending-messages`, { body: text('two') });
    expect(second).toMatchObject({ status: 201, body: { queued: true, position: 2 } });
    expect((await h.call('POST', `/api/v1/conversations/${conv.metadata.name}/pending-messages`, { body: text('three') })).status).toBe(429);
    expect(agent.received).toEqual([]);

    await setStartTask(h.store, conv.metadata.name, 'READY', 'sb-1');
    await eventually(() => agent.received.length === 2, 'both queued messages to be delivered');
    expect(agent.received.map((r) => r.body.content[0].text)).toEqual(['one', 'two']);
    expect(agent.received.every((r) => r.body.run === true)).toBe(true);

    // Ready with nothing waiting: straight to the agent.
    const now = await h.call('POST', `/api/v1/conversations/${conv.metadata.name}/pending-messages`, { body: text('four') });
    expect(now).toMatchObject({ status: 200, body: { queued: false, position: 0 } });
    expect(agent.received.map((r) => r.body.content[0].text)).toEqual(['one', 'two', 'four']);
  });

  it('404 for unknown and foreign conversations, 422 with field paths for bad bodies', async () => {
    const id = await startConversationId(h, { sandbox_id: 'sb-1' });
    expect((await h.call('POST', `/api/v1/conversations/${id}/pending-messages`, { key: h.bob.key, body: text('x') })).status).toBe(404);
    expect((await h.call('POST', '/api/v1/conversations/task-not-a-uuid/pending-messages', { body: text('x') })).status).toBe(404);
    const bad = await h.call('POST', `/api/v1/conversations/${id}/pending-messages`, { body: { role: 'assistant', content: [] } });
    expect(bad.status).toBe(422);
    expect(bad.body.detail.map((i: { loc: unknown[] }) => i.loc)).toEqual(expect.arrayContaining([['body', 'role'], ['body', 'content']]));
  });
});

describe('stream-start', () => {
  let h: Harness;
  afterEach(() => h.close());

  it('streams one JSON array of start task snapshots, one per step as OpenHands does, closed at READY', async () => {
    h = await startHarness();
    await makeSandbox(h.store, h.alice.user, 'sb-1', 'RUNNING', { url: 'http://127.0.0.1:9' });
    const res = await fetch(`${h.server.url}/api/v1/app-conversations/stream-start`, {
      method: 'POST',
      headers: { authorization: `Bearer ${h.alice.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ sandbox_id: 'sb-1', initial_message: text('hi') }),
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    const reader = res.body!.getReader();
    let got = '';
    const readUntil = async (needle: string) => {
      while (!got.includes(needle)) {
        const { value, done } = await reader.read();
        if (done) throw new Error(`stream ended before ${needle}: ${got}`);
        got += Buffer.from(value).toString('utf8');
      }
    };
    await readUntil('"WORKING"');
    const { items } = await h.store.list(ConversationKind, NS);
    const id = items[0]!.metadata.name;
    // A write within the step (its updated time) is no new snapshot: OpenHands sends one per step.
    await setStartTask(h.store, id, 'WORKING', undefined, '2030-01-01T00:00:00Z');
    // Playing the controller, step by step; the stream is read between steps so none is merged.
    for (const step of ['WAITING_FOR_SANDBOX', 'PREPARING_REPOSITORY', 'STARTING_CONVERSATION', 'READY'] as const) {
      await setStartTask(h.store, id, step, 'sb-1');
      await readUntil(`"${step}"`);
    }
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      got += Buffer.from(value).toString('utf8');
    }
    const snapshots = JSON.parse(got) as { status: string; app_conversation_id: string | null }[];
    expect(snapshots.map((s) => s.status)).toEqual(['WORKING', 'WAITING_FOR_SANDBOX', 'PREPARING_REPOSITORY', 'STARTING_CONVERSATION', 'READY']);
    expect(snapshots.at(-1)!.app_conversation_id).toBe(id);
  });

  it('sends the first snapshot at once, not when the start ends; a client may leave before READY', async () => {
    h = await startHarness();
    const abort = new AbortController();
    const res = await fetch(`${h.server.url}/api/v1/app-conversations/stream-start`, {
      method: 'POST',
      headers: { authorization: `Bearer ${h.alice.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ initial_message: text('hi') }),
      signal: abort.signal,
    });
    const reader = res.body!.getReader();
    const { value } = await reader.read();
    expect(Buffer.from(value!).toString('utf8')).toMatch(/^\[\n\{.*"WORKING"/s);
    abort.abort();
    const { items } = await h.store.list(ConversationKind, NS);
    expect(items).toHaveLength(1);
  });

  it('refuses a bad start request with 422 before streaming', async () => {
    h = await startHarness();
    const r = await h.call('POST', '/api/v1/app-conversations/stream-start', { body: { bogus: 1 } });
    expect(r.status).toBe(422);
  });
});

describe('routes not built', () => {
  let h: Harness;
  afterEach(() => h.close());

  // None at the moment (the git searches were the last); kept for the next route listed.
  it.skipIf(NOT_BUILT_ROUTES.length === 0)('answer 501 with the reason, never 404', async () => {
    h = await startHarness();
    for (const route of NOT_BUILT_ROUTES) {
      const path = route.path.replace('{name}', 'fast').replace('{conversation_id}', '0123456789abcdef0123456789abcdef');
      const r = await h.call(route.method.toUpperCase(), path, route.method === 'get' ? {} : { body: {} });
      expect(r.status, `${route.method} ${path}`).toBe(501);
      expect(JSON.stringify(r.body)).toContain(route.reason.slice(0, 30));
    }
  });
});
