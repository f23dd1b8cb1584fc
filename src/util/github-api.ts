// Calls to GitHub's REST and GraphQL APIs, shared by the app API's github searches
// (facade/git-providers/github.ts) and the agent server's repository search: where the API of a
// configured GitHub host is, one request with a token, and what GitHub's answers mean (its Link
// header, its two kinds of rate limit). A token goes only to the API of the host it was given for.
import { BadGateway, GatewayTimeout } from '../api/errors.ts';
import { fetchFailure } from './fetch-failure.ts';

/** GitHub's REST API version these calls are written against (sent as X-GitHub-Api-Version). */
export const GITHUB_API_VERSION = '2022-11-28';

/**
 * The REST and GraphQL endpoints of a GitHub host (AGENTYARD_GIT_HOSTS' github, default
 * https://github.com): github.com's are api.github.com's; any other host is a GitHub Enterprise
 * Server, whose API is under /api/v3 and /api/graphql of the host itself (its scheme kept).
 */
export function githubApiUrls(host: string): { rest: string; graphql: string } {
  const u = new URL(host);
  const origin = `${u.protocol}//${u.host}`;
  if (u.hostname === 'github.com' || u.hostname === 'www.github.com') return { rest: 'https://api.github.com', graphql: 'https://api.github.com/graphql' };
  return { rest: `${origin}/api/v3`, graphql: `${origin}/api/graphql` };
}

export interface GitHubAnswer {
  status: number;
  body: any;
  /** The Link header (rel="next" and friends), when GitHub sent one. */
  link: string | null;
  headers: Headers;
}

/** The URL of a Link header's rel="next", if any. */
export function nextLink(link: string | null): string | null {
  for (const part of (link ?? '').split(',')) {
    const m = /<([^>]+)>\s*;\s*rel="([^"]+)"/.exec(part);
    if (m && m[2] === 'next') return m[1]!;
  }
  return null;
}

/**
 * Whether an answer is one of GitHub's rate limits, and for how long to wait (seconds): a 403 or
 * 429 with x-ratelimit-remaining 0 (primary: until x-ratelimit-reset), or with retry-after or a
 * message naming a secondary rate limit (GitHub: wait retry-after, else at least a minute).
 */
export function rateLimitWait(a: GitHubAnswer, nowMs: number): number | undefined {
  if (a.status !== 403 && a.status !== 429) return undefined;
  const retryAfter = Number(a.headers.get('retry-after'));
  if (a.headers.get('retry-after') !== null && Number.isFinite(retryAfter)) return Math.max(1, Math.ceil(retryAfter));
  if (a.headers.get('x-ratelimit-remaining') === '0') {
    const reset = Number(a.headers.get('x-ratelimit-reset'));
    return Number.isFinite(reset) ? Math.max(1, Math.ceil(reset - nowMs / 1000)) : 60;
  }
  if (a.status === 429 || /rate limit/i.test(String(a.body?.message ?? ''))) return 60;
  return undefined;
}

/**
 * One request to a GitHub API with a token. Any HTTP answer is returned (the caller decides what
 * a status means there); a host that cannot be reached is a BadGateway naming the host, never the
 * token (GatewayTimeout when it does not answer in time). Redirects are refused: a token must not follow one to another host.
 */
export async function githubRequest(url: URL, token: string, init: { method?: 'GET' | 'POST'; body?: unknown; timeoutMs?: number } = {}): Promise<GitHubAnswer> {
  let res: Response;
  try {
    res = await fetch(url, {
      method: init.method ?? 'GET',
      headers: {
        authorization: `Bearer ${token}`,
        accept: 'application/vnd.github+json',
        'x-github-api-version': GITHUB_API_VERSION,
        ...(init.body !== undefined ? { 'content-type': 'application/json' } : {}),
      },
      body: init.body !== undefined ? JSON.stringify(init.body) : undefined,
      redirect: 'error',
      signal: AbortSignal.timeout(init.timeoutMs ?? 20_000),
    });
  } catch (err) {
    if ((err as Error).name === 'TimeoutError') throw new GatewayTimeout(`The GitHub API at ${url.origin} did not answer in time`);
    throw new BadGateway(`The GitHub API at ${url.origin} could not be reached (${fetchFailure(err)})`);
  }
  const text = await res.text();
  let body: unknown = null;
  try {
    body = text ? JSON.parse(text) : null;
  } catch {
    body = null;
  }
  return { status: res.status, body, link: res.headers.get('link'), headers: res.headers };
}
