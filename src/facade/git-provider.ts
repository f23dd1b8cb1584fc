// OpenHands' app-API git searches (GET /api/v1/git/{installations,repositories,branches,
// suggested-tasks}/search) for the `forgejo` provider: a Forgejo or Gitea host, read through its
// REST API (/api/v1, the API Forgejo forked from Gitea and keeps) with the caller's FORGEJO_TOKEN
// stored secret, the same token that clones the repository a conversation selects
// (controller/conversation/repository.ts). The host is the installation's (AGENTYARD_GIT_HOSTS
// forgejo): a token is only ever sent there, never to a host a request names.
//
// Shapes, defaults, page ids (base64 of a page number) and errors follow openhands-ai 1.11
// (app_server/git/git_router.py, integrations/forgejo), except where its paging loses items: it asks
// the host for limit+1 items per page while numbering pages by `limit`, so every (limit+1)th item is
// never shown, and it takes the host's capped page (Gitea's MAX_RESPONSE_ITEMS, default 50) as the
// last. Here a page is exactly items [(n-1)·limit, n·limit) of the host's order, read in pages the
// host serves whole; page 1 at limits under the cap is the same request and answer as OpenHands'.
// The hosted providers (GitHub, GitLab, Bitbucket, Azure DevOps) answer 501: their APIs cannot be
// reached or run by this installation's tests, so nothing here would be proven to work with them.
import { BadGateway, BadRequest, Forbidden, Invalid, NotImplemented } from '../api/errors.ts';
import type { BranchSearchQuery, GitBranch, GitRepository, InstallationSearchQuery, ProviderType, RepositorySearchQuery, SuggestedTaskSearchQuery } from '../api/app/git.ts';
import { DEFAULT_GIT_HOSTS, tokenSecretName } from '../controller/conversation/repository.ts';
import type { GitProvider } from '../api/conversation.ts';
import type { AppUser } from './db/types.ts';
import type { FacadeDeps } from './deps.ts';
import { storedSecretValues } from './user-secrets.ts';

export interface GitPage<T> {
  items: T[];
  next_page_id: string | null;
}

/** OpenHands' answer when the caller has no provider token (403, not 401: its web app logs out on a 401). */
export const TOKEN_REQUIRED = 'Git provider token required (such as GitHub).';

const HOSTED: Record<Exclude<ProviderType, 'forgejo'>, string> = {
  github: 'GitHub',
  gitlab: 'GitLab',
  bitbucket: 'Bitbucket',
  bitbucket_data_center: 'Bitbucket Data Center',
  azure_devops: 'Azure DevOps',
  enterprise_sso: 'Enterprise SSO',
};
const CLONED: ReadonlySet<string> = new Set<GitProvider>(['github', 'gitlab', 'bitbucket']);

/** Why a provider other than forgejo is not searched, and what still works with it. */
export function hostedProviderReason(provider: Exclude<ProviderType, 'forgejo'>): string {
  const name = HOSTED[provider];
  const still = CLONED.has(provider)
    ? ` Its repositories are still cloned into conversations with the ${tokenSecretName(provider as GitProvider)} secret (selected_repository with git_provider ${provider}).`
    : '';
  return `agentyard searches forgejo hosts only (a Forgejo or Gitea configured in AGENTYARD_GIT_HOSTS): ${name} is searched through its hosted API, which this installation does not call.${still}`;
}

/** OpenHands' opaque page ids: the page (or offset) number in unpadded URL-safe base64. */
export function encodePageId(n: number): string {
  return Buffer.from(String(n)).toString('base64url');
}

/**
 * The page number of a page id (1 without one). OpenHands reads a page id it cannot decode as the
 * first page; here it is a 422 naming query.page_id, as every other cursor of this API.
 */
export function decodePageId(pageId: string | undefined): number {
  if (!pageId) return 1;
  const text = Buffer.from(pageId, 'base64url').toString('utf8');
  if (!/^[1-9][0-9]{0,8}$/.test(text) || encodePageId(Number(text)) !== pageId.replace(/=+$/, '')) {
    throw new Invalid([{ loc: ['query', 'page_id'], msg: 'Not a page id this API gave out (next_page_id of the previous page)', type: 'value_error' }]);
  }
  return Number(text);
}

/** The forgejo host and the caller's token for it, or the error OpenHands gives (403 without a token). */
async function forgejoAccess(d: FacadeDeps, user: AppUser, provider: ProviderType): Promise<ForgejoClient> {
  if (provider !== 'forgejo') throw new NotImplemented(hostedProviderReason(provider));
  const token = (await storedSecretValues(d, user))[tokenSecretName('forgejo')];
  if (!token) throw new Forbidden(TOKEN_REQUIRED);
  const base = (d.gitHosts ?? DEFAULT_GIT_HOSTS).forgejo;
  if (!base) throw new NotImplemented('No Git host is configured for forgejo; the administrator sets it in AGENTYARD_GIT_HOSTS');
  return new ForgejoClient(d, base, token);
}

interface HostPage {
  items: any[];
  link: string | null;
}

/** Calls to a Forgejo/Gitea REST API with one token. Errors never carry the token. */
export class ForgejoClient {
  private readonly d: FacadeDeps;
  readonly base: string;
  private readonly token: string;
  constructor(d: FacadeDeps, base: string, token: string) {
    this.d = d;
    this.base = base;
    this.token = token;
  }

  async get(path: string, params: Record<string, string | number> = {}): Promise<{ body: any; link: string | null; status: number }> {
    const url = new URL(`${this.base}/api/v1${path}`);
    for (const [k, v] of Object.entries(params)) url.searchParams.set(k, String(v));
    let res: Response;
    try {
      res = await fetch(url, { headers: { authorization: `token ${this.token}`, accept: 'application/json' }, redirect: 'error', signal: AbortSignal.timeout(20_000) });
    } catch (err) {
      this.d.log?.warn({ host: this.base, path, err: (err as Error).name }, 'forgejo API unreachable');
      throw new BadGateway(`The forgejo host ${this.base} could not be reached (${(err as Error).name})`);
    }
    const text = await res.text();
    if (res.status === 401) throw new Forbidden('Invalid forgejo token');
    let body: unknown = null;
    try {
      body = text ? JSON.parse(text) : null;
    } catch {
      body = null;
    }
    if (res.status === 404) return { body: null, link: null, status: 404 };
    // Gitea and Forgejo answer 403 to a token without the scope a route needs (read:repository...).
    if (res.status === 403) throw new Forbidden(`The forgejo host refused this token access to ${path} (a scope it lacks?)`);
    if (!res.ok) {
      this.d.log?.warn({ host: this.base, path, status: res.status }, 'forgejo API error');
      throw new BadGateway(`The forgejo host ${this.base} answered ${res.status} to ${path}`);
    }
    return { body, link: res.headers.get('link'), status: res.status };
  }

  /** The most items the host serves in one page (Gitea and Forgejo cap `limit` at MAX_RESPONSE_ITEMS). */
  async maxPageSize(): Promise<number> {
    const r = await this.get('/settings/api');
    const n = Number(r.body?.max_response_items);
    return Number.isInteger(n) && n > 0 ? n : 50;
  }
}

/**
 * Items [offset, offset + count) of a list the host serves in numbered pages, read in pages of
 * `size` (at most the host's cap, so each page it serves is whole). Each item comes with the Link
 * header of the host's page it was on (OpenHands' Repository.link_header).
 */
async function window(read: (page: number, size: number) => Promise<HostPage>, offset: number, count: number, size: number): Promise<{ item: any; link: string | null }[]> {
  const out: { item: any; link: string | null }[] = [];
  let page = Math.floor(offset / size) + 1;
  let skip = offset % size;
  for (;;) {
    const got = await read(page, size);
    out.push(...got.items.slice(skip).map((item) => ({ item, link: got.link })));
    skip = 0;
    // A page shorter than asked is the last; more than asked would be a host that ignores `limit`.
    if (out.length >= count || got.items.length < size || got.items.length > size) return out.slice(0, count);
    page++;
  }
}

/** The most branches a branch search reads (OpenHands reads them all; a bound keeps one search bounded). */
export const MAX_SEARCHED_BRANCHES = 10_000;

/** Items of a page and the id of the next: `limit + 1` items read tell whether there is one. */
function pageOf<T>(rows: T[], page: number, limit: number): GitPage<T> {
  return { items: rows.slice(0, limit), next_page_id: rows.length > limit ? encodePageId(page + 1) : null };
}

/** OpenHands' ForgejoMixinBase._parse_repository. */
function repositoryOf(repo: any, link: string | null): GitRepository {
  return {
    id: String(repo?.id ?? ''),
    full_name: String(repo?.full_name ?? ''),
    git_provider: 'forgejo',
    is_public: !repo?.private,
    stargazers_count: typeof repo?.stars_count === 'number' ? repo.stars_count : null,
    link_header: link,
    pushed_at: repo?.updated_at || repo?.pushed_at || null,
    // As OpenHands reads it: the owner's `type` (Gitea's user objects carry none, so "user").
    owner_type: String(repo?.owner?.type ?? '').toLowerCase() === 'organization' ? 'organization' : 'user',
    main_branch: repo?.default_branch ?? null,
  };
}

function branchOf(b: any): GitBranch {
  const c = b?.commit ?? {};
  return { name: String(b?.name ?? ''), commit_sha: String(c.id || c.sha || c.commit?.sha || ''), protected: b?.protected === true, last_push_date: null };
}

/** `owner/repo` of a repository name or URL, as OpenHands' _split_repo reads it. */
function splitRepository(repository: string): [string, string] {
  let path = repository.trim();
  if (/^https?:\/\//.test(path)) path = URL.parse(path)?.pathname ?? '';
  const parts = path.split('/').filter(Boolean);
  if (parts.length < 2 || !parts.slice(0, 2).every((p) => /^[A-Za-z0-9_.-]+$/.test(p))) {
    throw new Invalid([{ loc: ['query', 'repository'], msg: 'Expected a repository as owner/repo', type: 'value_error' }]);
  }
  return [parts[0]!, parts[1]!.replace(/\.git$/, '')];
}

/** GET /api/v1/git/installations/search: Forgejo has no installations (OpenHands: 400). */
export async function searchInstallations(d: FacadeDeps, user: AppUser, q: InstallationSearchQuery): Promise<GitPage<string>> {
  await forgejoAccess(d, user, q.provider);
  throw new BadRequest(`Provider ${q.provider} doesn't support installations`);
}

/** GET /api/v1/git/repositories/search: `query` searches the host (by stars unless sort_order says); without it, the caller's repositories. */
export async function searchRepositories(d: FacadeDeps, user: AppUser, q: RepositorySearchQuery): Promise<GitPage<GitRepository>> {
  const client = await forgejoAccess(d, user, q.provider);
  const page = decodePageId(q.page_id);
  const limit = q.limit ?? 100;
  const size = Math.min(limit + 1, await client.maxPageSize());
  if (q.query) {
    const [sort, order] = q.sort_order ? [q.sort_order.slice(0, q.sort_order.lastIndexOf('-')), q.sort_order.slice(q.sort_order.lastIndexOf('-') + 1)] : ['stars', 'desc'];
    // A repository URL on this host asks for public repositories only (OpenHands' _is_repository_url).
    const host = client.base.replace(/^https?:\/\//, '');
    const publicOnly = /^https?:\/\//.test(q.query) && (q.query.includes(host) || q.query.includes('codeberg.org'));
    const rows = await window(
      async (p, n) => {
        const r = await client.get('/repos/search', { q: q.query!, limit: n, page: p, sort, order, mode: 'source' });
        return { items: Array.isArray(r.body?.data) ? r.body.data : [], link: null };
      },
      (page - 1) * limit,
      limit + 1,
      size,
    );
    const repos = rows.filter((r) => !publicOnly || !r.item?.private).map((r) => repositoryOf(r.item, null));
    return pageOf(repos, page, limit);
  }
  if (q.sort_order) throw new BadRequest('sort_order is not supported when listing user repositories. It will be supported after API refactoring.');
  const rows = await window(
    async (p, n) => {
      const r = await client.get('/user/repos', { page: p, limit: n, sort: 'updated' });
      return { items: Array.isArray(r.body) ? r.body : [], link: r.link };
    },
    (page - 1) * limit,
    limit + 1,
    size,
  );
  return pageOf(
    rows.map((r) => repositoryOf(r.item, r.link)),
    page,
    limit,
  );
}

/**
 * GET /api/v1/git/branches/search: an empty `query` lists the branches in the host's order; a query
 * keeps those whose name contains it (any case). A repository the token cannot see has no branches
 * (an empty page, as OpenHands answers; the host answers 404 alike for missing and hidden ones).
 */
export async function searchBranches(d: FacadeDeps, user: AppUser, q: BranchSearchQuery): Promise<GitPage<GitBranch>> {
  const client = await forgejoAccess(d, user, q.provider);
  const [owner, repo] = splitRepository(q.repository);
  const page = decodePageId(q.page_id);
  const limit = q.limit ?? 30;
  const path = `/repos/${encodeURIComponent(owner)}/${encodeURIComponent(repo)}/branches`;
  const read = async (p: number, n: number): Promise<HostPage> => {
    const r = await client.get(path, { page: p, limit: n });
    return { items: Array.isArray(r.body) ? r.body : [], link: r.link };
  };
  const cap = await client.maxPageSize();
  if (!q.query) {
    const rows = await window(read, (page - 1) * limit, limit + 1, Math.min(limit + 1, cap));
    return pageOf(
      rows.map((r) => branchOf(r.item)),
      page,
      limit,
    );
  }
  // A search reads every branch (OpenHands does too) and pages the matches; OpenHands refuses
  // page 2 of a search with a 400 although its page 1 gives out a next_page_id.
  const all = await window(read, 0, MAX_SEARCHED_BRANCHES, Math.min(100, cap));
  const wanted = q.query.toLowerCase();
  const matches = all.map((r) => branchOf(r.item)).filter((b) => b.name.toLowerCase().includes(wanted));
  return pageOf(matches.slice((page - 1) * limit, page * limit + 1), page, limit);
}

/**
 * GET /api/v1/git/suggested-tasks/search: tasks from every provider the caller has a token for.
 * OpenHands 1.11 lists none for Forgejo (its ForgejoFeaturesMixin returns an empty list), and so
 * does this; a token of a hosted provider would need that provider's API (501).
 */
export async function searchSuggestedTasks(d: FacadeDeps, user: AppUser, q: SuggestedTaskSearchQuery): Promise<GitPage<never>> {
  const secrets = await storedSecretValues(d, user);
  const held = (['github', 'gitlab', 'bitbucket', 'forgejo'] as const).filter((p) => secrets[tokenSecretName(p)]);
  if (held.length === 0) throw new Forbidden(TOKEN_REQUIRED);
  const hosted = held.find((p): p is Exclude<typeof p, 'forgejo'> => p !== 'forgejo');
  if (hosted) throw new NotImplemented(`Suggested tasks: ${hostedProviderReason(hosted)}`);
  decodePageId(q.page_id);
  return { items: [], next_page_id: null };
}
