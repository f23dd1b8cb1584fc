// POST/DELETE /api/v1/secrets/git-providers (OpenHands 1.11's secrets_router): a user's Git provider
// tokens. Here a provider token is the caller's `<PROVIDER>_TOKEN` stored secret, the one the clone
// of a selected repository (controller/conversation/repository.ts), the skills search and the git
// searches (git-provider.ts) read: saving it here or under Settings > Secrets is the same thing.
//
// Where OpenHands keeps a host per token and calls whatever host a user names, a token here goes
// to the installation's host for its provider only (AGENTYARD_GIT_HOSTS): a `host` is accepted when
// it names that host (OpenHands' web app always sends one) and refused (422) otherwise, so no
// request can make this server send a token, or a request, to an address of the caller's choosing.
// Only forgejo tokens are taken: OpenHands checks a token against the provider's API before
// storing it, and the hosted providers' APIs are not called here (501, with what to do instead).
import { BadGateway, Invalid, NotImplemented } from '../api/errors.ts';
import type { GitProvidersRequest, ProviderType } from '../api/app/git.ts';
import { DEFAULT_GIT_HOSTS, tokenSecretName } from '../controller/conversation/repository.ts';
import type { GitProvider } from '../api/conversation.ts';
import type { AppUser } from './db/types.ts';
import type { FacadeDeps } from './deps.ts';
import { ForgejoClient, hostedProviderReason } from './git-provider.ts';
import { deleteStoredSecretsNamed, putStoredSecret, storedSecretValues } from './user-secrets.ts';

/** Providers whose token is a `<PROVIDER>_TOKEN` secret the clone reads. */
const TOKEN_PROVIDERS: GitProvider[] = ['github', 'gitlab', 'bitbucket', 'forgejo'];

/** A host as OpenHands' Forgejo service reads it: http:// kept, else https://, without a trailing /api/v1. */
export function normalizeHost(host: string): string {
  let url = host.trim().replace(/\/+$/, '');
  if (!/^https?:\/\//i.test(url)) url = `https://${url}`;
  return url.replace(/\/api\/v\d+$/i, '').replace(/\/+$/, '').toLowerCase();
}

export async function storeProviderTokens(d: FacadeDeps, user: AppUser, req: GitProvidersRequest): Promise<{ message: string }> {
  const entries = Object.entries(req.provider_tokens ?? {}) as [ProviderType, NonNullable<NonNullable<GitProvidersRequest['provider_tokens']>['forgejo']>][];
  for (const [provider, t] of entries) {
    if (provider === 'forgejo' || (!t.token && !t.host)) continue;
    throw new NotImplemented(`A ${provider} token is checked against ${provider}'s hosted API before it is stored, which this installation does not call. ${hostedProviderReason(provider)}${TOKEN_PROVIDERS.includes(provider as GitProvider) ? ` Save it as that secret under Settings > Secrets (POST /api/v1/secrets) instead.` : ''}`);
  }
  const forgejo = req.provider_tokens?.forgejo;
  if (!forgejo) return { message: 'Git providers stored' };
  const base = (d.gitHosts ?? DEFAULT_GIT_HOSTS).forgejo;
  if (!base) throw new NotImplemented('No Git host is configured for forgejo; the administrator sets it in AGENTYARD_GIT_HOSTS');
  const loc = ['body', 'provider_tokens', 'forgejo'];
  if (forgejo.host && normalizeHost(forgejo.host) !== normalizeHost(base)) {
    throw new Invalid([{ loc: [...loc, 'host'], msg: `This installation's forgejo host is ${base}; tokens are sent there only`, type: 'value_error' }]);
  }
  // An empty token keeps the stored one (OpenHands' host-only update).
  if (!forgejo.token) return { message: 'Git providers stored' };
  // Checked as OpenHands checks it: the host must know the token's user.
  const client = new ForgejoClient(d, base, forgejo.token);
  const me = await client.get('/user').catch((err: unknown) => {
    if (err instanceof BadGateway) throw err;
    throw new Invalid([{ loc: [...loc, 'token'], msg: 'Invalid token. Please make sure it is a valid forgejo token.', type: 'value_error' }]);
  });
  if (me.status !== 200 || typeof me.body?.login !== 'string') {
    throw new Invalid([{ loc: [...loc, 'token'], msg: 'Invalid token. Please make sure it is a valid forgejo token.', type: 'value_error' }]);
  }
  await putStoredSecret(d, user, tokenSecretName('forgejo'), forgejo.token, `forgejo token of ${me.body.login} on ${base}`);
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
