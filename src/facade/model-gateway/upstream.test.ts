import { describe, expect, it } from 'vitest';
import { modelUpstreamFromEnv } from './upstream.ts';

describe('the model gateway upstream from LLM_*', () => {
  it('follows the agent rules: LLM_BASE_URL, else the endpoint the provider prefix names, else OpenAI', () => {
    expect(modelUpstreamFromEnv({})).toBeUndefined();
    expect(modelUpstreamFromEnv({ LLM_MODEL: 'openai/x', LLM_BASE_URL: 'http://127.0.0.1:9/v1/', LLM_API_KEY: 'sk-1' })).toEqual({ model: 'openai/x', baseUrl: 'http://127.0.0.1:9/v1', apiKey: 'sk-1' });
    expect(modelUpstreamFromEnv({ LLM_MODEL: 'openrouter/some/model' })?.baseUrl).toBe('https://openrouter.ai/api/v1');
    expect(modelUpstreamFromEnv({ LLM_MODEL: 'gpt-4o' })).toEqual({ model: 'gpt-4o', baseUrl: 'https://api.openai.com/v1' });
  });

  it('refuses at start-up a model it could never reach', () => {
    expect(() => modelUpstreamFromEnv({ LLM_MODEL: 'litellm_proxy/claude' })).toThrow(/set LLM_BASE_URL/);
  });
});
