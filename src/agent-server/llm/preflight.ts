// The pre-flight of POST /api/profiles/{name}/validate (OpenHands' validate_profile): one model call
// of one token with the draft's settings, one attempt within 15 s (or the draft's shorter timeout),
// so a wrong model name, base URL or key shows before the profile is saved. A rate limit or a
// timeout says nothing about the settings: valid, unless the 429 says the quota is spent.
import type { LLM } from '../../api/agent-server/index.ts';
import type { ValidateProfileResponse } from '../../api/agent-server/profiles.ts';
import { ModelClient } from '../../agent/llm/client.ts';
import { toModelCallError } from '../../agent/llm/errors.ts';
import { conversationLlm } from '../../agent/llm/model-name.ts';
import type { LlmConfig } from '../../agent/types.ts';
import type { SubscriptionAccess } from '../../agent/llm/codex.ts';
import { maskSecrets } from '../secrets.ts';

export const PREFLIGHT_TIMEOUT_SECONDS = 15;
const TRANSIENT = new Set(['LLMRateLimitError', 'LLMTimeoutError']);

export async function preflight(llm: LLM, defaults: LlmConfig | undefined, subscription?: () => SubscriptionAccess): Promise<ValidateProfileResponse> {
  // The same rules as a conversation's model: the server's LLM_API_KEY only at its own endpoint; a
  // subscription LLM through the signed-in subscription (not signed in: not valid, as OpenHands).
  const config =
    (llm.auth_type === 'subscription' || llm.is_subscription === true) && subscription
      ? { model: llm.model || 'openai/gpt-5.5', subscription: subscription() }
      : conversationLlm({ model: llm.model ?? null, base_url: llm.base_url ?? null, api_key: llm.api_key ?? null }, defaults);
  const secrets = [llm.api_key, config?.apiKey].filter((k): k is string => typeof k === 'string' && k !== '');
  if (!config) return { valid: false, error: { type: 'LLMConfigError', message: 'No model: give llm.model (this agent server has no LLM_MODEL either)' } };
  const timeoutSeconds = Math.min(llm.timeout ?? PREFLIGHT_TIMEOUT_SECONDS, PREFLIGHT_TIMEOUT_SECONDS);
  try {
    const client = new ModelClient({ ...config, retry: { timeout: timeoutSeconds, num_retries: 0 } });
    await client.complete([{ role: 'system', content: 'Reply with one token.' }, { role: 'user', content: 'ping' }], [], undefined, { maxTokens: 1 });
    return { valid: true, error: null };
  } catch (err) {
    const e = toModelCallError(err);
    if (TRANSIENT.has(e.code)) return { valid: true, error: null };
    return { valid: false, error: { type: e.code, message: maskSecrets(e.message, secrets) } };
  }
}
