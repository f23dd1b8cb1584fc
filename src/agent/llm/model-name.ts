// Model names arrive in the litellm style OpenHands clients use (`openai/gpt-4o`,
// `litellm_proxy/claude`, `anthropic/claude-sonnet`). agentyard speaks only the OpenAI
// chat-completions protocol, so the provider prefix picks the endpoint, not part of the model id.
import type { LlmConfig } from '../types.ts';
import { ModelCallError } from './errors.ts';

/** Providers with an OpenAI-compatible endpoint of their own, used when no base URL is configured. */
const PROVIDER_BASE_URLS: Record<string, string | undefined> = {
  openai: undefined, // the SDK's default, api.openai.com
  anthropic: 'https://api.anthropic.com/v1/',
  gemini: 'https://generativelanguage.googleapis.com/v1beta/openai/',
  openrouter: 'https://openrouter.ai/api/v1',
  groq: 'https://api.groq.com/openai/v1',
  deepseek: 'https://api.deepseek.com/v1',
  mistral: 'https://api.mistral.ai/v1',
  together_ai: 'https://api.together.xyz/v1',
  ollama: 'http://127.0.0.1:11434/v1',
};
/** Prefixes that only make sense with a base URL (a proxy or a self-hosted server). */
const NEEDS_BASE_URL = ['litellm_proxy', 'hosted_vllm', 'azure', 'openai_compatible'];

function split(model: string): { prefix: string | undefined; rest: string } {
  const slash = model.indexOf('/');
  if (slash < 0) return { prefix: undefined, rest: model };
  const prefix = model.slice(0, slash);
  const known = prefix in PROVIDER_BASE_URLS || NEEDS_BASE_URL.includes(prefix);
  return known ? { prefix, rest: model.slice(slash + 1) } : { prefix: undefined, rest: model };
}

/** The model id sent to the endpoint: the litellm provider prefix stripped, anything else kept (`my-org/model`). */
export function endpointModelName(model: string): string {
  return split(model).rest;
}

/** Where to send a model's calls, or a config error that says what to set. */
export function resolveEndpoint(config: LlmConfig): { model: string; baseURL: string | undefined } {
  const { prefix, rest } = split(config.model.trim());
  if (!rest) throw new ModelCallError('LLMConfigError', `The model name '${config.model}' is empty after its provider prefix; set LLM_MODEL to e.g. openai/gpt-4o`);
  if (config.baseUrl) return { model: rest, baseURL: config.baseUrl };
  if (prefix && NEEDS_BASE_URL.includes(prefix)) {
    throw new ModelCallError('LLMConfigError', `The model '${config.model}' needs a base URL: set LLM_BASE_URL to the OpenAI-compatible endpoint that serves it`);
  }
  return { model: rest, baseURL: prefix ? PROVIDER_BASE_URLS[prefix] : undefined };
}

/** The base URL a config's calls go to (undefined: the SDK's default, api.openai.com); null when it cannot work. */
function endpointOf(config: LlmConfig): string | undefined | null {
  try {
    return resolveEndpoint(config).baseURL?.replace(/\/+$/, '');
  } catch (err) {
    if (err instanceof ModelCallError) return null;
    throw err;
  }
}

/**
 * The model of a conversation from what its start request sends in `agent.llm` and the server's
 * LLM_MODEL / LLM_BASE_URL / LLM_API_KEY defaults:
 * - no model in the request: the defaults as they are;
 * - the request's `base_url` when it has one; else LLM_BASE_URL when set (a deployment's gateway
 *   serves every model it is asked for); else the endpoint the model's litellm provider prefix names
 *   (`anthropic/…`, `gemini/…`, `openrouter/…`: the provider's OpenAI-compatible API; `openai/…` or
 *   no prefix: api.openai.com; `litellm_proxy/…` without any base URL is a config error at the run);
 * - the request's `api_key`; else LLM_API_KEY, but only when the calls go to the endpoint the
 *   defaults themselves name: the server's key never follows a request to a base URL or provider
 *   the request chose.
 */
export function conversationLlm(request: { model?: string | null; base_url?: string | null; api_key?: string | null }, defaults: LlmConfig | undefined): LlmConfig | undefined {
  if (!request.model) return defaults;
  const baseUrl = request.base_url || defaults?.baseUrl;
  const resolved: LlmConfig = { model: request.model, ...(baseUrl ? { baseUrl } : {}) };
  const sameEndpoint = defaults !== undefined && endpointOf(resolved) !== null && endpointOf(resolved) === endpointOf(defaults);
  const apiKey = request.api_key || (sameEndpoint ? defaults.apiKey : undefined);
  return { ...resolved, ...(apiKey ? { apiKey } : {}) };
}
