// The `forgejo` provider: a Forgejo or Gitea host, read through its REST API (/api/v1, the API
// Forgejo forked from Gitea and keeps) with the caller's FORGEJO_TOKEN stored secret, the same token
// that clones the repository a conversation selects (controller/conversation/repository.ts).
//
// Shapes, defaults and errors follow openhands-ai 1.11 (app_server/git/git_router.py,
// integrations/forgejo), except where its paging loses items: it asks the host for limit+1 items per
// page while numbering pages by `limit`, so every (limit+1)th item is never shown, and it takes the
// host's capped page (Gitea's MAX_RESPONSE_ITEMS, default 50) as the last. Here a page is exactly
// items [(n-1)·limit, n·limit) of the host's order, read in pages the host serves whole; page 1 at
// limits under the cap is the same request and answer as OpenHands'.
import { BadGateway, BadRequest, Forbidden } from '../../api/errors.ts';
import type { GitBranch, GitRepository } from '../../api/app/git.ts';
import type { FacadeDeps } from '../deps.ts';
import { pageOf, window, type HostPage } from './pages.ts';
import type { GitProviderDriver, ProviderSearch } from './provider.ts';
import { fetchFailure } from '../../util/fetch-failure.ts';

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
      this.d.log?.warn({ host: this.base, path, err: fetchFailure(err) }, 'forgejo API unreachable');
      throw new BadGateway(`The forgejo host ${this.base} could not be reached (${fetchFailure(err, 20_000)})`);
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

/** The most branches a branch search reads (OpenHands reads them all; a bound keeps one search bounded). */
export const MAX_SEARCHED_BRANCHES = 10_000;

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

function forgejoSearch(client: ForgejoClient): ProviderSearch {
  return {
    // Forgejo has no installations: no `installations` (OpenHands: 400).
    async repositories(q, page, limit) {
      const size = Math.min(limit + 1, await client.maxPageSize());
      if (q.query) {
        const query = q.query;
        const [sort, order] = q.sort_order ? [q.sort_order.slice(0, q.sort_order.lastIndexOf('-')), q.sort_order.slice(q.sort_order.lastIndexOf('-') + 1)] : ['stars', 'desc'];
        // A repository URL on this host asks for public repositories only (OpenHands' _is_repository_url).
        const host = client.base.replace(/^https?:\/\//, '');
        const publicOnly = /^https?:\/\//.test(query) && (query.includes(host) || query.includes('codeberg.org'));
        const rows = await window(
          async (p, n) => {
            const r = await client.get('/repos/search', { q: query, limit: n, page: p, sort, order, mode: 'source' });
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
    },

    // The host answers 404 alike for missing and hidden repositories: an empty page, as OpenHands answers.
    async branches({ owner, repo }, query, page, limit) {
      const path = `/repos/${encodeURIComponent(owner)}/${encodeURIComponent(repo)}/branches`;
      const read = async (p: number, n: number): Promise<HostPage> => {
        const r = await client.get(path, { page: p, limit: n });
        return { items: Array.isArray(r.body) ? r.body : [], link: r.link };
      };
      const cap = await client.maxPageSize();
      if (!query) {
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
      const wanted = query.toLowerCase();
      const matches = all.map((r) => branchOf(r.item)).filter((b) => b.name.toLowerCase().includes(wanted));
      return pageOf(matches.slice((page - 1) * limit, page * limit + 1), page, limit);
    },

    // OpenHands 1.11 lists none for Forgejo (its ForgejoFeaturesMixin returns an empty list).
    async suggestedTasks() {
      return [];
    },
  };
}

export const forgejo: GitProviderDriver = {
  title: 'Forgejo',
  open: (d, base, token) => forgejoSearch(new ForgejoClient(d, base, token)),
  // As OpenHands checks it: the host must know the token's user.
  async verifyToken(d, base, token) {
    const me = await new ForgejoClient(d, base, token).get('/user').catch((err: unknown) => {
      if (err instanceof BadGateway) throw err;
      return null;
    });
    return me?.status === 200 && typeof me.body?.login === 'string' ? me.body.login : null;
  },
};
