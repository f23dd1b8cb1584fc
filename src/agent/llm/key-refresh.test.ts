// Managed key refresh settings from the environment: scope, header expansion, failing closed and
// refusing malformed headers at start (the CLI and the refresh over HTTP: agent-server/llm-key-refresh.test.ts).
import { describe, expect, it } from 'vitest';
import { keyRefreshFromEnv } from './key-refresh.ts';

const URL_ENV = { OH_LLM_API_KEY_REFRESH_URL: 'http://control.test/key' };

describe('keyRefreshFromEnv', () => {
  it('is off without a URL, and fails closed without an allow-list', () => {
    expect(keyRefreshFromEnv({})).toBeUndefined();
    expect(keyRefreshFromEnv({ ...URL_ENV })).toBeUndefined();
    expect(keyRefreshFromEnv({ ...URL_ENV, OH_LLM_API_KEY_REFRESH_BASE_URLS: ' , ' })).toBeUndefined();
  });

  it('applies only to api-key LLMs whose base URL (trailing slash aside, provider default included) is listed', () => {
    const r = keyRefreshFromEnv({ ...URL_ENV, OH_LLM_API_KEY_REFRESH_BASE_URLS: 'http://proxy.test/v1/, https://api.groq.com/openai/v1' })!;
    expect(r.appliesTo({ model: 'litellm_proxy/m', baseUrl: 'http://proxy.test/v1' })).toBe(true);
    expect(r.appliesTo({ model: 'groq/llama' })).toBe(true);
    expect(r.appliesTo({ model: 'litellm_proxy/m', baseUrl: 'http://byok.test/v1' })).toBe(false);
    expect(r.appliesTo({ model: 'openai/gpt-4o' })).toBe(false);
    expect(r.appliesTo({ model: 'm', baseUrl: 'http://proxy.test/v1', subscription: {} as never })).toBe(false);
  });

  it('refuses headers that are not a JSON object of strings, without repeating them', () => {
    const env = { ...URL_ENV, OH_LLM_API_KEY_REFRESH_BASE_URLS: 'http://proxy.test/v1' };
    expect(() => keyRefreshFromEnv({ ...env, OH_LLM_API_KEY_REFRESH_HEADERS: '{"X-Key": secret-cred' })).toThrow(/OH_LLM_API_KEY_REFRESH_HEADERS is not valid JSON/);
    expect(() => keyRefreshFromEnv({ ...env, OH_LLM_API_KEY_REFRESH_HEADERS: '{"X-Key": secret-cred' })).not.toThrow(/secret-cred/);
    expect(() => keyRefreshFromEnv({ ...env, OH_LLM_API_KEY_REFRESH_HEADERS: '["a"]' })).toThrow(/must be a JSON object/);
    expect(() => keyRefreshFromEnv({ ...env, OH_LLM_API_KEY_REFRESH_HEADERS: '{"X-Key": 1}' })).toThrow(/header 'X-Key' must be a string/);
    expect(() => keyRefreshFromEnv({ OH_LLM_API_KEY_REFRESH_URL: 'not a url', OH_LLM_API_KEY_REFRESH_BASE_URLS: 'x' })).toThrow(/absolute URL/);
  });
});
