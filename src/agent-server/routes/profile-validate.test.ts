// POST /api/profiles/{name}/validate over HTTP against the scripted model server: one call of one
// token with the draft's model and key (no retry), valid when it answers; a 401 or 404 is a located
// verdict with the key masked; a 429 rate limit is no verdict (valid), an exhausted quota is; the
// server's own key never goes to a draft's endpoint.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startScriptedLlm, type ScriptedLlm } from '../../testing/scripted-llm/server.ts';
import { useTestServer } from '../test-support.ts';

let llm: ScriptedLlm;
beforeAll(async () => void (llm = await startScriptedLlm()));
afterAll(() => llm.close());
afterEach(() => {
  expect(llm.failures).toEqual([]);
  expect(llm.remaining()).toBe(0);
});
const t = useTestServer(() => ({ llmDefaults: { model: 'openai/default', baseUrl: 'http://127.0.0.1:9/v1', apiKey: 'sk-server-default' } }));

const KEY = 'sk-draft-secret-key';
const check = (draft: Record<string, unknown>) => t.s.api('/api/profiles/draft/validate', { method: 'POST', body: { llm: { base_url: llm.url, ...draft } } });

describe('POST /api/profiles/{name}/validate', () => {
  it("answers valid when the draft's model answers one token, asked once with the draft's model and key", async () => {
    llm.requests.length = 0;
    llm.push((req) => {
      expect(req.model).toBe('draft-model');
      expect(req.headers['authorization']).toBe(`Bearer ${KEY}`);
      expect(req.body['max_tokens']).toBe(1);
      return { content: 'pong' };
    });
    expect(await check({ model: 'openai/draft-model', api_key: KEY })).toEqual({ status: 200, body: { valid: true, error: null } });
    expect(llm.requests).toHaveLength(1);
    expect((await t.s.api('/api/profiles')).body.profiles).toEqual([]); // nothing saved
  });

  it('gives the error type for a refused key or model, the key masked; one attempt only', async () => {
    llm.requests.length = 0;
    llm.push({ status: 401, errorMessage: `Incorrect API key provided: ${KEY}` });
    const r = await check({ model: 'openai/draft-model', api_key: KEY });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ valid: false, error: { type: 'LLMAuthenticationError' } });
    expect(JSON.stringify(r.body)).not.toContain(KEY);
    expect(llm.requests).toHaveLength(1);
    llm.push({ status: 404, errorMessage: 'The model does not exist' });
    expect((await check({ model: 'openai/missing' })).body).toMatchObject({ valid: false, error: { type: 'LLMNotFoundError' } });
    // The server's LLM_API_KEY belongs to its own endpoint, not to a draft's.
    expect(llm.requests[1]!.headers['authorization']).not.toBe('Bearer sk-server-default');
  });

  it('a rate limit is no verdict (valid); an exhausted quota is', async () => {
    llm.push({ status: 429, errorMessage: 'Rate limit reached', retryAfterMs: 1 });
    expect((await check({ model: 'openai/m' })).body).toEqual({ valid: true, error: null });
    llm.push({ status: 429, errorMessage: 'You exceeded your current quota', errorCode: 'insufficient_quota' });
    expect((await check({ model: 'openai/m' })).body).toMatchObject({ valid: false, error: { type: 'LLMQuotaExceededError' } });
  });

  it('checks the name, the body and the base URL (422)', async () => {
    expect((await t.s.api('/api/profiles/-x/validate', { method: 'POST', body: { llm: { model: 'm' } } })).body.detail[0].loc).toEqual(['path', 'name']);
    expect((await t.s.api('/api/profiles/x/validate', { method: 'POST', body: {} })).body.detail[0].loc).toEqual(['body', 'llm']);
    expect((await t.s.api('/api/profiles/x/validate', { method: 'POST', body: { llm: { model: 'm', base_url: 'file:///etc' } } })).body.detail[0].loc).toEqual(['body', 'llm', 'base_url']);
  });
});
