// Managed LLM key refresh, as OpenHands 1.58 (agent_server/managed_llm_key.py): a control plane that
// rotates the key of its managed model proxy after a conversation took its settings tells the agent
// server where to fetch the current key. A model call that the endpoint refuses (401/403) on an LLM
// whose base URL is on the allow-list fetches the key once and is made again once with it.
// Configuration, with OpenHands' names:
//   OH_LLM_API_KEY_REFRESH_URL        GET answers the current key as its plain-text body
//   OH_LLM_API_KEY_REFRESH_BASE_URLS  comma-separated base URLs the managed key applies to (required:
//                                     a user's own key must never be swapped for the managed one)
//   OH_LLM_API_KEY_REFRESH_HEADERS    optional JSON object of headers of the refresh call; values may
//                                     name environment variables ($VAR, ${VAR}), expanded at start
// The key and the headers are never logged, stored or sent anywhere but to the model and the URL.
import type { LlmConfig } from '../types.ts';
import type { Logger } from '../../util/log.ts';
import { resolveEndpoint } from './model-name.ts';

export const KEY_REFRESH_ENV = {
  url: 'OH_LLM_API_KEY_REFRESH_URL',
  baseUrls: 'OH_LLM_API_KEY_REFRESH_BASE_URLS',
  headers: 'OH_LLM_API_KEY_REFRESH_HEADERS',
} as const;

/** What the model client asks when the endpoint refuses the key. */
export interface KeyRefresh {
  /** Whether this LLM's key is the managed one (api-key auth, base URL on the allow-list). */
  appliesTo(config: LlmConfig): boolean;
  /** The current key, or null when it cannot be had (then the original refusal stands). */
  fetchKey(signal?: AbortSignal): Promise<string | null>;
}

const trimSlash = (u: string) => u.trim().replace(/\/+$/, '');

/** `$VAR` and `${VAR}` from the environment; an unknown name stays as written (Python's os.path.expandvars). */
function expandVars(value: string, env: NodeJS.ProcessEnv): string {
  return value.replace(/\$(?:\{([A-Za-z_][A-Za-z0-9_]*)\}|([A-Za-z_][A-Za-z0-9_]*))/g, (all, braced: string | undefined, bare: string | undefined) => env[(braced ?? bare)!] ?? all);
}

/**
 * The refresh settings from the environment, or undefined when the feature is off (no URL, or no
 * allow-list: it fails closed, as OpenHands, with a warning). Headers that are not a JSON object of
 * strings stop the start: OpenHands ignores them with a warning, and every refresh would then be
 * refused by the control plane without anyone noticing until a key rotates.
 */
export function keyRefreshFromEnv(env: NodeJS.ProcessEnv, log?: Logger): KeyRefresh | undefined {
  const url = env[KEY_REFRESH_ENV.url]?.trim();
  if (!url) return undefined;
  try {
    new URL(url);
  } catch {
    throw new Error(`${KEY_REFRESH_ENV.url} must be an absolute URL`);
  }
  const rawHeaders = env[KEY_REFRESH_ENV.headers];
  let headers: Record<string, string> = {};
  if (rawHeaders?.trim()) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(rawHeaders);
    } catch {
      // The value itself is not repeated: it carries credentials.
      throw new Error(`${KEY_REFRESH_ENV.headers} is not valid JSON; it must be a JSON object of header names to strings, e.g. {"X-Session-API-Key": "\${OH_SESSION_API_KEYS_0}"}`);
    }
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new Error(`${KEY_REFRESH_ENV.headers} must be a JSON object of header names to strings`);
    for (const [name, value] of Object.entries(parsed)) {
      if (typeof value !== 'string') throw new Error(`${KEY_REFRESH_ENV.headers}: the value of header '${name}' must be a string`);
      headers[name] = expandVars(value, env);
    }
  }
  const baseUrls = new Set((env[KEY_REFRESH_ENV.baseUrls] ?? '').split(',').map(trimSlash).filter(Boolean));
  if (baseUrls.size === 0) {
    log?.warn(`${KEY_REFRESH_ENV.url} is set but ${KEY_REFRESH_ENV.baseUrls} is empty: managed LLM key refresh stays off (name the managed proxy base URLs)`);
    return undefined;
  }
  return {
    appliesTo(config) {
      // A subscription's token is not a refreshable key.
      if (config.subscription) return false;
      const base = resolveEndpoint(config).baseURL;
      return base !== undefined && baseUrls.has(trimSlash(base));
    },
    async fetchKey(signal) {
      try {
        const res = await fetch(url, { headers, signal: signal ? AbortSignal.any([signal, AbortSignal.timeout(30_000)]) : AbortSignal.timeout(30_000) });
        if (!res.ok) {
          log?.warn({ status: res.status }, 'managed LLM key refresh refused; the model\'s refusal stands');
          return null;
        }
        return (await res.text()).trim() || null;
      } catch (err) {
        log?.warn({ error: (err as Error).name }, 'managed LLM key refresh failed; the model\'s refusal stands');
        return null;
      }
    },
  };
}
