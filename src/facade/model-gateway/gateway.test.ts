// The model gateway on a listening API: the official OpenAI client with a sandbox's model token on
// one side, the scripted provider (which refuses any key but its own) on the other, real SQLite.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import OpenAI from 'openai';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { LABEL_OWNER, API_VERSION } from '../../api/meta.ts';
import { CONVERSATION_HEADER, MODEL_GATEWAY_PATH, modelGatewayUrl, newModelToken } from '../../api/model-gateway.ts';
import { SandboxKind, type Sandbox } from '../../api/sandbox.ts';
import { ensureSandboxKeys } from '../../controller/sandbox/session-secret.ts';
import { startScriptedLlm, type ScriptedLlm } from '../../testing/scripted-llm/server.ts';
import { NS, setSandboxPhase, setStartTask, startConversationId, startHarness, type Harness } from '../test-support.ts';

const PROVIDER_KEY = 'sk-provider-0123456789abcdef';

describe('model gateway', () => {
  let llm: ScriptedLlm;
  let h: Harness;
  let sb: Sandbox;
  let token: string;

  beforeEach(async () => {
    llm = await startScriptedLlm([], { apiKey: PROVIDER_KEY });
    h = await startHarness({}, { modelUpstream: { model: 'openai/scripted', baseUrl: llm.url, apiKey: PROVIDER_KEY } });
    sb = await h.store.create(SandboxKind, { apiVersion: API_VERSION, kind: 'Sandbox', metadata: { name: 'sb-1', namespace: NS, labels: { [LABEL_OWNER]: h.alice.user.id } }, spec: { owner: h.alice.user.id, paused: false } });
    token = (await ensureSandboxKeys(h.store, sb)).modelToken;
  });
  afterEach(async () => {
    await h.close();
    await llm.close();
  });

  const client = (apiKey: string, headers: Record<string, string> = {}) => new OpenAI({ apiKey, baseURL: modelGatewayUrl(h.server.url), maxRetries: 0, defaultHeaders: headers });
  const usage = async () => (await h.call('GET', '/api/v1/usage')).body;

  it('forwards a call with the provider key, answers with the provider answer and records its usage for the owner', async () => {
    await setSandboxPhase(h.store, 'sb-1', 'RUNNING', 'http://127.0.0.1:1');
    const id = await startConversationId(h, { sandbox_id: 'sb-1' });
    await setStartTask(h.store, id, 'READY', 'sb-1');
    llm.push({ content: 'hi', usage: { prompt_tokens: 12, completion_tokens: 3, cached_tokens: 2, cost: 0.25 } });
    const answer = await client(token, { [CONVERSATION_HEADER]: id }).chat.completions.create({ model: 'scripted', messages: [{ role: 'user', content: 'hello' }] });
    expect(answer.choices[0]!.message.content).toBe('hi');
    expect(llm.requests[0]!.headers.authorization).toBe(`Bearer ${PROVIDER_KEY}`);
    expect(llm.requests[0]!.model).toBe('scripted');
    const totals = { calls: 1, prompt_tokens: 12, completion_tokens: 3, cache_read_tokens: 2, reasoning_tokens: 0, cost: 0.25 };
    expect(await usage()).toEqual({
      user_id: h.alice.user.id,
      total: totals,
      by_conversation: [{ conversation_id: id, ...totals }],
      by_sandbox: [{ sandbox_id: 'sb-1', ...totals }],
      by_model: [{ model: 'scripted', ...totals }],
    });
    // Bob has none; only the admin sees everyone's.
    expect((await h.call('GET', '/api/v1/usage', { key: h.bob.key })).body.total.calls).toBe(0);
    expect((await h.call('GET', '/api/v1/usage/users')).status).toBe(403);
    // Administrators (the admin flag, not a user id) see every user's.
    await h.db.setUserAdmin(h.bob.user.id, true);
    const all = await h.call('GET', '/api/v1/usage/users', { key: h.bob.key });
    expect(all.status).toBe(200);
    expect(all.body.items.map((i: { user_id: string }) => i.user_id)).toContain(h.alice.user.id);
  });

  it('streams the answer through, always asking for usage, and records it before the stream ends', async () => {
    llm.push({ content: 'streamed answer', usage: { prompt_tokens: 7, completion_tokens: 5, reasoning_tokens: 1 } });
    const stream = await client(token).chat.completions.create({ model: 'scripted', messages: [{ role: 'user', content: 'go' }], stream: true });
    let text = '';
    for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? '';
    expect(text).toBe('streamed answer');
    expect(llm.requests[0]!.body.stream_options).toEqual({ include_usage: true });
    const u = await usage();
    // A conversation the agent server did not name (or not of this sandbox) counts under null.
    expect(u.by_conversation).toEqual([{ conversation_id: null, calls: 1, prompt_tokens: 7, completion_tokens: 5, cache_read_tokens: 0, reasoning_tokens: 1, cost: 0 }]);
  });

  it('refuses a missing, forged or foreign token and the provider key itself with 401, before reading the body', async () => {
    const forged = [newModelToken('sb-1'), newModelToken('nope'), 'aysb..x', PROVIDER_KEY, token.slice(0, -1)];
    for (const key of forged) {
      await expect(client(key).chat.completions.create({ model: 'scripted', messages: [] })).rejects.toBeInstanceOf(OpenAI.AuthenticationError);
    }
    const missing = await fetch(`${modelGatewayUrl(h.server.url)}/chat/completions`, { method: 'POST', body: '{' });
    expect(missing.status).toBe(401);
    expect(((await missing.json()) as { error: { message: string } }).error.message).toMatch(/Bearer <model token>/);
    expect(llm.requests).toHaveLength(0);
  });

  it("refuses a deleted sandbox's token; a namesake created afterwards gets a new one", async () => {
    await h.store.delete(SandboxKind, NS, 'sb-1');
    await expect(client(token).chat.completions.create({ model: 'scripted', messages: [] })).rejects.toBeInstanceOf(OpenAI.AuthenticationError);
    const again = await h.store.create(SandboxKind, { ...sb, metadata: { name: 'sb-1', namespace: NS }, spec: sb.spec });
    const fresh = (await ensureSandboxKeys(h.store, again)).modelToken;
    expect(fresh).not.toBe(token);
    await expect(client(token).chat.completions.create({ model: 'scripted', messages: [] })).rejects.toBeInstanceOf(OpenAI.AuthenticationError);
    llm.push({ content: 'ok' });
    expect((await client(fresh).chat.completions.create({ model: 'scripted', messages: [{ role: 'user', content: 'x' }] })).choices[0]!.message.content).toBe('ok');
  });

  it('passes provider errors through, answers 501 for what it does not forward and 400 for a body that is not a request', async () => {
    llm.push({ status: 429, errorMessage: 'slow down', retryAfterMs: 1 });
    const limited = await fetch(`${modelGatewayUrl(h.server.url)}/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${token}` }, body: JSON.stringify({ model: 'scripted', messages: [] }) });
    expect(limited.status).toBe(429);
    expect(limited.headers.get('retry-after-ms')).toBe('1');
    expect(((await limited.json()) as { error: { message: string } }).error.message).toBe('slow down');
    const post = (path: string, body: string) => fetch(`${modelGatewayUrl(h.server.url)}${path}`, { method: 'POST', headers: { authorization: `Bearer ${token}` }, body });
    expect((await post('/embeddings', '{}')).status).toBe(501);
    expect((await post('/chat/completions', '[1]')).status).toBe(400);
    expect((await post('/chat/completions', '{"model": 1}')).status).toBe(400);
    expect((await (await client(token).models.list()).data)[0]!.id).toBe('scripted');
    // No usage for calls that did not complete.
    expect((await usage()).total.calls).toBe(0);
    // The gateway lives outside /api/v1: an API key is no model token, a model token no API key.
    expect((await h.call('GET', '/api/v1/users/me', { key: token })).status).toBe(401);
    await expect(client(h.alice.key).models.list()).rejects.toBeInstanceOf(OpenAI.AuthenticationError);
    expect(MODEL_GATEWAY_PATH.startsWith('/api/')).toBe(false);
  });
});

describe('model gateway with a provider that breaks off mid-stream', () => {
  it('ends the answer with an error instead of leaving the agent waiting, and records nothing', async () => {
    const provider = createServer((req, res) => {
      req.resume();
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(`data: ${JSON.stringify({ id: 'c1', object: 'chat.completion.chunk', created: 0, model: 'scripted', choices: [{ index: 0, delta: { content: 'half' }, finish_reason: null }] })}\n\n`);
      setImmediate(() => res.socket?.destroy());
    });
    await new Promise<void>((r) => provider.listen(0, '127.0.0.1', r));
    const h = await startHarness({}, { modelUpstream: { model: 'openai/scripted', baseUrl: `http://127.0.0.1:${(provider.address() as AddressInfo).port}/v1` } });
    try {
      const sb = await h.store.create(SandboxKind, { apiVersion: API_VERSION, kind: 'Sandbox', metadata: { name: 'sb-1', namespace: NS }, spec: { owner: h.alice.user.id, paused: false } });
      const { modelToken } = await ensureSandboxKeys(h.store, sb);
      const client = new OpenAI({ apiKey: modelToken, baseURL: modelGatewayUrl(h.server.url), maxRetries: 0, timeout: 10_000 });
      const read = async () => {
        let text = '';
        for await (const chunk of await client.chat.completions.create({ model: 'scripted', messages: [{ role: 'user', content: 'go' }], stream: true })) text += chunk.choices[0]?.delta.content ?? '';
        return text;
      };
      await expect(read()).rejects.toThrow();
      expect((await h.call('GET', '/api/v1/usage')).body.total.calls).toBe(0);
    } finally {
      await h.close();
      await new Promise<void>((r) => provider.close(() => r()));
    }
  });
});
