// Where the agent server's ChatGPT subscription signs in and calls its models, as environment
// variables: OpenAI's addresses by default, a proxy (e.g. an egress proxy in front of OpenAI) or the
// tests' stand-in when set. Its own file so that the runtimes, which pass these settings on to every
// sandbox's agent server, do not load the subscription service. Addresses only, never secrets.

export const OPENAI_AUTH_ISSUER_ENV = 'OH_OPENAI_AUTH_ISSUER';
export const OPENAI_CODEX_BASE_URL_ENV = 'OH_OPENAI_CODEX_BASE_URL';
export const SUBSCRIPTION_ENDPOINT_ENV = [OPENAI_AUTH_ISSUER_ENV, OPENAI_CODEX_BASE_URL_ENV] as const;

/**
 * The subscription settings of a service's configuration (`agentyard up`, the controller) that its
 * sandboxes' agent servers get as they are. One that is no http(s) URL stops the service at start,
 * rather than every sign-in in every sandbox later.
 */
export function subscriptionEndpointEnv(env: NodeJS.ProcessEnv): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of SUBSCRIPTION_ENDPOINT_ENV) {
    const value = env[name]?.trim();
    if (!value) continue;
    let url: URL | undefined;
    try {
      url = new URL(value);
    } catch {
      url = undefined;
    }
    if (!url || (url.protocol !== 'https:' && url.protocol !== 'http:')) throw new Error(`${name} must be an http(s) URL, got '${value}'`);
    out[name] = value;
  }
  return out;
}
