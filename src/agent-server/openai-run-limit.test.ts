// The OpenAI-compatible gateway answers 429 when every run slot is taken (OpenHands
// max_concurrent_runs, OH_MAX_CONCURRENT_RUNS), before it saves anything, so the client can send the
// same request again; a conversation already running needs no new slot. Real agent server, scripted model.
import OpenAI from 'openai';
import { describe, expect, it } from 'vitest';
import { createAgent } from '../agent/agent.ts';
import { RUN_LIMIT_REACHED } from './conversation/service.ts';
import { maxConcurrentRunsFromEnv } from './main.ts';
import { eventually, TEST_KEY, userText, useRealAgentServer } from './test-support.ts';

const ctx = useRealAgentServer({ createAgent, overrides: () => ({ maxConcurrentRuns: 1, tuning: { gatewayTimeoutMs: 10_000 } }) });
const finish = (message: string) => ({ toolCalls: [{ name: 'finish', arguments: { message } }] });
const client = () => new OpenAI({ baseURL: `${ctx.s.url}/v1`, apiKey: TEST_KEY, maxRetries: 0 });

describe('gateway run slots', () => {
  it('429 while the only slot is taken, nothing saved; a running conversation is continued; a free slot serves again', async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    ctx.llm.push(async () => {
      await gate;
      return finish('slow one');
    });
    const body = { workspace: { kind: 'LocalWorkspace', working_dir: ctx.dir.path }, agent: { llm: { model: 'openai/scripted' }, tools: [] }, initial_message: userText('take your time') };
    const busy = (await ctx.s.api('/api/conversations', { method: 'POST', body })).body.id as string;
    await eventually(() => ctx.llm.requests.length === 1);
    const before = (await ctx.s.api('/api/conversations/count')).body;

    const wanted = '5d1f0a3e-8c2b-4e6f-9a7d-3b2c1e0f4a5b';
    const refused = await fetch(`${ctx.s.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${TEST_KEY}`, 'X-OpenHands-ServerConversation-ID': wanted },
      body: JSON.stringify({ model: 'openhands_default', messages: [{ role: 'user', content: 'hi' }] }),
    });
    expect(refused.status).toBe(429);
    expect(((await refused.json()) as { detail: string }).detail).toBe(RUN_LIMIT_REACHED);
    await expect(client().responses.create({ model: 'openhands_default', input: 'hi' })).rejects.toMatchObject({ status: 429 });
    // Nothing was saved: no conversation, none with the id the client asked for.
    expect((await ctx.s.api('/api/conversations/count')).body).toBe(before);
    expect((await ctx.s.api(`/api/conversations/${wanted}`)).status).toBe(404);

    // The running conversation holds its slot already: a message to it is taken (run after the current run).
    ctx.llm.push(finish('continued'));
    const continued = client().chat.completions.create({ model: 'openhands_default', messages: [{ role: 'user', content: 'and then?' }] }, { headers: { 'X-OpenHands-ServerConversation-ID': busy } });
    await eventually(async () => (await ctx.s.api(`/api/conversations/${busy}/events/search?kind=MessageEvent&limit=100`)).body.items.length >= 2);
    release();
    expect((await continued).choices[0]!.message.content).toBe('continued');

    // The slot is free again.
    ctx.llm.push(finish('served'));
    const served = await client().chat.completions.create({ model: 'openhands_default', messages: [{ role: 'user', content: 'hi' }] });
    expect(served.choices[0]!.message.content).toBe('served');
  }, 30_000);

  it('OH_MAX_CONCURRENT_RUNS: an integer of at least 1', () => {
    expect(maxConcurrentRunsFromEnv({})).toEqual({});
    expect(maxConcurrentRunsFromEnv({ OH_MAX_CONCURRENT_RUNS: '4' })).toEqual({ maxConcurrentRuns: 4 });
    expect(() => maxConcurrentRunsFromEnv({ OH_MAX_CONCURRENT_RUNS: '0' })).toThrow(/at least 1/);
    expect(() => maxConcurrentRunsFromEnv({ OH_MAX_CONCURRENT_RUNS: 'many' })).toThrow(/OH_MAX_CONCURRENT_RUNS/);
  });
});
