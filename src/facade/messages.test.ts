// POST /api/v1/app-conversations/{id}/send-message: proxy, queue while paused or not yet ready, 409 while STARTING, delivery
// in order once running, read-only refusals, activity.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ANNOTATION_LAST_ACTIVITY } from '../api/meta.ts';
import { SandboxKind } from '../api/sandbox.ts';
import {
  eventually,
  makeSandbox,
  NS,
  setSandboxPhase,
  setStartTask,
  startConversationId,
  startFakeAgentServer,
  startHarness,
  type FakeAgentServer,
  type Harness,
} from './test-support.ts';

const text = (t: string) => ({ role: 'user', content: [{ type: 'text', text: t }] });

describe('send-message', () => {
  let h: Harness;
  let agent: FakeAgentServer;
  let id: string;
  beforeEach(async () => {
    h = await startHarness({ capacity: 5 });
    agent = await startFakeAgentServer('sk-1');
    await makeSandbox(h.store, h.alice.user, 'sb-1', 'RUNNING', { url: agent.url, key: 'sk-1' });
    id = await startConversationId(h, { sandbox_id: 'sb-1' });
    await setStartTask(h.store, id, 'READY', 'sb-1');
  });
  afterEach(async () => {
    await h.close();
    await agent.close();
  });

  const send = (t: string, extra: Record<string, unknown> = {}) => h.call('POST', `/api/v1/app-conversations/${id}/send-message`, { body: { ...text(t), ...extra } });

  it('proxies to the agent server with the sandbox session key and records activity', async () => {
    const r = await send('hi', { run: false });
    expect(r).toMatchObject({ status: 200, body: { success: true, sandbox_status: 'RUNNING', message: null } });
    expect(agent.received).toEqual([{ path: `/api/conversations/${id}/events`, key: 'sk-1', body: { role: 'user', content: [{ type: 'text', text: 'hi', cache_prompt: false }], run: false } }]);
    const sb = await h.store.get(SandboxKind, NS, 'sb-1');
    expect(sb!.metadata.annotations?.[ANNOTATION_LAST_ACTIVITY]).toBe('2026-03-01T10:00:00.000Z');
  });

  it('dials the in-cluster address while clients keep getting the public one', async () => {
    // As KubernetesRuntime reports it: a public host that does not resolve here, the Service that does.
    const sb = (await h.store.get(SandboxKind, NS, 'sb-1'))!;
    const publicUrl = 'http://sb-1-runtime.agents.invalid';
    await h.store.updateStatus(SandboxKind, { ...sb, status: { ...sb.status, url: publicUrl, internalUrl: agent.url } });
    expect((await send('through the service', { run: false })).status).toBe(200);
    expect(agent.received.map((r) => r.path)).toEqual([`/api/conversations/${id}/events`]);
    const conv = await h.call('GET', `/api/v1/app-conversations?ids=${id}`);
    expect(conv.body[0]).toMatchObject({ conversation_url: `${publicUrl}/api/conversations/${id}` });
    expect(JSON.stringify(conv.body)).not.toContain(agent.url);
  });

  it('defaults run to true and validates the body', async () => {
    await send('go');
    expect(agent.received[0]!.body.run).toBe(true);
    const bad = await h.call('POST', `/api/v1/app-conversations/${id}/send-message`, { body: { role: 'assistant', content: [] } });
    expect(bad.status).toBe(422);
    expect(bad.body.detail.map((i: { loc: unknown[] }) => i.loc)).toEqual(expect.arrayContaining([['body', 'role'], ['body', 'content']]));
  });

  it('maps agent server failures to 502 and an unreachable one to 503', async () => {
    agent.failWith = 500;
    expect((await send('x')).status).toBe(502);
    await agent.close();
    expect((await send('x')).status).toBe(503);
  });

  it('resumes a paused sandbox, queues, and delivers in order once it runs', async () => {
    await h.store.update(SandboxKind, { ...(await h.store.get(SandboxKind, NS, 'sb-1'))!, spec: { owner: h.alice.user.id, paused: true } });
    await setSandboxPhase(h.store, 'sb-1', 'PAUSED');
    const r = await send('one');
    expect(r.body).toEqual({ success: true, sandbox_status: 'PAUSED', message: 'queued until the sandbox resumes' });
    expect((await h.store.get(SandboxKind, NS, 'sb-1'))!.spec.paused).toBe(false);
    expect((await send('two')).body.message).toBe('queued until the sandbox resumes');
    expect(agent.received).toEqual([]);

    await setSandboxPhase(h.store, 'sb-1', 'RUNNING');
    await eventually(() => agent.received.length === 2, 'queued messages delivered');
    expect(agent.received.map((m) => m.body.content[0].text)).toEqual(['one', 'two']);
    // The agent server has the message before the delivery loop reads its answer and drops the row.
    await eventually(async () => (await h.db.pending.count(id)) === 0, 'the delivered messages leave the queue');
    // Later messages go straight through, once.
    await send('three');
    expect(agent.received.map((m) => m.body.content[0].text)).toEqual(['one', 'two', 'three']);
  });

  it('queues while the conversation is still starting and keeps retrying an unreachable agent server', async () => {
    const starting = await startConversationId(h, { sandbox_id: 'sb-1' });
    const r = await h.call('POST', `/api/v1/app-conversations/${starting}/send-message`, { body: text('early') });
    expect(r.body).toMatchObject({ success: true, message: expect.stringContaining('queued') });
    agent.failWith = 503;
    await setStartTask(h.store, starting, 'READY', 'sb-1');
    await eventually(async () => (await h.db.pending.count(starting)) === 1, 'an attempt');
    agent.failWith = undefined;
    await eventually(() => agent.received.length === 1, 'delivery after the agent server recovers');
    expect(agent.received[0]!.path).toBe(`/api/conversations/${starting}/events`);
  });

  it('refuses messages to ERROR (409) and MISSING (410) conversations, which stay readable', async () => {
    await setSandboxPhase(h.store, 'sb-1', 'ERROR');
    const err = await send('x');
    expect(err.status).toBe(409);
    expect(err.body.detail).toMatch(/read-only/);
    await h.store.delete(SandboxKind, NS, 'sb-1');
    const gone = await send('x');
    expect(gone.status).toBe(410);
    expect(gone.body.detail).toMatch(/read-only.*MISSING/);
    expect((await h.call('GET', `/api/v1/app-conversations?ids=${id}`)).body[0].sandbox_status).toBe('MISSING');
    expect((await h.call('GET', `/api/v1/conversation/${id}/events/search`)).status).toBe(200);
  });

  it('refuses messages to a conversation whose start failed', async () => {
    await setStartTask(h.store, id, 'ERROR', 'sb-1');
    const r = await send('x');
    expect(r.status).toBe(409);
    expect(r.body.detail).toMatch(/failed to start/);
  });

  it('answers 404 for unknown and foreign conversations and 429 past the queue limit', async () => {
    expect((await h.call('POST', `/api/v1/app-conversations/${id}/send-message`, { key: h.bob.key, body: text('x') })).status).toBe(404);
    expect((await h.call('POST', '/api/v1/app-conversations/ffffffffffffffffffffffffffffffff/send-message', { body: text('x') })).status).toBe(404);
    await h.store.update(SandboxKind, { ...(await h.store.get(SandboxKind, NS, 'sb-1'))!, spec: { owner: h.alice.user.id, paused: true } });
    await setSandboxPhase(h.store, 'sb-1', 'PAUSED');
    for (let i = 0; i < 10; i++) expect((await send(`m${i}`)).status).toBe(200);
    expect((await send('overflow')).status).toBe(429);
  });

  it('refuses messages while the sandbox is STARTING (spec part 3) and takes them once it runs', async () => {
    const unplaced = await startConversationId(h);
    const early = await h.call('POST', `/api/v1/app-conversations/${unplaced}/send-message`, { body: text('too early') });
    expect(early.status).toBe(409);
    expect(early.body.detail).toMatch(/STARTING.*start task is READY/);
    await setSandboxPhase(h.store, 'sb-1', 'STARTING');
    expect((await send('while booting')).status).toBe(409);
    expect(await h.db.pending.count(id)).toBe(0);
    expect(agent.received).toEqual([]);
    await setSandboxPhase(h.store, 'sb-1', 'RUNNING');
    expect((await send('now')).body).toEqual({ success: true, sandbox_status: 'RUNNING', message: null });
    expect(agent.received.map((m) => m.body.content[0].text)).toEqual(['now']);
  });
});
