// A conversation's LookupSecret that points at this server's own /api/settings/secrets/{name}: what
// the Python SDK's RemoteWorkspace.get_secrets() hands a conversation (the stored secrets as lookups,
// with the session key as header). It is answered from the store, as OpenHands' local secret
// resolver does, without a request to ourselves. Decision: the value is read when the secret is
// given (start request, update_secrets) and then kept like a sent value (masked, sealed), where
// OpenHands reads it at each use; a secret changed later in the store reaches a conversation when
// it is given again.
//
// A LookupSecret of any other URL is fetched as OpenHands 1.58's LookupSecret.get_value() does: a GET
// of the URL with the lookup's headers, 30 s timeout, no redirect followed, any status but 2xx a
// failure, the response text the value. Decision: fetched once when given (like our own store's),
// where 1.58 fetches at each use and, on failure, runs the command without the variable (a warning
// in its log). Resolved once, a silent failure would lose the secret for the conversation's life,
// so ours refuses the request instead (422 at the secret, with the status or the network error,
// never the value, the URL's query or the headers).
import type { LookupSecret } from '../api/agent-server/index.ts';
import type { SessionKeys } from './http/auth.ts';
import { SESSION_HEADER } from './http/auth.ts';
import type { SettingsSecretStore } from './store/settings-store.ts';
import { fetchFailure } from '../util/fetch-failure.ts';

/** 1.58's httpx timeout for a lookup. */
export const LOOKUP_TIMEOUT_MS = 30_000;

/** Why a lookup of another URL gave no value: the status, or the network error (no value, no headers). */
export class LookupFailed extends Error {}

/** Fetches a LookupSecret's value from its URL as 1.58 does (see the header). */
export async function fetchLookupSecret(src: LookupSecret, timeoutMs = LOOKUP_TIMEOUT_MS): Promise<string> {
  let url: URL;
  try {
    url = new URL(src.url);
  } catch {
    throw new LookupFailed('the lookup URL is not an absolute URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new LookupFailed(`unsupported URL scheme ${url.protocol}`);
  // Where the request went, without query, fragment or credentials (they may carry a token).
  const where = `${url.protocol}//${url.host}${url.pathname}`;
  let res: Response;
  try {
    res = await fetch(url, { headers: src.headers ?? {}, redirect: 'manual', signal: AbortSignal.timeout(timeoutMs) });
  } catch (err) {
    throw new LookupFailed(`GET ${where} failed: ${fetchFailure(err, timeoutMs)}`);
  }
  if (res.status < 200 || res.status > 299) {
    await res.body?.cancel();
    throw new LookupFailed(`GET ${where} answered HTTP ${res.status}`);
  }
  return await res.text();
}

const SECRET_PATH = /^\/api\/settings\/secrets\/([^/]+)$/;
const LOOPBACK = new Set(['127.0.0.1', 'localhost', '[::1]']);

/**
 * The value (string), `null` when the lookup is addressed to this server but names no stored
 * secret, `undefined` when it is not addressed to this server. Addressed here: our secret route,
 * carrying one of our session keys (any host: clients reach a sandbox through its public address),
 * or, with authentication off, on a loopback host; or a bare path of that route.
 */
export function localSecretLookup(keys: SessionKeys, store: SettingsSecretStore): (src: LookupSecret) => string | null | undefined {
  return (src) => {
    // A bare path is this server's: 1.58 joins it to its own internal URL and answers it from its
    // store in-process (no header checked: the client already authenticated to give it).
    if (src.url.startsWith('/') && !src.url.startsWith('//')) {
      const own = SECRET_PATH.exec(new URL(src.url, 'http://agent-server.invalid').pathname);
      return own ? (store.get(decodeURIComponent(own[1]!)) ?? null) : undefined;
    }
    let url: URL;
    try {
      url = new URL(src.url);
    } catch {
      return undefined;
    }
    const m = SECRET_PATH.exec(url.pathname);
    if (!m) return undefined;
    const key = Object.entries(src.headers ?? {}).find(([k]) => k.toLowerCase() === SESSION_HEADER)?.[1];
    if (keys.enabled ? !keys.matches(key) : !LOOPBACK.has(url.hostname)) return undefined;
    return store.get(decodeURIComponent(m[1]!)) ?? null;
  };
}
