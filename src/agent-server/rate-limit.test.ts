// A model provider's rate limit (429 with Retry-After) while the real agent runs: the agent server
// says that the run waits and until when (spec part 3: RUNNING → PAUSED due to rate limits) — in the
// conversation, over the WebSocket and to the event sink — and that it goes on after the wait.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { join } from 'node:path';
import { createAgent } from '../agent/agent.ts';
import { startScriptedLlm, type ScriptedLlm } from '../testing/scripted-llm/server.ts';
import { FakeSink } from './fake-sink.ts';
import { eventually, FrameCollector, startTestServer, tempDir, TEST_KEY, userText, type TestServer } from './test-support.ts';

let llm: ScriptedLlm;
let sink: FakeSink;
let dir: ReturnType<typeof tempDir>;
let s: TestServer;

beforeEach(async () => {
  llm = await startScriptedLlm();
  sink = new FakeSink();
  await sink.start();
  dir = tempDir();
  s = await startTestServer(dir.path, { createAgent, sink: { url: sink.url, key: 'sink-key' }, tuning: { sink: { retryInitialMs: 10, retryMaxMs: 50 } } });
});
afterEach(async () => {
  await s.close();
  await sink.close();
  await llm.close();
  dir.remove();
});

const isLimitUpdate = (e: any) => e.kind === 'ConversationStateUpdateEvent' && e.key === 'rate_limited_until';

describe('rate limits of the model provider', () => {
  it('reports the wait for a 429 with Retry-After (until when, then null) while the status stays running, and the run goes on', async () => {
    llm.push({ status: 429, errorMessage: 'Rate limit reached, retry in 2 s', retryAfterSeconds: 2 }, { toolCalls: [{ name: 'finish', arguments: { message: 'done' } }] });
    const body = { workspace: { kind: 'LocalWorkspace', working_dir: join(dir.path, 'p') }, agent: { llm: { model: 'openai/scripted', base_url: llm.url, num_retries: 3 }, tools: [] } };
    const id = (await s.api('/api/conversations', { method: 'POST', body })).body.id;
    const ws = new FrameCollector(`${s.url.replace('http', 'ws')}/sockets/events/${id}`, { 'x-session-api-key': TEST_KEY });
    await ws.until(1);
    const sent = Date.now();
    await s.api(`/api/conversations/${id}/events`, { method: 'POST', body: userText('go', true) });

    // While it waits: the state update on the socket, the conversation, the sink's update.
    const frames = await ws.until((f) => f.some((e) => isLimitUpdate(e) && typeof e.value === 'string'));
    const until = Date.parse(frames.find((e) => isLimitUpdate(e)).value);
    expect(until - sent).toBeGreaterThanOrEqual(1900);
    expect(until - sent).toBeLessThan(4000);
    const info = (await s.api(`/api/conversations/${id}`)).body;
    expect(info).toMatchObject({ execution_status: 'running', rate_limited_until: new Date(until).toISOString() });
    await eventually(async () => sink.updates.some((u) => u.id === id && u.rate_limited_until === new Date(until).toISOString()), 2000);
    expect(llm.requests).toHaveLength(1); // the retry waits for Retry-After

    await eventually(async () => (await s.api(`/api/conversations/${id}`)).body.execution_status === 'finished', 15_000);
    expect(llm.requests).toHaveLength(2);
    const items = (await s.api(`/api/conversations/${id}/events/search`)).body.items as any[];
    // The end of the wait is a null value, left out of the exclude_none wire form (as OpenHands sends None).
    expect(items.filter(isLimitUpdate).map((e) => e.value ?? null)).toEqual([new Date(until).toISOString(), null]);
    // The wait ended before the answer's actions: the null comes before the ActionEvent.
    expect(items.findIndex((e) => isLimitUpdate(e) && e.value === undefined)).toBeLessThan(items.findIndex((e) => e.kind === 'ActionEvent'));
    // The status never left running meanwhile (no paused: OpenHands clients wait on running for the run to end).
    expect(items.filter((e) => e.kind === 'ConversationStateUpdateEvent' && e.key === 'execution_status').map((e) => e.value)).toEqual(['running', 'finished']);
    expect((await s.api(`/api/conversations/${id}`)).body).not.toHaveProperty('rate_limited_until');
    await eventually(async () => sink.updates.filter((u) => u.id === id).at(-1)?.execution_status === 'finished', 5000);
    expect(sink.updates.filter((u) => u.id === id).at(-1)?.rate_limited_until).toBeNull();
    await ws.close();
  }, 30_000);

  it('a pause during the wait ends it: the wait is cleared, no retry is made', async () => {
    llm.push({ status: 429, retryAfterSeconds: 30 });
    const body = { workspace: { kind: 'LocalWorkspace', working_dir: join(dir.path, 'p') }, agent: { llm: { model: 'openai/scripted', base_url: llm.url, num_retries: 3 }, tools: [] }, initial_message: userText('go', true) };
    const id = (await s.api('/api/conversations', { method: 'POST', body })).body.id;
    await eventually(async () => typeof (await s.api(`/api/conversations/${id}`)).body.rate_limited_until === 'string', 10_000);
    expect((await s.api(`/api/conversations/${id}/pause`, { method: 'POST' })).status).toBe(200);
    await eventually(async () => !('rate_limited_until' in (await s.api(`/api/conversations/${id}`)).body), 5000);
    expect((await s.api(`/api/conversations/${id}`)).body.execution_status).toBe('paused');
    expect(llm.requests).toHaveLength(1);
  });

  it('a 5xx retried after a wait is no rate limit: nothing is reported', async () => {
    llm.push({ status: 503, retryAfterMs: 10 }, { toolCalls: [{ name: 'finish', arguments: { message: 'done' } }] });
    const body = { workspace: { kind: 'LocalWorkspace', working_dir: join(dir.path, 'p') }, agent: { llm: { model: 'openai/scripted', base_url: llm.url, num_retries: 3 }, tools: [] }, initial_message: userText('go', true) };
    const id = (await s.api('/api/conversations', { method: 'POST', body })).body.id;
    await eventually(async () => (await s.api(`/api/conversations/${id}`)).body.execution_status === 'finished', 15_000);
    expect(llm.requests).toHaveLength(2);
    const items = (await s.api(`/api/conversations/${id}/events/search`)).body.items as any[];
    expect(items.filter(isLimitUpdate)).toEqual([]);
  });
});
