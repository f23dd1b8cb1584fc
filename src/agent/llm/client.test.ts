import { createServer } from 'node:net';
import { createServer as createHttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startScriptedLlm, type ScriptedLlm } from '../../testing/scripted-llm/server.ts';
import { ModelClient } from './client.ts';
import { ModelCallError } from './errors.ts';
import { keyRefreshFromEnv } from './key-refresh.ts';
import type { LlmRetryFields } from './retry.ts';
import { endpointModelName, resolveEndpoint } from './model-name.ts';

let llm: ScriptedLlm;
beforeAll(async () => (llm = await startScriptedLlm()));
afterAll(() => llm.close());

const user = [{ role: 'user' as const, content: 'x' }];
const tools = [{ type: 'function' as const, function: { name: 'think', description: 'd', parameters: { type: 'object', properties: { thought: { type: 'string' } } } } }];

/** No wait between attempts unless a test asks for one: retry-after headers and these decide. */
const NO_WAIT = { retry_min_wait: 0, retry_max_wait: 0 };

function client(opts: { maxRetries?: number; timeoutMs?: number } = {}, model = 'litellm_proxy/some-model', retry: LlmRetryFields = NO_WAIT) {
  return new ModelClient({ model, baseUrl: llm.url, apiKey: 'sk-test', retry }, { maxRetries: 3, ...opts });
}

async function failure(p: Promise<unknown>): Promise<ModelCallError> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ModelCallError);
  return err as ModelCallError;
}

describe('model client', () => {
  it('sends tools and the endpoint model name, and reads tool calls, reasoning and usage with cost', async () => {
    const before = llm.requests.length;
    llm.push({ content: 'thinking aloud', reasoning: 'why', toolCalls: [{ id: 'call_a', name: 'think', arguments: { thought: 't' } }], usage: { prompt_tokens: 9, completion_tokens: 4, cached_tokens: 5, reasoning_tokens: 2, cost: 0.0125 } });
    const done = await client().complete(user, tools);
    expect(done).toMatchObject({
      content: 'thinking aloud',
      reasoning: 'why',
      toolCalls: [{ id: 'call_a', name: 'think', arguments: '{"thought":"t"}' }],
      usage: { promptTokens: 9, completionTokens: 4, cacheReadTokens: 5, reasoningTokens: 2, cost: 0.0125 },
    });
    expect(done.responseId).toMatch(/^chatcmpl-/);
    const req = llm.requests[before]!;
    expect(req).toMatchObject({ model: 'some-model', tools });
    expect(req.headers.authorization).toBe('Bearer sk-test');
  });

  it('retries a 429 and a 503, then succeeds', async () => {
    const before = llm.requests.length;
    llm.push({ status: 429, retryAfterMs: 5 }, { status: 503, retryAfterMs: 5 }, { content: 'finally', usage: { prompt_tokens: 3, completion_tokens: 2 } });
    const done = await client().complete(user, []);
    expect(done.content).toBe('finally');
    expect(done.usage).toMatchObject({ promptTokens: 3, completionTokens: 2, cost: 0 });
    expect(llm.requests.slice(before).map((r) => r.model)).toEqual(['some-model', 'some-model', 'some-model']);
  });

  it('retries a call that times out', async () => {
    const before = llm.requests.length;
    llm.push((req) => new Promise((resolve) => req.signal.addEventListener('abort', () => resolve({ content: 'never seen' }))), { content: 'second try' });
    const done = await client({ timeoutMs: 300, maxRetries: 1 }).complete(user, []);
    expect(done.content).toBe('second try');
    expect(llm.requests.length - before).toBe(2);
  });

  it('gives up after the retries with a transient, retryable classification', async () => {
    llm.push({ status: 502, retryAfterMs: 1 }, { status: 502, retryAfterMs: 1 });
    const err = await failure(client({ maxRetries: 1 }).complete(user, []));
    expect(err).toMatchObject({ code: 'LLMServiceUnavailableError', status: 502, classification: { kind: 'transient', retryable: true } });
  });

  it.each([
    [{ status: 401 }, 'LLMAuthenticationError', 'auth'],
    [{ status: 400, errorCode: 'context_length_exceeded' }, 'LLMContextWindowExceedError', 'agent_action'],
    [{ status: 400 }, 'LLMBadRequestError', 'config'],
    // A refused key answered with another status: OpenHands 1.58 reads these phrases too.
    [{ status: 400, errorMessage: 'Invalid API key provided' }, 'LLMAuthenticationError', 'auth'],
    [{ status: 422, errorMessage: 'Access denied for this token' }, 'LLMAuthenticationError', 'auth'],
    [{ status: 400, errorCode: 'context_length_exceeded', errorMessage: 'Unauthorized: too long' }, 'LLMContextWindowExceedError', 'agent_action'],
    [{ status: 400, errorMessage: 'tools[0] is not a valid function' }, 'LLMBadRequestError', 'config'],
    [{ status: 404 }, 'LLMNotFoundError', 'config'],
    [{ status: 429, errorCode: 'insufficient_quota', retryAfterMs: 1 }, 'LLMQuotaExceededError', 'quota'],
  ] as const)('maps %j to %s', async (step, code, kind) => {
    llm.push(step);
    const err = await failure(client({ maxRetries: 0 }).complete(user, []));
    expect(err.code).toBe(code);
    expect(err.classification.kind).toBe(kind);
  });

  it('a 5xx that says the key is refused is retried as any 5xx, then reported as an authentication failure', async () => {
    const before = llm.requests.length;
    llm.push({ status: 500, errorMessage: 'Unauthorized', retryAfterMs: 1 }, { status: 500, errorMessage: 'Unauthorized', retryAfterMs: 1 });
    const err = await failure(client({ maxRetries: 1 }).complete(user, []));
    expect(err.code).toBe('LLMAuthenticationError');
    expect(llm.requests.length - before).toBe(2);
  });

  it('refreshes a managed key refused with a 400 that says so, and calls again once with the fetched key', async () => {
    const control = createHttpServer((_req, res) => res.end('sk-current\n'));
    await new Promise<void>((r) => control.listen(0, '127.0.0.1', r));
    try {
      const refresh = keyRefreshFromEnv({ OH_LLM_API_KEY_REFRESH_URL: `http://127.0.0.1:${(control.address() as AddressInfo).port}/key`, OH_LLM_API_KEY_REFRESH_BASE_URLS: llm.url })!;
      const before = llm.requests.length;
      llm.push({ status: 400, errorMessage: 'Invalid API key provided' }, { content: 'answered' });
      const c = new ModelClient({ model: 'litellm_proxy/m', baseUrl: llm.url, apiKey: 'sk-stale', retry: NO_WAIT }, { maxRetries: 3, keyRefresh: refresh });
      expect((await c.complete(user, [])).content).toBe('answered');
      expect(llm.requests.slice(before).map((r) => r.headers['authorization'])).toEqual(['Bearer sk-stale', 'Bearer sk-current']);
    } finally {
      await new Promise((r) => control.close(r));
    }
  });

  it('does not retry an authentication failure', async () => {
    const before = llm.requests.length;
    llm.push({ status: 401 });
    await failure(client().complete(user, []));
    expect(llm.requests.length - before).toBe(1);
  });

  it('reports an unreachable endpoint as a connection error', async () => {
    const port = await new Promise<number>((resolve) => {
      const s = createServer().listen(0, '127.0.0.1', () => {
        const p = (s.address() as { port: number }).port;
        s.close(() => resolve(p));
      });
    });
    const c = new ModelClient({ model: 'm', baseUrl: `http://127.0.0.1:${port}/v1` }, { maxRetries: 0 });
    expect((await failure(c.complete(user, []))).code).toBe('LLMConnectionError');
  });

  it('an empty answer is retried (as OpenHands does), then an LLMNoResponseError, not an empty message', async () => {
    const before = llm.requests.length;
    llm.push({}, {});
    expect((await failure(client({ maxRetries: 1 }).complete(user, []))).code).toBe('LLMNoResponseError');
    expect(llm.requests.length - before).toBe(2);
  });

  it('an abort rejects with the SDK abort error', async () => {
    llm.push((req) => new Promise((resolve) => req.signal.addEventListener('abort', () => resolve({ content: 'late' }))));
    const abort = new AbortController();
    const pending = client().complete(user, [], abort.signal).catch((e: unknown) => e);
    await new Promise<void>((resolve) => {
      const poll = () => (llm.remaining() === 0 ? resolve() : setImmediate(poll));
      poll();
    });
    abort.abort();
    expect(await pending).toBeInstanceOf(OpenAI.APIUserAbortError);
  });
});

describe('model names', () => {
  it.each([
    ['openai/gpt-4o', 'gpt-4o'],
    ['litellm_proxy/claude-sonnet', 'claude-sonnet'],
    ['litellm_proxy/anthropic/claude-sonnet', 'anthropic/claude-sonnet'],
    ['anthropic/claude-3', 'claude-3'],
    ['gpt-4o', 'gpt-4o'],
    ['my-org/custom-model', 'my-org/custom-model'],
  ])('sends %s as %s', (input, want) => expect(endpointModelName(input)).toBe(want));

  it('picks the endpoint from the base URL, else from the provider prefix', () => {
    expect(resolveEndpoint({ model: 'anthropic/claude', baseUrl: 'http://127.0.0.1:4000/v1' })).toEqual({ model: 'claude', baseURL: 'http://127.0.0.1:4000/v1' });
    expect(resolveEndpoint({ model: 'openai/gpt-4o' })).toEqual({ model: 'gpt-4o', baseURL: undefined });
    expect(resolveEndpoint({ model: 'anthropic/claude' }).baseURL).toBe('https://api.anthropic.com/v1/');
    expect(() => resolveEndpoint({ model: 'litellm_proxy/x' })).toThrow(/LLM_BASE_URL/);
    expect(() => resolveEndpoint({ model: 'openai/' })).toThrow(ModelCallError);
  });
});

describe('model client, streaming', () => {
  it('assembles a streamed answer into the same Completion, usage included, and hands text deltas out in order', async () => {
    const reply = { content: 'thinking aloud in pieces', reasoning: 'why not', toolCalls: [{ id: 'call_s', name: 'think', arguments: { thought: 'a fairly long thought' } }, { id: 'call_t', name: 'think', arguments: { thought: 'second' } }], usage: { prompt_tokens: 9, completion_tokens: 4, cached_tokens: 5, reasoning_tokens: 2, cost: 0.5 } };
    llm.push(reply, reply);
    const plain = await client().complete(user, tools);
    const deltas: { content: string | null; reasoning: string | null }[] = [];
    const streamed = await client().complete(user, tools, undefined, { stream: true, onDelta: (d) => deltas.push(d) });
    expect(llm.requests.at(-1)!.body).toMatchObject({ stream: true, stream_options: { include_usage: true } });
    expect({ ...streamed, responseId: '' }).toEqual({ ...plain, responseId: '' });
    expect(deltas.map((d) => d.reasoning ?? '').join('')).toBe('why not');
    expect(deltas.map((d) => d.content ?? '').join('')).toBe('thinking aloud in pieces');
    expect(deltas.length).toBeGreaterThan(3);
    // The opening chunk's empty content is handed out too (OpenHands forwards it).
    expect(deltas[0]).toEqual({ content: '', reasoning: null });
  });

  it('an abort mid-stream rejects with the SDK abort error; an empty streamed answer is LLMNoResponseError', async () => {
    const abort = new AbortController();
    llm.push({ content: 'x'.repeat(400) });
    const p = client().complete(user, [], abort.signal, { stream: true, onDelta: () => abort.abort() });
    await expect(p).rejects.toBeInstanceOf(OpenAI.APIUserAbortError);
    llm.push({});
    expect((await failure(client({ maxRetries: 0 }).complete(user, [], undefined, { stream: true }))).code).toBe('LLMNoResponseError');
  });

  it('a stream that stalls after it started is a timeout: retried while nothing was shown, else LLMTimeoutError', async () => {
    // Nothing shown yet (no onDelta): the stalled attempt is retried and the second one answers.
    llm.push({ content: 'x'.repeat(200), stallAfterChunks: 3 }, { content: 'whole answer' });
    const retried = await client({ timeoutMs: 300 }).complete(user, [], undefined, { stream: true });
    expect(retried.content).toBe('whole answer');
    expect(llm.requests.at(-2)!.signal.aborted).toBe(true); // the stalled request was hung up on
    // Pieces already shown are not asked for again: the stall ends the call with a clear timeout.
    llm.push({ content: 'y'.repeat(200), stallAfterChunks: 3 });
    const err = await failure(client({ timeoutMs: 300 }).complete(user, [], undefined, { stream: true, onDelta: () => {} }));
    expect(err.code).toBe('LLMTimeoutError');
    expect(err.message).toMatch(/within 0\.3 s \(llm\.timeout\)/);
  });
});
