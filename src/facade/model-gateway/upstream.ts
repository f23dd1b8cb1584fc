// Where the model gateway sends calls: the provider the installation's LLM_* variables name. Read
// by the process that runs the gateway (`agentyard up`, `agentyard api`), never by a sandbox.
import { ModelCallError } from '../../agent/llm/errors.ts';
import { resolveEndpoint } from '../../agent/llm/model-name.ts';

/** The OpenAI SDK's own default, for `openai/…` models and models without a provider prefix. */
const OPENAI_BASE_URL = 'https://api.openai.com/v1';

export interface ModelUpstream {
  /** The model agents are given (LLM_MODEL, litellm style). */
  model: string;
  /** OpenAI-compatible base URL, without a trailing slash. */
  baseUrl: string;
  /** The provider's key: sent only to `baseUrl`. */
  apiKey?: string;
}

/**
 * The upstream from LLM_MODEL, LLM_BASE_URL and LLM_API_KEY, by the agent's own rules (LLM_BASE_URL,
 * else the endpoint the model's litellm prefix names); undefined without LLM_MODEL. A model that
 * cannot be reached (`litellm_proxy/…` without LLM_BASE_URL) is refused here, at start-up.
 */
export function modelUpstreamFromEnv(env: NodeJS.ProcessEnv): ModelUpstream | undefined {
  const model = env.LLM_MODEL?.trim();
  if (!model) return undefined;
  let baseURL: string | undefined;
  try {
    ({ baseURL } = resolveEndpoint({ model, ...(env.LLM_BASE_URL ? { baseUrl: env.LLM_BASE_URL } : {}) }));
  } catch (err) {
    if (err instanceof ModelCallError) throw new Error(err.message);
    throw err;
  }
  return { model, baseUrl: (baseURL ?? OPENAI_BASE_URL).replace(/\/+$/, ''), ...(env.LLM_API_KEY ? { apiKey: env.LLM_API_KEY } : {}) };
}
