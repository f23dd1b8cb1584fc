// What one Git provider implements for the app API's git searches and provider tokens (OpenHands
// 1.11's /api/v1/git/*/search and POST /secrets/git-providers). A provider is a module exporting a
// GitProviderDriver, registered in index.ts; index.ts does everything common to all of them: the
// caller's token (its `<PROVIDER>_TOKEN` stored secret), the installation's host for the provider
// (AGENTYARD_GIT_HOSTS: a token is only ever sent there), page ids, the `owner/repo` parse, and the
// errors OpenHands gives before a provider is asked (403 without a token, 400 without
// installations). A driver only talks to its host's API and maps answers to the app API's shapes
// (src/api/app/git.ts).
import type { GitBranch, GitRepository, RepositorySearchQuery, SuggestedTask } from '../../api/app/git.ts';
import type { FacadeDeps } from '../deps.ts';

/** A page of a search as the app API answers it; next_page_id is an encodePageId (pages.ts). */
export interface GitPage<T> {
  items: T[];
  next_page_id: string | null;
}

/** A repository named in a request, as `owner/repo` (OpenHands' _split_repo; pages.ts splitRepository). */
export interface RepositoryName {
  owner: string;
  repo: string;
  /** Every segment as named (`group/subgroup/project` on GitLab, `project/repo` on Azure DevOps): for hosts whose repositories nest deeper than owner/repo. */
  path: string;
}

/**
 * One user's view of one provider: searches with their token on the installation's host. Pages are
 * numbered from 1; `limit` is 1..100. A page answers items [(page-1)·limit, page·limit) of the
 * provider's order, with a next_page_id when there are more (pages.ts pageOf).
 */
export interface ProviderSearch {
  /**
   * Every installation id the token can use (GitHub App installations, Bitbucket workspaces, Azure
   * DevOps organizations), in the provider's order; index.ts pages them as OpenHands does.
   * Absent: the provider has none (OpenHands: 400 "doesn't support installations").
   */
  installations?(): Promise<string[]>;
  /** `query` set: a search on the host (sort_order, default stars-desc); else the token user's repositories. */
  repositories(q: Pick<RepositorySearchQuery, 'query' | 'sort_order' | 'installation_id'>, page: number, limit: number): Promise<GitPage<GitRepository>>;
  /** `query` empty: every branch in the host's order; else those whose name contains it. A repository the token cannot see has none. */
  branches(repository: RepositoryName, query: string, page: number, limit: number): Promise<GitPage<GitBranch>>;
  /** Every suggested task (OpenHands' get_suggested_tasks); index.ts joins the providers' lists and pages them. */
  suggestedTasks(): Promise<SuggestedTask[]>;
}

export interface GitProviderDriver {
  /** The provider's name in messages ("GitHub"). */
  readonly title: string;
  /** A search bound to `base` (the installation's host for the provider, as configured) and one token. Never calls out. */
  open(d: FacadeDeps, base: string, token: string): ProviderSearch;
  /**
   * Checks a token with the host before it is stored (OpenHands validates it the same way): the
   * account it belongs to (for the secret's description), or null when the host refuses it. Throws
   * an ApiError when the host cannot answer (BadGateway).
   */
  verifyToken(d: FacadeDeps, base: string, token: string): Promise<string | null>;
}
