// The agent server's repository discovery for GitHub (GET /api/git/repositories/search, OpenHands
// 1.58's git_provider_service): the repositories a stored GitHub token reaches, read from GET
// /user/repos (100 a page, newest push first, owned, collaborated and organization repositories),
// optionally kept to those whose full name contains `query` (any case), `limit` at a time.
//
// Page ids are 1.58's, so a client can pass either server's back: "<github page>" or "<github
// page>:<items of that page already given>" (counted after the `query` filter). Errors are 1.58's
// (GitHub's 401 and 403 passed on, its 5xx a 502, anything else a 400, all "GitHub repository search
// failed"; a timeout 504; a malformed page id 400) except one: a rate limit (GitHub's 403/429 with
// x-ratelimit-remaining 0 or retry-after) is a 429 with Retry-After, where 1.58 answers 403 or 400
// and a client cannot tell "wait" from "this token may not".
//
// Where the API is: 1.58 always calls https://api.github.com. Here it is the API of the github host
// in AGENTYARD_GIT_HOSTS (or AGENTYARD_GIT_BASE_URL), as for the application's searches and the
// clone: api.github.com for github.com, /api/v3 of a GitHub Enterprise Server (tests: a stand-in).
import type { GitProviderRepositoryPage } from '../../api/agent-server/runtime.ts';
import { BadGateway, BadRequest, Forbidden, GatewayTimeout, TooManyRequests, Unauthorized } from '../../api/errors.ts';
import { githubApiUrls, githubRequest, nextLink, rateLimitWait } from '../../util/github-api.ts';

/** GitHub's largest page, which 1.58 asks for. */
const PER_PAGE = 100;
/** 1.58's request timeout. */
const TIMEOUT_MS = 15_000;
const FAILED = 'GitHub repository search failed';

type Item = GitProviderRepositoryPage['items'][number];

/** 1.58's page id: "<page>" or "<page>:<offset>", page ≥ 1, offset ≥ 0. */
function parsePageId(pageId: string | undefined): { page: number; offset: number } {
  if (pageId === undefined) return { page: 1, offset: 0 };
  const m = /^\s*([+-]?\d+)\s*(?::\s*([+-]?\d*)\s*)?$/.exec(pageId);
  const page = m ? Number(m[1]) : NaN;
  const offset = m && m[2] ? Number(m[2]) : 0;
  if (!Number.isSafeInteger(page) || !Number.isSafeInteger(offset) || page < 1 || offset < 0) throw new BadRequest('Invalid repository page_id');
  return { page, offset };
}

function itemOf(repo: any): Item {
  return {
    id: String(repo?.id ?? ''),
    full_name: String(repo?.full_name ?? ''),
    git_provider: 'github',
    is_public: !repo?.private,
    stargazers_count: Number.isInteger(repo?.stargazers_count) ? repo.stargazers_count : null,
    pushed_at: typeof repo?.pushed_at === 'string' ? repo.pushed_at : null,
    main_branch: typeof repo?.default_branch === 'string' ? repo.default_branch : null,
  };
}

/** The `page` of a Link header's rel="next" URL (1.58's next page id), if any. */
function nextPage(link: string | null): string | null {
  const next = nextLink(link);
  return next ? (URL.parse(next)?.searchParams.get('page') ?? null) : null;
}

export interface GitHubSearchOptions {
  /** The github host (AGENTYARD_GIT_HOSTS' github); its API is where the token goes. */
  host: string;
  token: string;
  query?: string;
  limit: number;
  pageId?: string;
  /** Milliseconds since the epoch, to turn GitHub's x-ratelimit-reset into a wait. */
  now(): number;
}

export async function searchGitHubRepositories(o: GitHubSearchOptions): Promise<GitProviderRepositoryPage> {
  let { page, offset } = parsePageId(o.pageId);
  const wanted = o.query ? o.query.toLowerCase() : undefined;
  const api = githubApiUrls(o.host).rest;
  const items: Item[] = [];
  let next: string | null = null;
  while (items.length < o.limit) {
    const url = new URL(`${api}/user/repos`);
    url.search = new URLSearchParams({ per_page: String(PER_PAGE), page: String(page), sort: 'pushed', affiliation: 'owner,collaborator,organization_member' }).toString();
    const a = await githubRequest(url, o.token, { timeoutMs: TIMEOUT_MS }).catch((err: unknown) => {
      throw err instanceof GatewayTimeout ? new GatewayTimeout('GitHub repository search timed out') : new BadGateway(FAILED);
    });
    if (a.status !== 200) {
      const wait = rateLimitWait(a, o.now());
      if (wait !== undefined) throw new TooManyRequests(`GitHub's rate limit for this token is exhausted; retry in ${wait} s`, wait);
      if (a.status === 401) throw new Unauthorized(FAILED);
      if (a.status === 403) throw new Forbidden(FAILED);
      throw a.status >= 500 ? new BadGateway(FAILED) : new BadRequest(FAILED);
    }
    let rows = (Array.isArray(a.body) ? a.body : []).map(itemOf);
    if (wanted) rows = rows.filter((r) => r.full_name.toLowerCase().includes(wanted));
    rows = rows.slice(offset);
    const room = o.limit - items.length;
    items.push(...rows.slice(0, room));
    next = nextPage(a.link);
    // More on this page than room: the next page id points inside it.
    if (rows.length > room) return { items, next_page_id: `${page}:${offset + room}`, missing_token: false };
    // Without a query one GitHub page answers; with one, pages are read until `limit` matches.
    if (!wanted || next === null) break;
    ({ page, offset } = parsePageId(next));
  }
  return { items, next_page_id: next, missing_token: false };
}
