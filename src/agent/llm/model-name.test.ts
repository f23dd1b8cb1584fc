// Which endpoint and key a conversation's model uses, from its request and the server's defaults.
import { describe, expect, it } from 'vitest';
import { conversationLlm, resolveEndpoint } from './model-name.ts';

const GATEWAY = { model: 'openai/gpt-4o', baseUrl: 'http://gateway.internal:4000/v1', apiKey: 'sk-gateway' };
const OPENAI = { model: 'openai/gpt-4o', apiKey: 'sk-openai' };

/** Where the calls of a request end up, and with which key. */
const route = (request: Parameters<typeof conversationLlm>[0], defaults: Parameters<typeof conversationLlm>[1]) => {
  const llm = conversationLlm(request, defaults)!;
  return { ...resolveEndpoint(llm), key: llm.apiKey };
};

describe('conversationLlm', () => {
  it('takes the defaults when the request names no model', () => {
    expect(conversationLlm({}, GATEWAY)).toEqual(GATEWAY);
    expect(conversationLlm({ model: null, base_url: 'http://x/v1' }, undefined)).toBeUndefined();
  });

  it('sends a provider-prefixed model through LLM_BASE_URL when set, with the server key', () => {
    expect(route({ model: 'anthropic/claude-sonnet-4' }, GATEWAY)).toEqual({ model: 'claude-sonnet-4', baseURL: GATEWAY.baseUrl, key: 'sk-gateway' });
    expect(route({ model: 'litellm_proxy/claude-sonnet-4' }, GATEWAY)).toEqual({ model: 'claude-sonnet-4', baseURL: GATEWAY.baseUrl, key: 'sk-gateway' });
    expect(route({ model: 'anthropic/claude-sonnet-4', api_key: 'sk-own' }, GATEWAY).key).toBe('sk-own');
  });

  it("maps a provider prefix onto that provider's endpoint when no base URL is configured anywhere", () => {
    expect(route({ model: 'anthropic/claude-sonnet-4', api_key: 'sk-ant' }, OPENAI)).toEqual({ model: 'claude-sonnet-4', baseURL: 'https://api.anthropic.com/v1/', key: 'sk-ant' });
    expect(route({ model: 'gemini/gemini-2.5-pro', api_key: 'g' }, undefined).baseURL).toBe('https://generativelanguage.googleapis.com/v1beta/openai/');
    expect(route({ model: 'openrouter/meta/llama', api_key: 'o' }, undefined)).toEqual({ model: 'meta/llama', baseURL: 'https://openrouter.ai/api/v1', key: 'o' });
    expect(route({ model: 'openai/gpt-4o-mini' }, OPENAI)).toEqual({ model: 'gpt-4o-mini', baseURL: undefined, key: 'sk-openai' });
    // A proxy prefix with no base URL anywhere cannot work: the run reports it.
    expect(() => route({ model: 'litellm_proxy/x' }, OPENAI)).toThrow(/LLM_BASE_URL/);
  });

  it('never sends the server key to an endpoint the request chose', () => {
    // Another provider than the defaults name: its own key or none.
    expect(route({ model: 'anthropic/claude-sonnet-4' }, OPENAI).key).toBeUndefined();
    expect(route({ model: 'anthropic/claude-sonnet-4' }, { model: 'anthropic/claude-haiku', apiKey: 'sk-ant' }).key).toBe('sk-ant');
    // A base URL of the request's own.
    expect(route({ model: 'openai/gpt-4o', base_url: 'http://elsewhere.example/v1' }, GATEWAY)).toEqual({ model: 'gpt-4o', baseURL: 'http://elsewhere.example/v1', key: undefined });
    expect(route({ model: 'openai/gpt-4o', base_url: 'http://elsewhere.example/v1', api_key: 'sk-own' }, GATEWAY).key).toBe('sk-own');
    // The same endpoint spelled with a trailing slash is still the server's.
    expect(route({ model: 'openai/other', base_url: `${GATEWAY.baseUrl}/` }, GATEWAY).key).toBe('sk-gateway');
  });
});
