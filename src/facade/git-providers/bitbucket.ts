// The `bitbucket` provider: Bitbucket Cloud, read through its REST API 2.0 with the caller's
// BITBUCKET_TOKEN stored secret, the one that clones from the configured bitbucket host. As
// OpenHands sends it: a token holding a colon (`user:app-password`, `email:api-token`) as HTTP
// basic credentials, any other (workspace, project or repository access tokens, OAuth) as a Bearer
// token. The API of https://bitbucket.org is https://api.bitbucket.org/2.0; any other configured
// base (a proxy, a test's stand-in) serves it at <base>/2.0, so the token goes to that base only.
//
// Calls, shapes and defaults follow openhands-ai 1.11 (integrations/bitbucket): installations are
// the caller's workspaces (/user/workspaces); a workspace's repositories are
// /repositories/{workspace} by -updated_on; a search is name~"query" in the named workspace
// (`workspace/query`), else every repository of the workspaces whose slug contains the query and
// those named like it in every workspace; branches are .../refs/branches by -target.date
// (name~"query" for a search); no suggested tasks (1.11 lists none for Bitbucket). Unlike
// OpenHands, pages are exact windows (it loses every limit+1th item, answers page 1 of a search
// forever and stops at 100 workspaces), and a listing without installation_id is the
// repositories of every workspace in turn (OpenHands answers none).
import { BadRequest, Forbidden } from '../../api/errors.ts';
import type { GitBranch, GitRepository } from '../../api/app/git.ts';
import type { FacadeDeps } from '../deps.ts';
import { ProviderHttp, sameOrigin, urlOf } from './http.ts';
import { pageOf, window, type HostPage } from './pages.ts';
import type { GitProviderDriver, ProviderSearch } from './provider.ts';

/** Bitbucket's largest pagelen for repositories and refs. */
const PAGELEN_MAX = 100;
/** The most workspaces, or repositories of a cross-workspace search, one call reads. */
const MAX_READ = 10_000;

/** The 2.0 API of a configured Bitbucket Cloud base. */
export function bitbucketApi(base: string): string {
  const url = new URL(base);
  if (url.hostname === 'bitbucket.org' || url.hostname === 'www.bitbucket.org') return 'https://api.bitbucket.org/2.0';
  return `${base.replace(/\/+$/, '')}/2.0`;
}

/** A BBQL string literal (`name~"..."`): quotes and backslashes escaped. */
function bbqlString(s: string): string {
  return `"${s.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;
}

export class BitbucketClient {
  readonly api: string;
  private readonly http: ProviderHttp;
  constructor(d: FacadeDeps, base: string, token: string) {
    this.api = bitbucketApi(base);
    const authorization = token.includes(':') ? `Basic ${Buffer.from(token).toString('base64')}` : `Bearer ${token}`;
    this.http = new ProviderHttp(d, { provider: 'bitbucket', authorization });
  }

  async get(path: string, params: Record<string, string | number | undefined> = {}) {
    return this.http.get(urlOf(this.api, path, params));
  }

  /** One numbered page of a paged list ({values, page, pagelen, size, next}); a 404 is an empty last page. */
  async page(path: string, params: Record<string, string | number | undefined>, page: number, size: number): Promise<HostPage & { next: string | null }> {
    const r = await this.get(path, { ...params, pagelen: size, page });
    return { items: Array.isArray(r.body?.values) ? r.body.values : [], link: null, next: typeof r.body?.next === 'string' ? r.body.next : null };
  }

  /** Every item of a paged list, following `next` while it stays on this API (bounded). */
  async all(path: string, params: Record<string, string | number | undefined> = {}): Promise<any[]> {
    const out: any[] = [];
    let url: URL | null = urlOf(this.api, path, { ...params, pagelen: PAGELEN_MAX });
    while (url && out.length < MAX_READ) {
      const r = await this.http.get(url);
      out.push(...(Array.isArray(r.body?.values) ? r.body.values : []));
      url = typeof r.body?.next === 'string' ? sameOrigin(this.api, r.body.next) : null;
    }
    return out.slice(0, MAX_READ);
  }
}

/** OpenHands' BitBucketMixinBase._parse_repository. */
function repositoryOf(r: any, link: string | null): GitRepository {
  const workspace = r?.workspace?.slug ?? '';
  const slug = r?.slug ?? '';
  return {
    id: String(r?.uuid ?? ''),
    full_name: workspace && slug ? `${workspace}/${slug}` : '',
    git_provider: 'bitbucket',
    is_public: r?.is_private === false,
    stargazers_count: null,
    link_header: link,
    pushed_at: r?.updated_on ?? null,
    owner_type: 'organization',
    main_branch: r?.mainbranch?.name ?? null,
  };
}

function branchOf(b: any): GitBranch {
  return { name: String(b?.name ?? ''), commit_sha: String(b?.target?.hash ?? ''), protected: false, last_push_date: b?.target?.date ?? null };
}

/** sort_order as Bitbucket's sort: it has no stars or forks, so those are by last update (as OpenHands sends every sort). */
function repositorySort(sortOrder: string | undefined): string {
  return sortOrder === 'updated-asc' ? 'updated_on' : '-updated_on';
}

type Reader = (page: number, size: number) => Promise<HostPage & { next: string | null }>;

/**
 * Items [offset, offset + count) of several paged lists read one after another, each read to its
 * end before the next; items whose key was seen earlier are left out (OpenHands deduplicates
 * search results by full_name).
 */
async function concatWindow(readers: Reader[], offset: number, count: number, size: number, key: (item: any) => string): Promise<{ item: any; link: string | null }[]> {
  const out: { item: any; link: string | null }[] = [];
  const seen = new Set<string>();
  for (const read of readers) {
    for (let page = 1; out.length < offset + count; page++) {
      const got = await read(page, size);
      for (const item of got.items) {
        if (seen.has(key(item))) continue;
        seen.add(key(item));
        out.push({ item, link: got.link });
      }
      if (!got.next || got.items.length === 0) break;
    }
    if (out.length >= offset + count) break;
  }
  return out.slice(offset, offset + count);
}

function bitbucketSearch(client: BitbucketClient): ProviderSearch {
  const workspaces = async (): Promise<string[]> => (await client.all('/user/workspaces')).map((w) => String(w?.workspace?.slug ?? w?.slug ?? '')).filter(Boolean);

  /** A reader of one workspace's repositories; the Link header is OpenHands' `<.../repositories/{ws}?page=N>; rel="next"`. */
  const repositoriesOf =
    (workspace: string, sort: string, query?: string): Reader =>
    async (page, size) => {
      const path = `/repositories/${encodeURIComponent(workspace)}`;
      const got = await client.page(path, { sort, q: query ? `name~${bbqlString(query)}` : undefined }, page, size);
      const nextPage = got.next ? URL.parse(got.next)?.searchParams.get('page') : null;
      const link = got.next ? `<${client.api}${path}?page=${nextPage ?? page + 1}>; rel="next"` : '';
      return { ...got, link };
    };

  return {
    async installations() {
      return workspaces();
    },

    async repositories(q, page, limit) {
      const size = Math.min(limit + 1, PAGELEN_MAX);
      const offset = (page - 1) * limit;
      const byName = (r: any) => `${r?.workspace?.slug}/${r?.slug}`;
      const rows = async (readers: Reader[]) => {
        const got = await concatWindow(readers, offset, limit + 1, size, byName);
        return pageOf(
          got.map((r) => repositoryOf(r.item, r.link)),
          page,
          limit,
        );
      };
      if (q.query) {
        const query = q.query;
        const sort = repositorySort(q.sort_order);
        // A repository URL on this host (or bitbucket.org) names one repository.
        const host = URL.parse(client.api)?.host ?? '';
        if (/^https?:\/\//.test(query) && (query.includes(host) || query.includes('bitbucket.org'))) {
          const [workspace, slug] = (URL.parse(query)?.pathname ?? '').split('/').filter(Boolean);
          const r = workspace && slug ? await client.get(`/repositories/${encodeURIComponent(workspace)}/${encodeURIComponent(slug)}`) : null;
          return pageOf(r?.body ? [repositoryOf(r.body, null)].slice(offset) : [], page, limit);
        }
        if (query.includes('/')) {
          const cut = query.indexOf('/');
          return rows([repositoriesOf(query.slice(0, cut), sort, query.slice(cut + 1))]);
        }
        const all = await workspaces();
        return rows([...all.filter((w) => w.includes(query)).map((w) => repositoriesOf(w, sort)), ...all.map((w) => repositoriesOf(w, sort, query))]);
      }
      if (q.sort_order) throw new BadRequest('sort_order is not supported when listing user repositories. It will be supported after API refactoring.');
      const installations = q.installation_id ? [q.installation_id] : await workspaces();
      return rows(installations.map((w) => repositoriesOf(w, '-updated_on')));
    },

    // Bitbucket answers 404 alike for a missing repository and one the token cannot see: no branches, as OpenHands answers.
    async branches({ owner, repo }, query, page, limit) {
      const path = `/repositories/${encodeURIComponent(owner)}/${encodeURIComponent(repo)}/refs/branches`;
      const params = { sort: '-target.date', q: query ? `name~${bbqlString(query)}` : undefined };
      const rows = await window((p, n) => client.page(path, params, p, n), (page - 1) * limit, limit + 1, Math.min(limit + 1, PAGELEN_MAX));
      return pageOf(
        rows.map((r) => branchOf(r.item)),
        page,
        limit,
      );
    },

    // OpenHands 1.11 lists none for Bitbucket (its get_suggested_tasks returns an empty list).
    async suggestedTasks() {
      return [];
    },
  };
}

export const bitbucket: GitProviderDriver = {
  title: 'Bitbucket',
  open: (d, base, token) => bitbucketSearch(new BitbucketClient(d, base, token)),
  // As OpenHands checks a Bitbucket token: the API must answer GET /user with it.
  async verifyToken(d, base, token) {
    const me = await new BitbucketClient(d, base, token).get('/user').catch((err: unknown) => {
      if (err instanceof Forbidden) return null;
      throw err;
    });
    if (me?.status !== 200) return null;
    const name = me.body?.username ?? me.body?.display_name ?? me.body?.account_id;
    return typeof name === 'string' ? name : null;
  },
};
