// The `bitbucket_data_center` provider: a self-managed Bitbucket Data Center (or Server), configured
// as its base URL in AGENTYARD_GIT_HOSTS.bitbucket_data_center (no default), read through its REST
// API (<base>/rest/api/1.0) with the caller's BITBUCKET_DATA_CENTER_TOKEN stored secret (OpenHands'
// name for it). A `user:secret` token goes as HTTP basic credentials, as OpenHands sends it; a bare
// HTTP access token as a Bearer token, as Atlassian documents them (OpenHands sends
// `x-token-auth:<token>` as basic credentials, Bitbucket Cloud's convention).
//
// Calls, shapes and defaults follow openhands-ai 1.11 (integrations/bitbucket_data_center): the
// token is checked with GET /repos?limit=1; installations are project keys (/projects); a project's
// repositories are /projects/{key}/repos; a search is `KEY/text` within a project, else the
// repositories of every project whose slug or name contains the text; branches are
// .../branches?orderBy=MODIFICATION (filterText= for a search); no suggested tasks (1.11 lists none).
// Unlike OpenHands, pages are exact windows of the host's start/limit paging (it loses items, reads
// only the first page of each project in a search and only 100 projects), and a listing without
// installation_id is every project's repositories in turn (OpenHands answers none).
import { BadRequest, Forbidden } from '../../api/errors.ts';
import type { GitBranch, GitRepository } from '../../api/app/git.ts';
import type { FacadeDeps } from '../deps.ts';
import { ProviderHttp, urlOf } from './http.ts';
import { pageOf } from './pages.ts';
import type { GitProviderDriver, ProviderSearch } from './provider.ts';

/** The most items one list read yields (projects, a search's repositories). */
const MAX_READ = 10_000;
/** The page size asked for when reading whole lists; the server may serve fewer (its page.max.* settings). */
const READ_LIMIT = 100;

type Params = Record<string, string | number | undefined>;

export class BitbucketDcClient {
  readonly api: string;
  private readonly http: ProviderHttp;
  constructor(d: FacadeDeps, base: string, token: string) {
    this.api = `${base.replace(/\/+$/, '')}/rest/api/1.0`;
    const authorization = token.includes(':') ? `Basic ${Buffer.from(token).toString('base64')}` : `Bearer ${token}`;
    this.http = new ProviderHttp(d, { provider: 'bitbucket_data_center', authorization });
  }

  async get(path: string, params: Params = {}) {
    return this.http.get(urlOf(this.api, path, params));
  }

  /**
   * Items [offset, offset + count) of a paged list ({values, isLastPage, nextPageStart}), read from
   * `start` on and following nextPageStart: the server may serve fewer than the limit asked.
   * A 404 is an empty list.
   */
  async window(path: string, params: Params, offset: number, count: number): Promise<{ items: any[]; more: boolean }> {
    const items: any[] = [];
    let start: number | null = offset;
    while (start !== null && items.length < count) {
      const r = await this.get(path, { ...params, start, limit: Math.min(count - items.length, 1000) });
      const values = Array.isArray(r.body?.values) ? r.body.values : [];
      items.push(...values);
      start = r.body && r.body.isLastPage === false && typeof r.body.nextPageStart === 'number' && values.length > 0 ? r.body.nextPageStart : null;
    }
    return { items: items.slice(0, count), more: items.length > count || start !== null };
  }

  async all(path: string, params: Params = {}): Promise<any[]> {
    const out: any[] = [];
    let start: number | null = 0;
    while (start !== null && out.length < MAX_READ) {
      const r = await this.get(path, { ...params, start, limit: READ_LIMIT });
      const values = Array.isArray(r.body?.values) ? r.body.values : [];
      out.push(...values);
      start = r.body && r.body.isLastPage === false && typeof r.body.nextPageStart === 'number' && values.length > 0 ? r.body.nextPageStart : null;
    }
    return out.slice(0, MAX_READ);
  }
}

/** OpenHands' BitbucketDCMixinBase._parse_repository (main_branch only where it fetches it: a single repository). */
function repositoryOf(r: any, link: string | null, mainBranch: string | null = null): GitRepository {
  return {
    id: String(r?.id ?? ''),
    full_name: `${r?.project?.key ?? ''}/${r?.slug ?? ''}`,
    git_provider: 'bitbucket_data_center',
    is_public: r?.public === true,
    stargazers_count: null,
    link_header: link,
    pushed_at: null,
    owner_type: 'organization',
    main_branch: mainBranch,
  };
}

/** OpenHands' _parse_branch (without details=true the server sends no metadata, so no date). */
function branchOf(b: any): GitBranch {
  const name = b?.displayId || String(b?.id ?? '').replace(/^refs\/heads\//, '');
  return { name: String(name), commit_sha: String(b?.latestCommit ?? ''), protected: false, last_push_date: null };
}

const seg = (s: string) => encodeURIComponent(s);

function dcSearch(client: BitbucketDcClient): ProviderSearch {
  const projects = async (): Promise<string[]> => (await client.all('/projects')).map((p) => String(p?.key ?? '')).filter(Boolean);
  const matches = (query: string) => (r: any) => String(r?.slug ?? '').toLowerCase().includes(query.toLowerCase()) || String(r?.name ?? '').toLowerCase().includes(query.toLowerCase());

  /** Every repository of some projects in turn, filtered, as a page. */
  const across = async (keys: string[], keep: (r: any) => boolean, page: number, limit: number) => {
    const rows: any[] = [];
    for (const key of keys) {
      rows.push(...(await client.all(`/projects/${seg(key)}/repos`)).filter(keep));
      if (rows.length > page * limit) break;
    }
    return pageOf(
      rows.slice((page - 1) * limit, page * limit + 1).map((r) => repositoryOf(r, null)),
      page,
      limit,
    );
  };

  return {
    async installations() {
      return projects();
    },

    async repositories(q, page, limit) {
      const offset = (page - 1) * limit;
      if (q.query) {
        const query = q.query;
        const host = URL.parse(client.api)?.host ?? '';
        // A repository URL on this host (…/projects/KEY/repos/slug/browse, or KEY/slug) names one repository.
        if (/^https?:\/\//.test(query) && query.includes(host)) {
          const parts = (URL.parse(query)?.pathname ?? '').split('/').filter(Boolean);
          const at = parts.indexOf('projects');
          const [key, slug] = at >= 0 ? [parts[at + 1], parts[at + 2] === 'repos' ? parts[at + 3] : parts[at + 2]] : [parts[0], parts[1]];
          if (!key || !slug) return { items: [], next_page_id: null };
          const r = await client.get(`/projects/${seg(key)}/repos/${seg(slug)}`);
          if (!r.body) return { items: [], next_page_id: null };
          const branch = await client.get(`/projects/${seg(key)}/repos/${seg(slug)}/default-branch`).catch(() => null);
          return pageOf([repositoryOf(r.body, null, branch?.body?.displayId || null)].slice(offset), page, limit);
        }
        if (query.includes('/')) {
          const cut = query.indexOf('/');
          return across([query.slice(0, cut)], matches(query.slice(cut + 1)), page, limit);
        }
        return across(await projects(), matches(query), page, limit);
      }
      if (q.sort_order) throw new BadRequest('sort_order is not supported when listing user repositories. It will be supported after API refactoring.');
      if (!q.installation_id) return across(await projects(), () => true, page, limit);
      const path = `/projects/${seg(q.installation_id)}/repos`;
      const got = await client.window(path, {}, offset, limit + 1);
      // OpenHands' Link header: `<…/projects/KEY/repos?page=N>; rel="next"` when the host has more.
      const link = got.more || got.items.length > limit ? `<${client.api}${path}?page=${page + 1}>; rel="next"` : '';
      return pageOf(
        got.items.map((r) => repositoryOf(r, link)),
        page,
        limit,
      );
    },

    // The server answers 404 alike for a missing repository and one the token cannot see: no branches, as OpenHands answers.
    async branches({ owner, repo }, query, page, limit) {
      const path = `/projects/${seg(owner)}/repos/${seg(repo)}/branches`;
      const got = await client.window(path, { orderBy: 'MODIFICATION', filterText: query || undefined }, (page - 1) * limit, limit + 1);
      return pageOf(
        got.items.map((b) => branchOf(b)),
        page,
        limit,
      );
    },

    // OpenHands 1.11 lists none for Bitbucket Data Center.
    async suggestedTasks() {
      return [];
    },
  };
}

export const bitbucketDataCenter: GitProviderDriver = {
  title: 'Bitbucket Data Center',
  open: (d, base, token) => dcSearch(new BitbucketDcClient(d, base, token)),
  // As OpenHands checks it (verify_access): GET /repos?limit=1 must answer. Data Center has no
  // "myself" resource; the account is the X-AUSERNAME header of that answer, when the token is a user's.
  async verifyToken(d, base, token) {
    const r = await new BitbucketDcClient(d, base, token).get('/repos', { limit: 1 }).catch((err: unknown) => {
      if (err instanceof Forbidden) return null;
      throw err;
    });
    if (r?.status !== 200) return null;
    const user = r.headers.get('x-ausername');
    return user ? decodeURIComponent(user) : 'an HTTP access token';
  },
};
