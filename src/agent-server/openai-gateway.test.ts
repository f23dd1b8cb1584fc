// The OpenAI-compatible gateway (/v1) over HTTP with the real agent and the scripted model, through
// the official `openai` client where a client would use it: the agent as a model, its final answer
// as the reply, the conversation behind it continued by its id, errors as OpenHands 1.58 answers them.
import OpenAI from 'openai';
import { describe, expect, it } from 'vitest';
import { createAgent } from '../agent/agent.ts';
import { TEST_KEY, useRealAgentServer } from './test-support.ts';

const ctx = useRealAgentServer({ createAgent, overrides: () => ({ tuning: { gatewayTimeoutMs: 3000 } }) });
const finish = (message: string, usage?: { prompt_tokens: number; completion_tokens: number }) => ({ toolCalls: [{ name: 'finish', arguments: { message } }], ...(usage ? { usage } : {}) });
const client = (key = TEST_KEY) => new OpenAI({ baseURL: `${ctx.s.url}/v1`, apiKey: key, maxRetries: 0 });

describe('OpenAI-compatible gateway', () => {
  it('lists the configured model as openhands_default, with the session key as a bearer token or in X-Session-API-Key', async () => {
    expect((await client().models.list()).data).toEqual([{ id: 'openhands_default', created: 0, object: 'model', owned_by: 'openhands' }]);
    expect((await ctx.s.api('/v1/models')).body.data.map((m: any) => m.id)).toEqual(['openhands_default']);
    await expect(client('wrong').models.list()).rejects.toMatchObject({ status: 401 });
    expect((await ctx.s.api('/v1/models', { key: null })).status).toBe(401);
  });

  it("answers a chat completion with the agent's final answer; the system text reaches the system prompt; the conversation is continued by its id", async () => {
    ctx.llm.push(finish('All done', { prompt_tokens: 10, completion_tokens: 3 }));
    const { data, response } = await client().chat.completions
      .create({ model: 'openhands_default', messages: [{ role: 'system', content: 'Answer in haiku' }, { role: 'user', content: 'hi' }] })
      .withResponse();
    expect(data).toMatchObject({ object: 'chat.completion', model: 'openhands_default', choices: [{ index: 0, finish_reason: 'stop', message: { role: 'assistant', content: 'All done' } }], usage: { prompt_tokens: 10, completion_tokens: 3, total_tokens: 13 } });
    const id = response.headers.get('x-openhands-serverconversation-id')!;
    const first = ctx.llm.requests[0]!;
    expect(JSON.stringify(first.messages[0]!.content)).toContain('Answer in haiku');
    expect(first.tools?.map((t) => t.function.name)).toEqual(expect.arrayContaining(['terminal', 'file_editor', 'task_tracker', 'finish']));
    const info = (await ctx.s.api(`/api/conversations/${id}`)).body;
    expect(info).toMatchObject({ execution_status: 'finished', title: null });

    ctx.llm.push(finish('Again'));
    const again = await client().chat.completions.create({ model: 'openhands_default', messages: [{ role: 'user', content: 'more' }] }, { headers: { 'X-OpenHands-ServerConversation-ID': id } }).withResponse();
    expect(again.data.choices[0]!.message.content).toBe('Again');
    expect(again.response.headers.get('x-openhands-serverconversation-id')).toBe(id);
    // The second call saw the first exchange: the same conversation, one more user message.
    expect(ctx.llm.requests[1]!.messages.filter((m) => m.role === 'user').length).toBe(2);
  });

  it('streams the final answer as chunks (role, content, stop, usage when asked) ending with [DONE]', async () => {
    ctx.llm.push(finish('Streamed', { prompt_tokens: 4, completion_tokens: 2 }));
    const stream = await client().chat.completions.create({ model: 'openhands_default', stream: true, stream_options: { include_usage: true }, messages: [{ role: 'user', content: 'hi' }] });
    const chunks = [];
    for await (const c of stream) chunks.push(c);
    expect(chunks.map((c) => [c.choices[0]?.delta, c.choices[0]?.finish_reason ?? null, c.usage ?? null])).toEqual([
      [{ role: 'assistant' }, null, null],
      [{ content: 'Streamed' }, null, null],
      [{}, 'stop', null],
      [undefined, null, { prompt_tokens: 4, completion_tokens: 2, total_tokens: 6 }],
    ]);
  });

  it("answers a Responses request with the agent's final answer, instructions and metadata echoed, observability headers accepted", async () => {
    ctx.llm.push(finish('Resp', { prompt_tokens: 7, completion_tokens: 1 }));
    const { data, response } = await client()
      .responses.create({ model: 'openhands_default', input: 'hi', instructions: 'Be brief', metadata: { ticket: 'T-1' } }, { headers: { 'X-OpenHands-Observability-Tags': 'nightly, ci', 'X-OpenHands-Observability-Span-Name': 'gateway run', 'X-OpenHands-Observability-Metadata': '{"run":3}' } })
      .withResponse();
    expect(data).toMatchObject({ object: 'response', status: 'completed', model: 'openhands_default', instructions: 'Be brief', metadata: { ticket: 'T-1' }, output_text: 'Resp', usage: { input_tokens: 7, output_tokens: 1, total_tokens: 8 } });
    const id = response.headers.get('x-openhands-serverconversation-id')!;
    expect((await ctx.s.api(`/api/conversations/${id}`)).body).toMatchObject({ execution_status: 'finished' });
    expect(JSON.stringify(ctx.llm.requests[0]!.messages[0]!.content)).toContain('Be brief');
  });

  it('refuses what OpenHands refuses, with its status codes, before any model call', async () => {
    const post = (path: string, body: unknown, headers: Record<string, string> = {}) =>
      fetch(`${ctx.s.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-session-api-key': TEST_KEY, ...headers }, body: JSON.stringify(body) }).then(async (r) => [r.status, ((await r.json()) as { detail: any }).detail] as [number, any]);
    const user = [{ role: 'user', content: 'hi' }];
    expect(await post('/v1/chat/completions', { model: 'gpt-4', messages: user })).toEqual([404, "Unknown OpenHands model 'gpt-4'. Use GET /v1/models."]);
    expect(await post('/v1/chat/completions', { model: 'openhands_other', messages: user })).toEqual([404, "Profile 'other' not found"]);
    expect(await post('/v1/chat/completions', { model: 'openhands_default', messages: [{ role: 'system', content: 's' }] })).toEqual([400, 'At least one user message is required']);
    expect(await post('/v1/chat/completions', { model: 'openhands_default', messages: [{ role: 'user', content: [{ type: 'audio' }] }] })).toEqual([400, 'Unsupported content part type: audio']);
    expect((await post('/v1/chat/completions', { messages: user }))[0]).toBe(422);
    expect((await post('/v1/chat/completions', { model: 'openhands_default', messages: user }, { 'X-OpenHands-Observability-Metadata': 'nope' }))[0]).toBe(422);
    expect((await post('/v1/chat/completions', { model: 'openhands_default', messages: user }, { 'X-OpenHands-Observability-Metadata': '{"a":{"b":1}}' }))[1][0].loc).toEqual(['header', 'X-OpenHands-Observability-Metadata', 'a']);
    expect((await post('/v1/chat/completions', { model: 'openhands_default', messages: user }, { 'X-OpenHands-ServerConversation-ID': 'not-a-uuid' }))[1][0].loc).toEqual(['header', 'X-OpenHands-ServerConversation-ID']);
    expect(await post('/v1/responses', { model: 'openhands_default', input: 'hi', store: true })).toEqual([400, 'Persistent response storage (store=True) is not supported yet']);
    expect(await post('/v1/responses', { model: 'openhands_default', input: 'hi', stream: true })).toEqual([400, 'Streaming responses are not supported yet']);
    expect(await post('/v1/responses', { model: 'openhands_default', input: 'hi', previous_response_id: 'resp_1' })).toEqual([400, 'previous_response_id is not supported; replay input items instead']);
    expect(await post('/v1/responses', { model: 'openhands_default', input: '' })).toEqual([400, 'Responses input must not be empty']);
    expect(ctx.llm.requests).toEqual([]);
  });

  it('answers 500 when the run ends in error, and 504 when it does not stop in time', async () => {
    ctx.llm.push({ status: 400, errorMessage: 'bad request' });
    const failed = await fetch(`${ctx.s.url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${TEST_KEY}` }, body: JSON.stringify({ model: 'openhands_default', messages: [{ role: 'user', content: 'fail' }] }) });
    expect([failed.status, await failed.json()]).toEqual([500, { detail: 'Agent run ended with status: error' }]);
    // A model that holds its answer past the gateway's wait (3 s here): 504, the run goes on.
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    ctx.llm.push(async () => (await held, finish('late')));
    await expect(client().chat.completions.create({ model: 'openhands_default', messages: [{ role: 'user', content: 'slow' }] })).rejects.toMatchObject({ status: 504 });
    release();
  });
});

describe('OpenAI-compatible gateway: a run paused meanwhile', () => {
  it('answers 409 when the run ends paused (a new conversation takes the id the header names)', async () => {
    const id = '2f0c6f8e-8a55-4b1e-9d7a-4f1d3e2c1b0a';
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    let asked!: () => void;
    const calling = new Promise<void>((r) => (asked = r));
    ctx.llm.push(async () => (asked(), await held, finish('too late')));
    const reply = fetch(`${ctx.s.url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${TEST_KEY}`, 'X-OpenHands-ServerConversation-ID': id }, body: JSON.stringify({ model: 'openhands_default', messages: [{ role: 'user', content: 'work' }] }) });
    await calling;
    expect((await ctx.s.api(`/api/conversations/${id}/pause`, { method: 'POST' })).status).toBe(200);
    release();
    const r = await reply;
    expect([r.status, await r.json()]).toEqual([409, { detail: 'Agent run ended with status: paused' }]);
  });
});

describe('OpenAI-compatible gateway without a configured model', () => {
  it('lists no model and knows none', async () => {
    // A server without LLM_MODEL: as an OpenHands server without LLM profiles.
    const { startTestServer, tempDir } = await import('./test-support.ts');
    const dir = tempDir();
    const s = await startTestServer(dir.path, { createAgent });
    try {
      expect((await s.api('/v1/models')).body).toEqual({ object: 'list', data: [] });
      const r = await s.api('/v1/chat/completions', { method: 'POST', body: { model: 'openhands_default', messages: [{ role: 'user', content: 'hi' }] } });
      expect(r).toEqual({ status: 404, body: { detail: "Profile 'default' not found" } });
    } finally {
      await s.close();
      dir.remove();
    }
  });
});
