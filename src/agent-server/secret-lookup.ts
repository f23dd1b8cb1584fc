// A conversation's LookupSecret that points at this server's own /api/settings/secrets/{name}: what
// the Python SDK's RemoteWorkspace.get_secrets() hands a conversation (the stored secrets as lookups,
// with the session key as header). It is answered from the store, as OpenHands' local secret
// resolver does, without a request to ourselves. Decision: the value is read when the secret is
// given (start request, update_secrets) and then kept like a sent value (masked, sealed), where
// OpenHands reads it at each use; a secret changed later in the store reaches a conversation when
// it is given again. Lookups of any other URL stay not built (501).
import type { LookupSecret } from '../api/agent-server/index.ts';
import type { SessionKeys } from './http/auth.ts';
import { SESSION_HEADER } from './http/auth.ts';
import type { SettingsSecretStore } from './store/settings-store.ts';

const SECRET_PATH = /^\/api\/settings\/secrets\/([^/]+)$/;
const LOOPBACK = new Set(['127.0.0.1', 'localhost', '[::1]']);

/**
 * The value (string), `null` when the lookup is addressed to this server but names no stored
 * secret, `undefined` when it is not addressed to this server. Addressed here: our secret route,
 * carrying one of our session keys (any host: clients reach a sandbox through its public address),
 * or, with authentication off, on a loopback host.
 */
export function localSecretLookup(keys: SessionKeys, store: SettingsSecretStore): (src: LookupSecret) => string | null | undefined {
  return (src) => {
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
