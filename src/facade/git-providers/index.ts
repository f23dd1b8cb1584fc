// OpenHands' app-API git searches (GET /api/v1/git/{installations,repositories,branches,
// suggested-tasks}/search), dispatched by provider to a GitProviderDriver (provider.ts). Here is
// what is common to every provider: the caller's token is their `<PROVIDER>_TOKEN` stored secret;
// the host is the installation's for that provider (AGENTYARD_GIT_HOSTS), never one a request
// names; page ids, limits' defaults and the errors OpenHands gives before a provider is asked.
// Providers without a driver answer 501 saying so.
import { BadRequest, Forbidden, NotImplemented } from '../../api/errors.ts';
import type { BranchSearchQuery, GitBranch, GitRepository, InstallationSearchQuery, ProviderType, RepositorySearchQuery, SuggestedTask, SuggestedTaskSearchQuery } from '../../api/app/git.ts';
import { DEFAULT_GIT_HOSTS, tokenSecretName, type GitHostProvider } from '../../controller/conversation/repository.ts';
import type { GitProvider } from '../../api/conversation.ts';
import type { AppUser } from '../db/types.ts';
import type { FacadeDeps } from '../deps.ts';
import { storedSecretValues } from '../user-secrets.ts';
import { azureDevops } from './azure-devops.ts';
import { bitbucket } from './bitbucket.ts';
import { bitbucketDataCenter } from './bitbucket-data-center.ts';
import { forgejo } from './forgejo.ts';
import { github } from './github.ts';
import { gitlab } from './gitlab.ts';
import { decodePageId, slicePage, splitRepository } from './pages.ts';
import type { GitPage, GitProviderDriver, ProviderSearch } from './provider.ts';

export type { GitPage } from './provider.ts';

/** The providers searched here, each with its driver. */
export const DRIVERS: Partial<Record<ProviderType, GitProviderDriver>> = { github, forgejo, gitlab, bitbucket, azure_devops: azureDevops, bitbucket_data_center: bitbucketDataCenter };

/** OpenHands' answer when the caller has no provider token (403, not 401: its web app logs out on a 401). */
export const TOKEN_REQUIRED = 'Git provider token required (such as GitHub).';

const HOSTED: Record<ProviderType, string> = {
  github: 'GitHub',
  gitlab: 'GitLab',
  bitbucket: 'Bitbucket',
  bitbucket_data_center: 'Bitbucket Data Center',
  forgejo: 'Forgejo',
  azure_devops: 'Azure DevOps',
  enterprise_sso: 'Enterprise SSO',
};
/** Providers whose tokens are `<PROVIDER>_TOKEN` secrets (the clone reads those of github, gitlab, bitbucket and forgejo). */
export const TOKEN_PROVIDERS: GitHostProvider[] = ['github', 'gitlab', 'bitbucket', 'forgejo', 'azure_devops', 'bitbucket_data_center'];

/** Why a provider without a driver is not searched, and what still works with it. */
export function hostedProviderReason(provider: ProviderType): string {
  const name = HOSTED[provider];
  const still = TOKEN_PROVIDERS.includes(provider as GitProvider)
    ? ` Its repositories are still cloned into conversations with the ${tokenSecretName(provider as GitProvider)} secret (selected_repository with git_provider ${provider}).`
    : '';
  const titles = (Object.keys(DRIVERS) as ProviderType[]).map((p) => HOSTED[p]);
  const searched = titles.length > 1 ? `${titles.slice(0, -1).join(', ')} and ${titles.at(-1)}` : titles.join('');
  return `agentyard does not search ${name} (not built): it searches ${searched} hosts only (as configured in AGENTYARD_GIT_HOSTS).${still}`;
}

/** The installation's base URL for a provider (AGENTYARD_GIT_HOSTS), if it has one. */
export function providerBase(d: FacadeDeps, provider: ProviderType): string | undefined {
  return (d.gitHosts ?? DEFAULT_GIT_HOSTS)[provider as GitHostProvider];
}

/** The provider's driver, or 501 naming what is not searched. */
export function driverOf(provider: ProviderType): GitProviderDriver {
  const driver = DRIVERS[provider];
  if (!driver) throw new NotImplemented(hostedProviderReason(provider));
  return driver;
}

/** The provider's search with the caller's token on the installation's host, or OpenHands' 403 without a token. */
async function access(d: FacadeDeps, user: AppUser, provider: ProviderType): Promise<ProviderSearch> {
  const driver = driverOf(provider);
  const token = (await storedSecretValues(d, user))[tokenSecretName(provider as GitProvider)];
  if (!token) throw new Forbidden(TOKEN_REQUIRED);
  const base = providerBase(d, provider);
  if (!base) throw new NotImplemented(`No Git host is configured for ${provider}; the administrator sets it in AGENTYARD_GIT_HOSTS`);
  return driver.open(d, base, token);
}

/** GET /api/v1/git/installations/search: every installation id, paged here (OpenHands' paginate_results). */
export async function searchInstallations(d: FacadeDeps, user: AppUser, q: InstallationSearchQuery): Promise<GitPage<string>> {
  const search = await access(d, user, q.provider);
  if (!search.installations) throw new BadRequest(`Provider ${q.provider} doesn't support installations`);
  const page = decodePageId(q.page_id);
  return slicePage(await search.installations(), page, q.limit ?? 100);
}

/** GET /api/v1/git/repositories/search: `query` searches the host (by stars unless sort_order says); without it, the caller's repositories. */
export async function searchRepositories(d: FacadeDeps, user: AppUser, q: RepositorySearchQuery): Promise<GitPage<GitRepository>> {
  const search = await access(d, user, q.provider);
  const page = decodePageId(q.page_id);
  return search.repositories(q, page, q.limit ?? 100);
}

/** GET /api/v1/git/branches/search: an empty `query` lists the branches in the host's order; a query keeps those whose name contains it (any case). */
export async function searchBranches(d: FacadeDeps, user: AppUser, q: BranchSearchQuery): Promise<GitPage<GitBranch>> {
  const search = await access(d, user, q.provider);
  const name = splitRepository(q.repository);
  const page = decodePageId(q.page_id);
  return search.branches(name, q.query, page, q.limit ?? 30);
}

/**
 * GET /api/v1/git/suggested-tasks/search: the tasks of every provider the caller has a token for,
 * joined in the providers' order and paged here (OpenHands fetches them all and slices). A token of
 * a provider without a driver is a 501: its tasks cannot be listed.
 */
export async function searchSuggestedTasks(d: FacadeDeps, user: AppUser, q: SuggestedTaskSearchQuery): Promise<GitPage<SuggestedTask>> {
  const secrets = await storedSecretValues(d, user);
  const held = TOKEN_PROVIDERS.filter((p) => secrets[tokenSecretName(p)]);
  if (held.length === 0) throw new Forbidden(TOKEN_REQUIRED);
  const missing = held.find((p) => !DRIVERS[p]);
  if (missing) throw new NotImplemented(`Suggested tasks: ${hostedProviderReason(missing)}`);
  const page = decodePageId(q.page_id);
  const all: SuggestedTask[] = [];
  for (const p of held) {
    const base = providerBase(d, p);
    // A token for a provider this installation has no host for has nowhere to be sent.
    if (base) all.push(...(await DRIVERS[p]!.open(d, base, secrets[tokenSecretName(p)]!).suggestedTasks()));
  }
  return slicePage(all, page, q.limit ?? 30);
}
