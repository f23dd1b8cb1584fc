// POST/DELETE /api/v1/secrets/git-providers (OpenHands 1.11's secrets_router): a user's Git provider
// tokens. Here a provider token is the caller's `<PROVIDER>_TOKEN` stored secret, the one the clone
// of a selected repository (controller/conversation/repository.ts), the skills search and the git
// searches (index.ts) read: saving it here or under Settings > Secrets is the same thing.
//
// Where OpenHands keeps a host per token and calls whatever host a user names, a token here goes
// to the installation's host for its provider only (AGENTYARD_GIT_HOSTS): a `host` is accepted when
// it names that host (OpenHands' web app always sends one) and refused (422) otherwise, so no
// request can make this server send a token, or a request, to an address of the caller's choosing.
// A token is checked with the provider's API before it is stored, as OpenHands does, so only
// providers with a driver (index.ts) take tokens here; the others answer 501 with what to do instead.
import { Invalid, NotImplemented } from '../../api/errors.ts';
import type { GitProvidersRequest, ProviderType } from '../../api/app/git.ts';
import { DEFAULT_GIT_HOSTS, tokenSecretName } from '../../controller/conversation/repository.ts';
import type { GitProvider } from '../../api/conversation.ts';
import type { AppUser } from '../db/types.ts';
import type { FacadeDeps } from '../deps.ts';
import { deleteStoredSecretsNamed, putStoredSecret, storedSecretValues } from '../user-secrets.ts';
import { DRIVERS, TOKEN_PROVIDERS, hostedProviderReason, providerBase } from './index.ts';

/** A host as OpenHands' Forgejo service reads it: http:// kept, else https://, without a trailing /api/v1. */
export function normalizeHost(host: string): string {
  let url = host.trim().replace(/\/+$/, '');
  if (!/^https?:\/\//i.test(url)) url = `https://${url}`;
  return url.replace(/\/api\/v\d+$/i, '').replace(/\/+$/, '').toLowerCase();
}

type TokenInput = NonNullable<NonNullable<GitProvidersRequest['provider_tokens']>['forgejo']>;

export async function storeProviderTokens(d: FacadeDeps, user: AppUser, req: GitProvidersRequest): Promise<{ message: string }> {
  const entries = (Object.entries(req.provider_tokens ?? {}) as [ProviderType, TokenInput][]).filter(([, t]) => t.token || t.host);
  // Every provider is checked before any token is stored: one refused entry stores none.
  for (const [provider] of entries) {
    if (DRIVERS[provider]) continue;
    throw new NotImplemented(`A ${provider} token is checked with ${provider}'s API before it is stored, which this installation does not call. ${hostedProviderReason(provider)}${TOKEN_PROVIDERS.includes(provider as GitProvider) ? ` Save it as that secret under Settings > Secrets (POST /api/v1/secrets) instead.` : ''}`);
  }
  const checked: { provider: ProviderType; token: string; description: string }[] = [];
  for (const [provider, t] of entries) {
    const base = providerBase(d, provider);
    if (!base) throw new NotImplemented(`No Git host is configured for ${provider}; the administrator sets it in AGENTYARD_GIT_HOSTS`);
    const loc = ['body', 'provider_tokens', provider];
    if (t.host && normalizeHost(t.host) !== normalizeHost(base)) {
      throw new Invalid([{ loc: [...loc, 'host'], msg: `This installation's ${provider} host is ${base}; tokens are sent there only`, type: 'value_error' }]);
    }
    // An empty token keeps the stored one (OpenHands' host-only update).
    if (!t.token) continue;
    const login = await DRIVERS[provider]!.verifyToken(d, base, t.token);
    if (login === null) throw new Invalid([{ loc: [...loc, 'token'], msg: `Invalid token. Please make sure it is a valid ${provider} token.`, type: 'value_error' }]);
    checked.push({ provider, token: t.token, description: `${provider} token of ${login} on ${base}` });
  }
  for (const c of checked) await putStoredSecret(d, user, tokenSecretName(c.provider as GitProvider), c.token, c.description);
  return { message: 'Git providers stored' };
}

/** DELETE /secrets/git-providers: every provider token of the caller (idempotent). */
export async function unsetProviderTokens(d: FacadeDeps, user: AppUser): Promise<{ message: string }> {
  await deleteStoredSecretsNamed(d, user, TOKEN_PROVIDERS.map(tokenSecretName));
  return { message: 'Unset Git provider tokens' };
}

/** GET /settings' provider_tokens_set (OpenHands): provider → host, for each provider the caller has a token for. */
export async function providerTokensSet(d: FacadeDeps, user: AppUser): Promise<Partial<Record<ProviderType, string | null>>> {
  const secrets = await storedSecretValues(d, user);
  const hosts = d.gitHosts ?? DEFAULT_GIT_HOSTS;
  const out: Partial<Record<ProviderType, string | null>> = {};
  for (const p of TOKEN_PROVIDERS) if (secrets[tokenSecretName(p)]) out[p] = hosts[p] ?? null;
  return out;
}
