// The model gateway contract (the spec's "model proxy"): agent servers never hold the model
// provider's key. They call an OpenAI-compatible endpoint on the API, `{api}/model-gateway/v1`, with
// their sandbox's own model token as the API key; the gateway checks the token, forwards the call
// to the provider with the installation's key and records the usage for the sandbox's owner.
import { randomBytes } from 'node:crypto';

/** Path of the gateway on the API's listener; an OpenAI client's base URL is `${api}${MODEL_GATEWAY_PATH}`. */
export const MODEL_GATEWAY_PATH = '/model-gateway/v1';

/** The gateway's base URL for an API reachable at `apiBaseUrl`. */
export function modelGatewayUrl(apiBaseUrl: string): string {
  return `${apiBaseUrl.replace(/\/+$/, '')}${MODEL_GATEWAY_PATH}`;
}

/**
 * The key of the sandbox's session Secret (`<sandbox>-session`) that holds its model token. The
 * Secret is owned by the Sandbox, so the token dies with it: a deleted sandbox's token is refused.
 */
export const MODEL_TOKEN_KEY = 'model-token';

/**
 * LLM_NUM_RETRIES (attempts in all) for agent servers that call the gateway: with the default waits
 * (4 s doubling, at most 30 s) ten attempts span about three minutes, long enough for the API (and
 * so the gateway) to restart.
 */
export const GATEWAY_MODEL_RETRIES = 10;

/** Which conversation a call is for, as the agent server says; the gateway checks it belongs to the sandbox. */
export const CONVERSATION_HEADER = 'x-agentyard-conversation-id';

const PREFIX = 'aysb';

/** A new token for `sandbox`: `aysb.<sandbox>.<random>`, so the gateway knows whose Secret to compare with. */
export function newModelToken(sandbox: string): string {
  return `${PREFIX}.${sandbox}.${randomBytes(32).toString('base64url')}`;
}

/** The sandbox a token claims to belong to; undefined when it is not shaped like a model token. */
export function modelTokenSandbox(token: string): string | undefined {
  // Sandbox names may hold dots (DNS subdomains); the random part never does (base64url).
  if (!token.startsWith(`${PREFIX}.`)) return undefined;
  const last = token.lastIndexOf('.');
  const sandbox = token.slice(PREFIX.length + 1, last);
  return sandbox && last < token.length - 1 ? sandbox : undefined;
}
