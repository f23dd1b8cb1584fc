// The `gitlab` provider: gitlab.com or a self-managed GitLab (AGENTYARD_GIT_HOSTS.gitlab, the same
// host repositories are cloned from), read through its REST API (<host>/api/v4) and, for suggested
// tasks, its GraphQL API (<host>/api/graphql), with the caller's GITLAB_TOKEN stored secret as a
// Bearer token (personal, group or project access tokens and OAuth tokens all take it).
//
// Calls, shapes and defaults follow openhands-ai 1.11 (integrations/gitlab): the caller's projects
// are /projects?membership=true by last activity; a search adds search= and search_namespaces=true;
// branches are /projects/:path/repository/branches (search= for a query); suggested tasks are the
// caller's open merge requests with conflicts, a failed pipeline or unresolved threads (GraphQL)
// and the open issues assigned to them. Where OpenHands loses or repeats items (it asks for limit+1
// per page numbered by limit; a search always answers its first page; assigned issues stop at the
// host's default page of 20) every page here is exactly items [(n-1)·limit, n·limit) of the host's
// order. A search honours sort_order (OpenHands sends GitLab last_activity_at desc whatever it is).
import { BadGateway, BadRequest, Forbidden } from '../../api/errors.ts';
import type { GitBranch, GitRepository, SuggestedTask } from '../../api/app/git.ts';
import type { FacadeDeps } from '../deps.ts';
import { ProviderHttp, urlOf } from './http.ts';
import { pageOf, window, type HostPage } from './pages.ts';
import type { GitProviderDriver, ProviderSearch } from './provider.ts';

/** GitLab's largest per_page. */
const PER_PAGE_MAX = 100;
/** The most branches, or assigned issues, one search reads. */
const MAX_READ = 10_000;

type Params = Record<string, string | number | boolean | undefined>;

export class GitLabClient {
  readonly host: string;
  private readonly http: ProviderHttp;
  constructor(d: FacadeDeps, host: string, token: string) {
    this.host = host.replace(/\/+$/, '');
    this.http = new ProviderHttp(d, { provider: 'gitlab', authorization: `Bearer ${token}` });
  }

  /** GET <host>/api/v4<path>: body null on 404. */
  async get(path: string, params: Params = {}) {
    return this.http.get(urlOf(`${this.host}/api/v4`, path, params));
  }

  /** One numbered page of a paged list (GitLab's offset pagination: page, per_page, Link). */
  async page(path: string, params: Params, page: number, size: number): Promise<HostPage & { missing: boolean }> {
    // page and per_page first, as OpenHands sends them (the host echoes the order in its Link header).
    const r = await this.get(path, { page, per_page: size, ...params });
    return { items: Array.isArray(r.body) ? r.body : [], link: r.headers.get('link'), missing: r.status === 404 };
  }

  async graphql(query: string): Promise<any> {
    const r = await this.http.call('POST', new URL(`${this.host}/api/graphql`), { query, variables: {} });
    // GitLab answers a query it cannot run with 200 and `errors`.
    if (Array.isArray(r.body?.errors) && r.body.errors.length) throw new BadGateway(`GitLab GraphQL error: ${String(r.body.errors[0]?.message ?? 'unknown')}`);
    return r.body?.data ?? null;
  }
}

/** A project path as GitLab's API takes it in a URL (`group/sub/project` → `group%2Fsub%2Fproject`). */
export function projectId(path: string): string {
  return encodeURIComponent(path);
}

/** OpenHands' GitLabReposMixin._parse_repository (it sets no pushed_at). */
function repositoryOf(p: any, link: string | null): GitRepository {
  return {
    id: String(p?.id ?? ''),
    full_name: String(p?.path_with_namespace ?? ''),
    git_provider: 'gitlab',
    is_public: p?.visibility === 'public',
    stargazers_count: typeof p?.star_count === 'number' ? p.star_count : null,
    link_header: link,
    pushed_at: null,
    owner_type: p?.namespace?.kind === 'group' ? 'organization' : 'user',
    main_branch: p?.default_branch ?? null,
  };
}

function branchOf(b: any): GitBranch {
  return { name: String(b?.name ?? ''), commit_sha: String(b?.commit?.id ?? ''), protected: b?.protected === true, last_push_date: b?.commit?.committed_date ?? null };
}

/** sort_order (stars|forks|updated)-(asc|desc) as GitLab's order_by/sort; GitLab cannot order projects by forks, so that one is by last activity. */
function projectOrder(sortOrder: string | undefined): { order_by: string; sort: string } {
  if (!sortOrder) return { order_by: 'star_count', sort: 'desc' };
  const cut = sortOrder.lastIndexOf('-');
  const field = sortOrder.slice(0, cut);
  return { order_by: field === 'stars' ? 'star_count' : 'last_activity_at', sort: sortOrder.slice(cut + 1) === 'asc' ? 'asc' : 'desc' };
}

/** The project path of a URL on this host (`https://gitlab.example.com/group/sub/project/-/tree/main` → `group/sub/project`). */
function projectPathOfUrl(url: string): string | null {
  const parsed = URL.parse(url);
  if (!parsed) return null;
  const parts = parsed.pathname.split('/').filter(Boolean);
  const dash = parts.indexOf('-');
  const path = (dash >= 0 ? parts.slice(0, dash) : parts).join('/').replace(/\.git$/, '');
  return path.split('/').length >= 2 ? path : null;
}

/** GraphQL: the caller's open merge requests, most recently updated first (OpenHands' query, trimmed to what it reads). */
const MERGE_REQUESTS = `query GetUserTasks {
  currentUser {
    authoredMergeRequests(state: opened, sort: UPDATED_DESC, first: 100) {
      nodes {
        iid
        title
        project { fullPath }
        conflicts
        pipelines(first: 1) { nodes { status } }
        discussions(first: 100) { nodes { notes { nodes { resolvable resolved } } } }
      }
    }
  }
}`;

/** OpenHands' task type of a merge request: conflicts, then a failed pipeline, then an unresolved thread; else none. */
function mergeRequestTask(mr: any): SuggestedTask | null {
  let type: SuggestedTask['task_type'] | null = null;
  if (mr?.conflicts) type = 'MERGE_CONFLICTS';
  else if (mr?.pipelines?.nodes?.[0]?.status === 'FAILED') type = 'FAILING_CHECKS';
  else if ((mr?.discussions?.nodes ?? []).some((d: any) => (d?.notes?.nodes ?? []).some((n: any) => n?.resolvable && !n?.resolved))) type = 'UNRESOLVED_COMMENTS';
  if (!type) return null;
  return { git_provider: 'gitlab', task_type: type, repo: String(mr?.project?.fullPath ?? ''), issue_number: Number(mr?.iid), title: String(mr?.title ?? '') };
}

function gitlabSearch(client: GitLabClient): ProviderSearch {
  const hostName = new URL(client.host).host;
  return {
    // GitLab has no installations: no `installations` (OpenHands: 400).
    async repositories(q, page, limit) {
      const size = Math.min(limit + 1, PER_PAGE_MAX);
      const offset = (page - 1) * limit;
      if (q.query) {
        // A project URL on this host (or gitlab.com's, as OpenHands checks) names one project, public or visible to the token.
        if (/^https?:\/\//.test(q.query) && (q.query.includes(hostName) || q.query.includes('gitlab.com'))) {
          const path = projectPathOfUrl(q.query);
          const r = path ? await client.get(`/projects/${projectId(path)}`) : null;
          return pageOf(r?.body ? [repositoryOf(r.body, null)].slice(offset) : [], page, limit);
        }
        const params = { ...projectOrder(q.sort_order), membership: true, search: q.query, search_namespaces: true };
        const rows = await window((p, n) => client.page('/projects', params, p, n), offset, limit + 1, size);
        return pageOf(
          rows.map((r) => repositoryOf(r.item, r.link)),
          page,
          limit,
        );
      }
      if (q.sort_order) throw new BadRequest('sort_order is not supported when listing user repositories. It will be supported after API refactoring.');
      const params = { order_by: 'last_activity_at', sort: 'desc', membership: true };
      const rows = await window((p, n) => client.page('/projects', params, p, n), offset, limit + 1, size);
      return pageOf(
        rows.map((r) => repositoryOf(r.item, r.link)),
        page,
        limit,
      );
    },

    // GitLab answers 404 alike for a missing project and one the token cannot see: no branches, as OpenHands answers.
    async branches({ path }, query, page, limit) {
      const url = `/projects/${projectId(path)}/repository/branches`;
      // The host searches (a name containing the query, any case; ^ and $ anchor it, as GitLab documents).
      const params = query ? { search: query } : {};
      const rows = await window((p, n) => client.page(url, params, p, n), (page - 1) * limit, limit + 1, Math.min(limit + 1, PER_PAGE_MAX));
      return pageOf(
        rows.map((r) => branchOf(r.item)),
        page,
        limit,
      );
    },

    async suggestedTasks() {
      const me = await client.get('/user');
      const username = me.body?.username;
      if (typeof username !== 'string') throw new Forbidden('Invalid gitlab token');
      const data = await client.graphql(MERGE_REQUESTS);
      const tasks: SuggestedTask[] = [];
      for (const mr of data?.currentUser?.authoredMergeRequests?.nodes ?? []) {
        const task = mergeRequestTask(mr);
        if (task) tasks.push(task);
      }
      const params = { assignee_username: username, state: 'opened', scope: 'assigned_to_me' };
      const issues = await window((p, n) => client.page('/issues', params, p, n), 0, MAX_READ, PER_PAGE_MAX);
      for (const { item } of issues) {
        tasks.push({ git_provider: 'gitlab', task_type: 'OPEN_ISSUE', repo: String(item?.references?.full ?? '').split('#')[0]!.trim(), issue_number: Number(item?.iid), title: String(item?.title ?? '') });
      }
      return tasks;
    },
  };
}

export const gitlab: GitProviderDriver = {
  title: 'GitLab',
  open: (d, base, token) => gitlabSearch(new GitLabClient(d, base, token)),
  // As OpenHands checks a GitLab token: the host must answer GET /user with it.
  async verifyToken(d, base, token) {
    const me = await new GitLabClient(d, base, token).get('/user').catch((err: unknown) => {
      if (err instanceof Forbidden) return null;
      throw err;
    });
    return me?.status === 200 && typeof me.body?.username === 'string' ? me.body.username : null;
  },
};
