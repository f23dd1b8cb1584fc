// The model client through a ChatGPT subscription, against the stand-in Codex endpoint: the agent's
// chat messages mapped to Responses input, the answer assembled from streamed items (text,
// reasoning, tool calls, usage), deltas handed out, the token asked for at each attempt, and errors
// mapped as for any provider.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CODEX_CLIENT_ID, startOpenAiSubscriptionStandIn, type OpenAiSubscriptionStandIn } from '../../testing/openai-subscription/server.ts';
import { ModelClient, type ChatMessage } from './client.ts';
import { codexRequest, type SubscriptionAccess } from './codex.ts';
import { ModelCallError } from './errors.ts';

let o: OpenAiSubscriptionStandIn;
let token = '';
beforeAll(async () => {
  o = await startOpenAiSubscriptionStandIn();
  const post = (path: string, body: unknown) => fetch(o.issuer + path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }).then((r) => r.json() as Promise<any>);
  const code = await post('/api/accounts/deviceauth/usercode', { client_id: CODEX_CLIENT_ID });
  o.approve(code.user_code);
  const approved = await post('/api/accounts/deviceauth/token', { device_auth_id: code.device_auth_id, user_code: code.user_code });
  const form = new URLSearchParams({ grant_type: 'authorization_code', code: approved.authorization_code, redirect_uri: `${o.issuer}/deviceauth/callback`, client_id: CODEX_CLIENT_ID, code_verifier: approved.code_verifier });
  token = ((await fetch(`${o.issuer}/oauth/token`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: form.toString() }).then((r) => r.json())) as any).access_token;
});
afterAll(() => o.close());

let asked = 0;
const access = (): SubscriptionAccess => ({ vendor: 'openai', baseUrl: o.codexBaseUrl, credentials: async () => (asked++, { accessToken: token, accountId: 'acct-standin-0001' }) });
const client = () => new ModelClient({ model: 'openai/gpt-5.5', baseUrl: 'http://127.0.0.1:9/ignored', apiKey: 'sk-ignored', subscription: access(), retry: { retry_min_wait: 0, retry_max_wait: 0 } }, { maxRetries: 2 });

describe('model client through a ChatGPT subscription', () => {
  it('maps the messages, streams the answer (deltas too), and reads text, reasoning, tool calls and usage', async () => {
    o.push({ content: 'the answer', reasoning: 'because', toolCalls: [{ id: 'call_1', name: 'think', arguments: { thought: 't' } }], usage: { prompt_tokens: 12, completion_tokens: 3, cached_tokens: 2, reasoning_tokens: 1 } });
    const deltas: { content: string | null; reasoning: string | null }[] = [];
    const messages: ChatMessage[] = [
      { role: 'system', content: 'be brief' },
      { role: 'user', content: [{ type: 'text', text: 'hi' }, { type: 'image_url', image_url: { url: 'data:image/png;base64,AAAA' } }] },
      { role: 'assistant', content: null, tool_calls: [{ id: 'call_0', type: 'function', function: { name: 'think', arguments: '{}' } }] },
      { role: 'tool', tool_call_id: 'call_0', content: 'thought' },
    ];
    const done = await client().complete(messages, [{ type: 'function', function: { name: 'think', description: 'd', parameters: { type: 'object', properties: {} } } }], undefined, { stream: true, maxTokens: 1, onDelta: (d) => deltas.push(d) });
    expect(done).toMatchObject({ content: 'the answer', reasoning: 'because', toolCalls: [{ id: 'call_1', name: 'think', arguments: '{"thought":"t"}' }], usage: { promptTokens: 12, completionTokens: 3, cacheReadTokens: 2, reasoningTokens: 1 } });
    expect(deltas.map((d) => d.content ?? '').join('')).toBe('the answer');
    expect(deltas.map((d) => d.reasoning ?? '').join('')).toBe('because');
    const sent = o.requests.at(-1)!;
    expect(sent.headers['authorization']).toBe(`Bearer ${token}`);
    expect(sent.headers['user-agent']).toMatch(/^agentyard \(/);
    expect(sent.body['input']).toEqual([
      { role: 'user', content: [{ type: 'input_text', text: 'Context (system prompt):\nbe brief\n\n' }, { type: 'input_text', text: 'hi' }, { type: 'input_image', image_url: 'data:image/png;base64,AAAA', detail: 'auto' }] },
      { type: 'function_call', call_id: 'call_0', name: 'think', arguments: '{}' },
      { type: 'function_call_output', call_id: 'call_0', output: 'thought' },
    ]);
    expect(sent.body['tools']).toEqual([{ type: 'function', name: 'think', description: 'd', parameters: { type: 'object', properties: {} }, strict: false }]);
    expect(o.refused).toEqual([]);
  });

  it('streams also when the caller wants no deltas, asks for the token at each attempt, and maps errors', async () => {
    o.push({ status: 500, errorMessage: 'overloaded', retryAfterMs: 1 }, { content: 'after a retry' });
    asked = 0;
    expect((await client().complete([{ role: 'user', content: 'x' }], [])).content).toBe('after a retry');
    expect(asked).toBe(2);
    o.push({ status: 429, errorMessage: 'slow', retryAfterMs: 1 }, { status: 429, errorMessage: 'slow', retryAfterMs: 1 }, { status: 429, errorMessage: 'slow', retryAfterMs: 1 });
    const err = await client().complete([{ role: 'user', content: 'x' }], []).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ModelCallError);
    expect((err as ModelCallError).code).toBe('LLMRateLimitError');
    const none = new ModelClient({ model: 'openai/gpt-5.5', subscription: { ...access(), credentials: () => Promise.reject(new ModelCallError('LLMAuthenticationError', 'sign in first')) } });
    await expect(none.complete([{ role: 'user', content: 'x' }], [])).rejects.toMatchObject({ code: 'LLMAuthenticationError' });
    expect(o.remaining()).toBe(0);
  });

  it('puts the system prompt in a user message of its own when there is none, and lets the body fields win over litellm_extra_body', () => {
    const body = codexRequest('gpt-5.5', [{ role: 'system', content: 'rules' }], [], { store: true, prompt_cache_key: 'k' });
    expect(body).toMatchObject({ store: false, stream: true, prompt_cache_key: 'k', input: [{ role: 'user', content: [{ type: 'input_text', text: 'Context (system prompt):\nrules\n\n' }] }] });
    expect(body).not.toHaveProperty('tools');
  });
});
