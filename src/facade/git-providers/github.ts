// The `github` provider: github.com (through api.github.com) or a GitHub Enterprise Server (its
// /api/v3 and /api/graphql), whichever AGENTYARD_GIT_HOSTS' github names, read with the caller's
// GITHUB_TOKEN stored secret: the token that clones their repositories (controller/conversation/
// repository.ts), sent to that host's API only.
//
// What is asked follows openhands-ai 1.11 (integrations/github/service): the caller's repositories
// (GET /user/repos sorted by push, or an App installation's), a search (GET /search/repositories
// with 1.11's qualifiers: the caller's own repositories and their organizations' by name, `org/x`
// within an organization, a repository URL among public ones), branches (REST list; a name search
// through GraphQL's `refs(query:)`), App installations (GET /user/installations) and suggested
// tasks (GraphQL: the caller's open pull requests with conflicts, failing checks or review
// comments, then the open issues assigned to them). Differences, each where 1.11 loses or hides
// something: pages are exact (1.11 asks for limit+1 items per page while numbering pages by
// `limit`, drops one item a page, and answers page 1 again for page 2 of a search); a search's
// duplicates are dropped (1.11's dedupe never matches); errors are answered (1.11 logs a failed
// suggested-task query or branch search and answers an empty list, which reads as "none");
// pushed_at is filled (1.11 leaves it null for GitHub).
import { BadGateway, BadRequest, Forbidden, Invalid, NotFound, TooManyRequests } from '../../api/errors.ts';
import type { GitBranch, GitRepository, SuggestedTask } from '../../api/app/git.ts';
import { githubApiUrls, githubRequest, nextLink, rateLimitWait, type GitHubAnswer } from '../../util/github-api.ts';
import type { FacadeDeps } from '../deps.ts';
import { pageOf, window } from './pages.ts';
import type { GitProviderDriver, ProviderSearch } from './provider.ts';

/** The most branches a branch-name search walks through (as forgejo's MAX_SEARCHED_BRANCHES). */
const MAX_SEARCHED_BRANCHES = 10_000;
/** GitHub serves at most 100 items a page (REST per_page, GraphQL first). */
const GITHUB_MAX_PAGE = 100;

// The GraphQL documents (GitHub's schema: User.pullRequests, User.issues, Repository.refs).
const OPEN_PULL_REQUESTS = `query OpenPullRequests($login: String!) {
  user(login: $login) {
    pullRequests(first: 50, states: [OPEN], orderBy: {field: UPDATED_AT, direction: DESC}) {
      nodes {
        number title mergeable
        repository { nameWithOwner }
        commits(last: 1) { nodes { commit { statusCheckRollup { state } } } }
        reviews(first: 50, states: [CHANGES_REQUESTED, COMMENTED]) { nodes { state } }
      }
    }
  }
}`;
const ASSIGNED_ISSUES = `query AssignedIssues($login: String!) {
  user(login: $login) {
    issues(first: 50, states: [OPEN], filterBy: {assignee: $login}, orderBy: {field: UPDATED_AT, direction: DESC}) {
      nodes { number title repository { nameWithOwner } }
    }
  }
}`;
const BRANCHES_NAMED = `query BranchesNamed($owner: String!, $name: String!, $query: String!, $first: Int!, $after: String) {
  repository(owner: $owner, name: $name) {
    refs(refPrefix: "refs/heads/", query: $query, first: $first, after: $after, orderBy: {field: ALPHABETICAL, direction: ASC}) {
      nodes { name target { __typename ... on Commit { oid committedDate } } }
      pageInfo { hasNextPage endCursor }
    }
  }
}`;

/** Calls to one GitHub host's API with one token; GitHub's refusals become this API's errors. Never carries the token into an error. */
export class GitHubClient {
  private readonly d: FacadeDeps;
  private readonly token: string;
  readonly host: string;
  readonly urls: { rest: string; graphql: string };
  constructor(d: FacadeDeps, host: string, token: string) {
    this.d = d;
    this.host = host;
    this.token = token;
    this.urls = githubApiUrls(host);
  }

  isRateLimit(a: GitHubAnswer): boolean {
    return rateLimitWait(a, this.d.clock.now().toMillis()) !== undefined;
  }

  /** The error for an answer that is not what was asked for. */
  refused(a: GitHubAnswer, what: string): never {
    const wait = rateLimitWait(a, this.d.clock.now().toMillis());
    if (wait !== undefined) throw new TooManyRequests(`GitHub's rate limit for this token is exhausted (${String(a.body?.message ?? a.status)}); retry in ${wait} s`, wait);
    // 401 is GitHub's "Bad credentials"; answered 403 as OpenHands does (its web app logs out on a 401).
    if (a.status === 401) throw new Forbidden('Invalid github token');
    if (a.status === 403) throw new Forbidden(`GitHub refused this token access to ${what}: ${String(a.body?.message ?? 'forbidden')}`);
    this.d.log?.warn({ host: this.urls.rest, what, status: a.status }, 'github API error');
    throw new BadGateway(`GitHub (${this.urls.rest}) answered ${a.status} to ${what}`);
  }

  /** GET a REST path; 200 and the `pass` statuses come back to the caller (each means something there), other answers throw. */
  async get(path: string, params: Record<string, string | number> = {}, pass: number[] = [404, 422]): Promise<GitHubAnswer> {
    const url = new URL(`${this.urls.rest}${path}`);
    for (const [k, v] of Object.entries(params)) url.searchParams.set(k, String(v));
    const a = await githubRequest(url, this.token);
    if (a.status === 200 || pass.includes(a.status)) return a;
    return this.refused(a, path);
  }

  /** A GraphQL query: its data, and its errors (GitHub answers 200 with `errors` for a missing user or repository). */
  async graphql(query: string, variables: Record<string, unknown>): Promise<{ data: any; errors: { type?: string; message?: string }[] }> {
    const a = await githubRequest(new URL(this.urls.graphql), this.token, { method: 'POST', body: { query, variables } });
    if (a.status !== 200) return this.refused(a, 'GraphQL');
    const errors = Array.isArray(a.body?.errors) ? (a.body.errors as { type?: string; message?: string }[]) : [];
    if (errors.some((e) => e.type === 'RATE_LIMITED')) {
      const wait = rateLimitWait({ ...a, status: 429 }, this.d.clock.now().toMillis()) ?? 60;
      throw new TooManyRequests(`GitHub's GraphQL rate limit for this token is exhausted; retry in ${wait} s`, wait);
    }
    const fatal = errors.filter((e) => e.type !== 'NOT_FOUND');
    if (fatal.length || (errors.length === 0 && !a.body?.data)) {
      throw new BadGateway(`GitHub's GraphQL API refused a query: ${fatal.map((e) => e.message).join('; ') || 'no data'}`);
    }
    return { data: a.body?.data ?? null, errors };
  }

  /** Every page of a REST list, following rel="next" up to `max` items. */
  async all(path: string, pick: (body: any) => any[], max: number): Promise<any[]> {
    const out: any[] = [];
    for (let page = 1; out.length < max; page++) {
      const a = await this.get(path, { per_page: GITHUB_MAX_PAGE, page });
      if (a.status !== 200) return this.refused(a, path);
      out.push(...pick(a.body));
      if (!nextLink(a.link)) break;
    }
    return out.slice(0, max);
  }

  /** The token's user (GET /user). */
  async login(): Promise<string> {
    const a = await this.get('/user');
    if (a.status !== 200 || typeof a.body?.login !== 'string') return this.refused(a, '/user');
    return a.body.login;
  }
}

/** OpenHands' GitHubReposMixin._parse_repository, with pushed_at. */
function repositoryOf(repo: any, link: string | null): GitRepository {
  return {
    id: String(repo?.id ?? ''),
    full_name: String(repo?.full_name ?? ''),
    git_provider: 'github',
    is_public: repo?.private === false,
    stargazers_count: typeof repo?.stargazers_count === 'number' ? repo.stargazers_count : null,
    link_header: link,
    pushed_at: typeof repo?.pushed_at === 'string' ? repo.pushed_at : null,
    owner_type: repo?.owner?.type === 'Organization' ? 'organization' : 'user',
    main_branch: typeof repo?.default_branch === 'string' ? repo.default_branch : null,
  };
}

function branchOf(b: any): GitBranch {
  return { name: String(b?.name ?? ''), commit_sha: String(b?.commit?.sha ?? ''), protected: b?.protected === true, last_push_date: b?.commit?.commit?.committer?.date ?? null };
}

/** OpenHands' _fuzzy_match_org_name: either name contains the other, ignoring case, '-', '_' and spaces. */
function orgNameMatches(query: string, org: string): boolean {
  const norm = (s: string) => s.toLowerCase().replace(/[-_ ]/g, '');
  const [q, o] = [norm(query), norm(org)];
  return q.includes(o) || o.includes(q);
}

interface SearchPart {
  q: string;
  sort: string;
  order: string;
  /** At most this many items of this search (the top repositories of a matching organization: 2). */
  max?: number;
}

function githubSearch(client: GitHubClient): ProviderSearch {
  /** The searches 1.11 makes for a query, in its order. */
  async function searchParts(query: string, sort: string, order: string): Promise<SearchPart[]> {
    const hostname = new URL(client.host).hostname;
    if (/^https?:\/\//.test(query) && (query.includes(hostname) || query.includes('github.com'))) {
      // A repository URL: that repository among public ones (https://host/owner/repo).
      const [, , , owner, repo] = query.split('/');
      if (!owner || !repo) return [];
      return [{ q: `in:name ${owner}/${repo} is:public`, sort, order }];
    }
    const slash = query.indexOf('/');
    if (slash >= 0) return [{ q: `org:${query.slice(0, slash)} in:name ${query.slice(slash + 1)}`, sort, order }];
    const login = await client.login();
    const orgs = (await client.all('/user/orgs', (b) => (Array.isArray(b) ? b : []), 1000)).map((o) => String(o?.login ?? '')).filter(Boolean);
    return [
      { q: `in:name ${query} user:${login}`, sort, order },
      ...orgs.map((org) => ({ q: `${query} org:${org}`, sort, order })),
      ...orgs.filter((org) => orgNameMatches(query, org)).map((org) => ({ q: `org:${org}`, sort: 'stars', order, max: 2 })),
    ];
  }

  return {
    async installations() {
      const ids: string[] = [];
      for (let page = 1; ; page++) {
        const a = await client.get('/user/installations', { per_page: GITHUB_MAX_PAGE, page }, [403]);
        // GitHub answers 403 to a token not authorized to a GitHub App (a personal access token): it has none.
        if (a.status === 403) return client.isRateLimit(a) ? client.refused(a, '/user/installations') : [];
        if (a.status !== 200) return client.refused(a, '/user/installations');
        for (const i of Array.isArray(a.body?.installations) ? a.body.installations : []) if (i?.id !== undefined) ids.push(String(i.id));
        if (!nextLink(a.link)) return ids;
      }
    },

    async repositories(q, page, limit) {
      const need = page * limit + 1;
      if (q.query) {
        const [sort, order] = q.sort_order ? [q.sort_order.slice(0, q.sort_order.lastIndexOf('-')), q.sort_order.slice(q.sort_order.lastIndexOf('-') + 1)] : ['stars', 'desc'];
        const seen = new Set<string>();
        const found: GitRepository[] = [];
        for (const part of await searchParts(q.query, sort, order)) {
          const count = Math.min(need, part.max ?? need);
          const rows = await window(
            async (p, n) => {
              const a = await client.get('/search/repositories', { q: part.q, sort: part.sort, order: part.order, per_page: n, page: p });
              if (a.status === 422) throw new Invalid([{ loc: ['query', 'query'], msg: `GitHub refused the search: ${String(a.body?.message ?? 'Validation Failed')}`, type: 'value_error' }]);
              if (a.status !== 200) throw new BadGateway(`GitHub answered ${a.status} to a repository search`);
              return { items: Array.isArray(a.body?.items) ? a.body.items : [], link: null };
            },
            0,
            count,
            Math.min(GITHUB_MAX_PAGE, count),
          );
          for (const r of rows) {
            const repo = repositoryOf(r.item, null);
            if (seen.has(repo.full_name)) continue;
            seen.add(repo.full_name);
            found.push(repo);
          }
          if (found.length >= need) break;
        }
        return pageOf(found.slice((page - 1) * limit, need), page, limit);
      }
      if (q.sort_order) throw new BadRequest('sort_order is not supported when listing user repositories. It will be supported after API refactoring.');
      const installation = q.installation_id;
      if (installation !== undefined && !/^[0-9]{1,20}$/.test(installation)) {
        throw new Invalid([{ loc: ['query', 'installation_id'], msg: 'A GitHub App installation id is a number', type: 'value_error' }]);
      }
      const path = installation ? `/user/installations/${installation}/repositories` : '/user/repos';
      const rows = await window(
        async (p, n) => {
          // In 1.11's order (page, per_page, sort): the Link header GitHub echoes back is then the same.
          const a = await client.get(path, installation ? { page: p, per_page: n } : { page: p, per_page: n, sort: 'pushed' });
          if (a.status === 404) throw new NotFound(`No GitHub App installation ${installation} is reachable with this token`);
          if (a.status !== 200) throw new BadGateway(`GitHub answered ${a.status} to ${path}`);
          // No Link header (a single page) is passed on as 1.11 passes it: an empty string.
          return { items: installation ? (Array.isArray(a.body?.repositories) ? a.body.repositories : []) : Array.isArray(a.body) ? a.body : [], link: a.link ?? '' };
        },
        (page - 1) * limit,
        limit + 1,
        Math.min(limit + 1, GITHUB_MAX_PAGE),
      );
      return pageOf(
        rows.map((r) => repositoryOf(r.item, r.link)),
        page,
        limit,
      );
    },

    async branches({ owner, repo }, query, page, limit) {
      const need = page * limit + 1;
      if (!query) {
        const path = `/repos/${encodeURIComponent(owner)}/${encodeURIComponent(repo)}/branches`;
        const rows = await window(
          async (p, n) => {
            const a = await client.get(path, { per_page: n, page: p });
            // GitHub answers 404 alike for a missing repository and one the token cannot see: no branches.
            if (a.status === 404) return { items: [], link: null };
            if (a.status !== 200) throw new BadGateway(`GitHub answered ${a.status} to ${path}`);
            return { items: Array.isArray(a.body) ? a.body : [], link: a.link };
          },
          (page - 1) * limit,
          limit + 1,
          Math.min(limit + 1, GITHUB_MAX_PAGE),
        );
        return pageOf(
          rows.map((r) => branchOf(r.item)),
          page,
          limit,
        );
      }
      // A name search walks `refs(query:)` by cursor up to the page asked for. Its answer carries
      // no protection (as 1.11's: reading branch protection rules needs admin rights): false.
      const found: GitBranch[] = [];
      let after: string | null = null;
      while (found.length < Math.min(need, MAX_SEARCHED_BRANCHES)) {
        const { data } = await client.graphql(BRANCHES_NAMED, { owner, name: repo, query, first: Math.min(GITHUB_MAX_PAGE, need - found.length), after });
        const refs = data?.repository?.refs;
        if (!refs) break;
        for (const n of Array.isArray(refs.nodes) ? refs.nodes : []) {
          const commit = n?.target?.__typename === 'Commit' ? n.target : null;
          found.push({ name: String(n?.name ?? ''), commit_sha: String(commit?.oid ?? ''), protected: false, last_push_date: commit?.committedDate ?? null });
        }
        if (!refs.pageInfo?.hasNextPage || !refs.pageInfo?.endCursor) break;
        after = refs.pageInfo.endCursor;
      }
      return pageOf(found.slice((page - 1) * limit, need), page, limit);
    },

    async suggestedTasks() {
      const login = await client.login();
      const [prs, issues] = await Promise.all([client.graphql(OPEN_PULL_REQUESTS, { login }), client.graphql(ASSIGNED_ISSUES, { login })]);
      const tasks: SuggestedTask[] = [];
      for (const pr of prs.data?.user?.pullRequests?.nodes ?? []) {
        const rollup = pr?.commits?.nodes?.[0]?.commit?.statusCheckRollup;
        const type: SuggestedTask['task_type'] | undefined =
          pr?.mergeable === 'CONFLICTING'
            ? 'MERGE_CONFLICTS'
            : rollup?.state === 'FAILURE'
              ? 'FAILING_CHECKS'
              : (pr?.reviews?.nodes ?? []).some((r: any) => r?.state === 'CHANGES_REQUESTED' || r?.state === 'COMMENTED')
                ? 'UNRESOLVED_COMMENTS'
                : undefined;
        // An open pull request with nothing to do is not a task (as 1.11).
        if (type) tasks.push({ git_provider: 'github', task_type: type, repo: String(pr.repository?.nameWithOwner ?? ''), issue_number: Number(pr.number), title: String(pr.title ?? '') });
      }
      for (const issue of issues.data?.user?.issues?.nodes ?? []) {
        tasks.push({ git_provider: 'github', task_type: 'OPEN_ISSUE', repo: String(issue?.repository?.nameWithOwner ?? ''), issue_number: Number(issue?.number), title: String(issue?.title ?? '') });
      }
      return tasks;
    },
  };
}

export const github: GitProviderDriver = {
  title: 'GitHub',
  open: (d, base, token) => githubSearch(new GitHubClient(d, base, token)),
  // 1.11 asks the API root with the token; GET /user does that check and names the account.
  async verifyToken(d, base, token) {
    const client = new GitHubClient(d, base, token);
    try {
      return await client.login();
    } catch (err) {
      if (err instanceof Forbidden) return null;
      throw err;
    }
  },
};
