// A stand-in for GitHub's API over real HTTP (or HTTPS with a given certificate), the way the
// scripted model plays an OpenAI-compatible provider: GitHub's hosted API cannot run here, so this
// answers the calls agentyard (and OpenHands) make as GitHub's REST and GraphQL documentation says
// it answers them: paged lists with per_page/page and a Link header (first/prev/next/last), search
// results as {total_count, incomplete_results, items}, installations as {total_count,
// installations}, error bodies {message, documentation_url, status}, 401 "Bad credentials", 404
// for a repository the token cannot see, rate limits as 403/429 with x-ratelimit-* or retry-after,
// and GraphQL's {data, errors} (NOT_FOUND, RATE_LIMITED) with HTTP 200. It serves both layouts: the
// github.com one (REST at /, GraphQL at /graphql) and GitHub Enterprise Server's (/api/v3,
// /api/graphql). What it holds is scripted per test: users and their tokens, repositories,
// branches, organizations, App installations, pull requests and issues. For a client that can only
// call api.github.com (OpenHands 1.58's agent server), it is also an HTTPS proxy (`connectTls`):
// a CONNECT is answered, and the tunnel's TLS ended here with the given certificate (trusted by
// that client through SSL_CERT_FILE), so the client talks to this stand-in as api.github.com.
import { createServer as createHttpServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import { TLSSocket } from 'node:tls';
import { json, readBody } from '../scripted-llm/server.ts';

export interface StandInUser {
  login: string;
  id: number;
  token: string;
  /** 'app': a GitHub App user-to-server token (may list installations); 'pat': a personal access token (403 there). */
  tokenKind?: 'app' | 'pat';
  orgs?: string[];
  /** GitHub App installations the user can reach, each with the repositories (full names) it was given. */
  installations?: { id: number; account: string; accountType: 'User' | 'Organization'; repositories: string[] }[];
}

export interface StandInRepo {
  owner: string;
  ownerType?: 'User' | 'Organization';
  name: string;
  private?: boolean;
  stars?: number;
  /** ISO 8601 without milliseconds, as GitHub writes it. */
  pushedAt?: string;
  defaultBranch?: string;
  /** Logins with access besides the owner and the members of an owning organization. */
  collaborators?: string[];
  branches?: { name: string; sha: string; protected?: boolean; committedDate?: string }[];
}

export interface StandInPullRequest {
  repo: string;
  number: number;
  title: string;
  author: string;
  state?: 'OPEN' | 'CLOSED' | 'MERGED';
  mergeable?: 'MERGEABLE' | 'CONFLICTING' | 'UNKNOWN';
  checks?: 'SUCCESS' | 'FAILURE' | 'PENDING' | 'ERROR' | null;
  reviews?: ('APPROVED' | 'CHANGES_REQUESTED' | 'COMMENTED')[];
  updatedAt?: string;
}

export interface StandInIssue {
  repo: string;
  number: number;
  title: string;
  assignees: string[];
  state?: 'OPEN' | 'CLOSED';
  updatedAt?: string;
}

/** A scripted failure for the next matching request(s). */
export type StandInFault =
  | { kind: 'primary-rate-limit'; status?: 403 | 429; /** x-ratelimit-reset, epoch seconds (default: an hour from now). */ resetAt?: number }
  | { kind: 'secondary-rate-limit'; status?: 403 | 429; retryAfter?: number }
  | { kind: 'server-error'; status?: number }
  | { kind: 'graphql-rate-limit' };

export interface GitHubRequest {
  method: string;
  /** Path without the Enterprise prefix (/api/v3) and without the query. */
  path: string;
  query: URLSearchParams;
  authorization: string | undefined;
  host: string | undefined;
  graphql?: { query: string; variables: Record<string, unknown> };
}

export interface GitHubStandIn {
  /** Base URL of the server (what AGENTYARD_GIT_HOSTS' github names); REST is here and under /api/v3. */
  url: string;
  requests: GitHubRequest[];
  users: StandInUser[];
  repos: StandInRepo[];
  pulls: StandInPullRequest[];
  issues: StandInIssue[];
  /** The next requests whose path starts with `pathPrefix` (any when absent) fail this way, `times` times (1). */
  fail(fault: StandInFault, opts?: { pathPrefix?: string; times?: number }): void;
  close(): Promise<void>;
}

const DOCS = 'https://docs.github.com/rest';
const RESET_IN_SECONDS = 3600;

function fullName(r: StandInRepo): string {
  return `${r.owner}/${r.name}`;
}

function canSee(user: StandInUser, r: StandInRepo): boolean {
  return !r.private || r.owner === user.login || (user.orgs ?? []).includes(r.owner) || (r.collaborators ?? []).includes(user.login);
}

/** A repository as GitHub's REST API writes one (the fields clients read, and a few more). */
function repoJson(r: StandInRepo, base: string): Record<string, unknown> {
  return {
    id: repoId(r),
    node_id: Buffer.from(`R_${fullName(r)}`).toString('base64url'),
    name: r.name,
    full_name: fullName(r),
    private: !!r.private,
    visibility: r.private ? 'private' : 'public',
    owner: { login: r.owner, id: ownerId(r.owner), type: r.ownerType ?? 'User' },
    html_url: `${base}/${fullName(r)}`,
    stargazers_count: r.stars ?? 0,
    watchers_count: r.stars ?? 0,
    forks_count: 0,
    default_branch: r.defaultBranch ?? 'main',
    pushed_at: r.pushedAt ?? '2026-01-01T00:00:00Z',
    updated_at: r.pushedAt ?? '2026-01-01T00:00:00Z',
    created_at: '2025-01-01T00:00:00Z',
  };
}

function repoId(r: StandInRepo): number {
  let h = 7;
  for (const c of fullName(r)) h = (h * 31 + c.charCodeAt(0)) % 1_000_000_007;
  return h;
}

function ownerId(login: string): number {
  let h = 3;
  for (const c of login) h = (h * 17 + c.charCodeAt(0)) % 100_000_007;
  return h;
}

/** GitHub's page parameters: per_page 1..100 (default 30), page from 1. */
function paging(q: URLSearchParams): { page: number; perPage: number } {
  const perPage = Math.min(100, Math.max(1, Number(q.get('per_page') ?? 30) || 30));
  const page = Math.max(1, Number(q.get('page') ?? 1) || 1);
  return { page, perPage };
}

/** GitHub's Link header for page `page` of `total` items: first/prev when not on page 1, next/last when not on the last. */
function linkHeader(requestUrl: URL, page: number, perPage: number, total: number): string | undefined {
  const last = Math.max(1, Math.ceil(total / perPage));
  const at = (p: number) => {
    const u = new URL(requestUrl);
    u.searchParams.set('per_page', String(perPage));
    u.searchParams.set('page', String(p));
    return `<${u}>`;
  };
  const parts: string[] = [];
  if (page > 1) parts.push(`${at(page - 1)}; rel="prev"`);
  if (page < last) parts.push(`${at(page + 1)}; rel="next"`, `${at(last)}; rel="last"`);
  if (page > 1) parts.push(`${at(1)}; rel="first"`);
  return parts.length ? parts.join(', ') : undefined;
}

export async function startGitHubStandIn(opts: { tls?: { key: string; cert: string }; connectTls?: { key: string; cert: string } } = {}): Promise<GitHubStandIn> {
  const requests: GitHubRequest[] = [];
  const users: StandInUser[] = [];
  const repos: StandInRepo[] = [];
  const pulls: StandInPullRequest[] = [];
  const issues: StandInIssue[] = [];
  const faults: { fault: StandInFault; pathPrefix?: string; times: number }[] = [];
  let base = '';

  const rateHeaders = (resource: string, remaining = 4999, resetAt?: number): Record<string, string> => ({
    'x-ratelimit-limit': '5000',
    'x-ratelimit-remaining': String(remaining),
    'x-ratelimit-reset': String(resetAt ?? Math.floor(Date.now() / 1000) + RESET_IN_SECONDS),
    'x-ratelimit-used': String(5000 - remaining),
    'x-ratelimit-resource': resource,
  });
  const error = (res: ServerResponse, status: number, message: string, headers: Record<string, string> = {}, extra: Record<string, unknown> = {}) =>
    json(res, status, { message, documentation_url: DOCS, status: String(status), ...extra }, headers);

  /** A page of `all` with GitHub's Link header; `wrap` turns the items into the body. */
  const paged = (res: ServerResponse, url: URL, all: unknown[], wrap: (items: unknown[]) => unknown = (i) => i) => {
    const { page, perPage } = paging(url.searchParams);
    const items = all.slice((page - 1) * perPage, page * perPage);
    const link = linkHeader(url, page, perPage, all.length);
    json(res, 200, wrap(items), { ...rateHeaders('core'), ...(link ? { link } : {}) });
  };

  function takeFault(path: string): StandInFault | undefined {
    const i = faults.findIndex((f) => !f.pathPrefix || path.startsWith(f.pathPrefix));
    if (i < 0) return undefined;
    const f = faults[i]!;
    if (--f.times <= 0) faults.splice(i, 1);
    return f.fault;
  }

  function answerFault(res: ServerResponse, fault: StandInFault, resource: string, login: string | undefined): boolean {
    switch (fault.kind) {
      case 'primary-rate-limit':
        error(res, fault.status ?? 403, `API rate limit exceeded for user ID ${login ? users.find((u) => u.login === login)?.id : 0}. If you reach out to GitHub Support for help, please include the request ID.`, rateHeaders(resource, 0, fault.resetAt));
        return true;
      case 'secondary-rate-limit':
        error(res, fault.status ?? 403, 'You have exceeded a secondary rate limit. Please wait a few minutes before you try again.', { ...rateHeaders(resource), 'retry-after': String(fault.retryAfter ?? 60) });
        return true;
      case 'server-error':
        error(res, fault.status ?? 502, 'Server Error');
        return true;
      case 'graphql-rate-limit':
        return false;
    }
  }

  function searchRepositories(user: StandInUser, q: string): StandInRepo[] | string {
    const terms: string[] = [];
    let owner: string | undefined;
    let visibility: string | undefined;
    let inName = false;
    for (const token of q.split(/\s+/).filter(Boolean)) {
      const m = /^(user|org|is|in):(.+)$/.exec(token);
      if (!m) terms.push(token.toLowerCase());
      else if (m[1] === 'user' || m[1] === 'org') owner = m[2];
      else if (m[1] === 'is') visibility = m[2];
      else inName = m[2] === 'name';
    }
    if (terms.length === 0 && !owner && !visibility) return 'missing';
    return repos.filter((r) => {
      if (!canSee(user, r)) return false;
      if (owner && r.owner.toLowerCase() !== owner.toLowerCase()) return false;
      if (visibility === 'public' && r.private) return false;
      if (visibility === 'private' && !r.private) return false;
      // A term matches the name (`owner/name` when it has a slash); without in:name GitHub also
      // matches descriptions and topics, which these repositories do not have.
      void inName;
      return terms.every((t) => (t.includes('/') ? fullName(r).toLowerCase().includes(t) : r.name.toLowerCase().includes(t)));
    });
  }

  function graphql(res: ServerResponse, user: StandInUser, query: string, variables: Record<string, unknown>): void {
    const headers = rateHeaders('graphql');
    const notFound = (path: string, message: string) => json(res, 200, { data: { [path]: null }, errors: [{ type: 'NOT_FOUND', path: [path], locations: [{ line: 2, column: 3 }], message }] }, headers);
    if (/\brefs\s*\(/.test(query)) {
      const owner = String(variables['owner'] ?? '');
      const name = String(variables['name'] ?? '');
      const repo = repos.find((r) => r.owner.toLowerCase() === owner.toLowerCase() && r.name.toLowerCase() === name.toLowerCase());
      if (!repo || !canSee(user, repo)) return notFound('repository', `Could not resolve to a Repository with the name '${owner}/${name}'.`);
      const wanted = String(variables['query'] ?? '').toLowerCase();
      const first = Math.min(100, Number(variables['perPage'] ?? variables['first'] ?? 30));
      // refs(orderBy: ALPHABETICAL ASC, query:) : cursors are opaque; here the base64 of an offset.
      const matching = (repo.branches ?? []).filter((b) => b.name.toLowerCase().includes(wanted)).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
      const after = typeof variables['after'] === 'string' ? Number(Buffer.from(variables['after'], 'base64').toString().replace('cursor:', '')) + 1 : 0;
      const nodes = matching.slice(after, after + first);
      const endCursor = nodes.length ? Buffer.from(`cursor:${after + nodes.length - 1}`).toString('base64') : null;
      return json(
        res,
        200,
        {
          data: {
            repository: {
              refs: {
                nodes: nodes.map((b) => ({ name: b.name, target: { __typename: 'Commit', oid: b.sha, committedDate: b.committedDate ?? '2026-01-01T00:00:00Z' } })),
                pageInfo: { hasNextPage: after + nodes.length < matching.length, endCursor },
              },
            },
          },
        },
        headers,
      );
    }
    if (/\bpullRequests\s*\(/.test(query) || /\bissues\s*\(/.test(query)) {
      const login = String(variables['login'] ?? '');
      if (!users.some((u) => u.login === login)) return notFound('user', `Could not resolve to a User with the login of '${login}'.`);
      const byUpdated = <T extends { updatedAt?: string }>(a: T, b: T) => (b.updatedAt ?? '').localeCompare(a.updatedAt ?? '');
      const visible = (repo: string) => {
        const r = repos.find((x) => fullName(x) === repo);
        return !r || canSee(user, r);
      };
      if (/\bpullRequests\s*\(/.test(query)) {
        const nodes = pulls
          .filter((p) => p.author === login && (p.state ?? 'OPEN') === 'OPEN' && visible(p.repo))
          .sort(byUpdated)
          .slice(0, 50)
          .map((p) => ({
            number: p.number,
            title: p.title,
            repository: { nameWithOwner: p.repo },
            mergeable: p.mergeable ?? 'MERGEABLE',
            commits: { nodes: [{ commit: { statusCheckRollup: p.checks ? { state: p.checks } : null } }] },
            reviews: { nodes: (p.reviews ?? []).filter((s) => s !== 'APPROVED').map((state) => ({ state })) },
          }));
        return json(res, 200, { data: { user: { pullRequests: { nodes } } } }, headers);
      }
      const nodes = issues
        .filter((i) => i.assignees.includes(login) && (i.state ?? 'OPEN') === 'OPEN' && visible(i.repo))
        .sort(byUpdated)
        .slice(0, 50)
        .map((i) => ({ number: i.number, title: i.title, repository: { nameWithOwner: i.repo } }));
      return json(res, 200, { data: { user: { issues: { nodes } } } }, headers);
    }
    json(res, 200, { errors: [{ message: 'This stand-in does not serve this query', locations: [{ line: 1, column: 1 }] }] }, headers);
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    // Links name the host the client asked for (api.github.com through the proxy, else this server).
    const origin = req.headers.host ? `${(req.socket as TLSSocket).encrypted ? 'https' : 'http'}://${req.headers.host}` : base;
    const url = new URL(req.url ?? '/', origin);
    let path = url.pathname.replace(/\/+$/, '') || '/';
    if (path.startsWith('/api/v3')) path = path.slice('/api/v3'.length) || '/';
    if (path === '/api/graphql') path = '/graphql';
    const record: GitHubRequest = { method: req.method ?? 'GET', path, query: url.searchParams, authorization: req.headers.authorization, host: req.headers.host };
    requests.push(record);
    const token = /^(?:Bearer|token) (.+)$/i.exec(req.headers.authorization ?? '')?.[1];
    const user = token ? users.find((u) => u.token === token) : undefined;
    if (token && !user) return error(res, 401, 'Bad credentials');
    const fault = takeFault(path);
    if (fault && answerFault(res, fault, path === '/graphql' ? 'graphql' : path.startsWith('/search') ? 'search' : 'core', user?.login)) return;
    // The API root answers without a token; everything else here needs one.
    if (path === '/' && req.method === 'GET') return json(res, 200, { current_user_url: `${base}/user`, repository_url: `${base}/repos/{owner}/{repo}` }, rateHeaders('core'));
    if (!user) return error(res, 401, 'Requires authentication');

    if (path === '/graphql' && req.method === 'POST') {
      let body: { query?: unknown; variables?: unknown };
      try {
        body = JSON.parse(await readBody(req)) as typeof body;
      } catch {
        return error(res, 400, 'Problems parsing JSON');
      }
      if (typeof body.query !== 'string') return json(res, 200, { errors: [{ message: 'A query attribute must be specified and must be a string.' }] });
      record.graphql = { query: body.query, variables: (body.variables ?? {}) as Record<string, unknown> };
      if (fault?.kind === 'graphql-rate-limit') return json(res, 200, { errors: [{ type: 'RATE_LIMITED', message: 'API rate limit exceeded for user ID ' + user.id + '.' }] }, rateHeaders('graphql', 0));
      return graphql(res, user, body.query, record.graphql.variables);
    }
    if (req.method !== 'GET') return error(res, 404, 'Not Found');

    if (path === '/user') return json(res, 200, { login: user.login, id: user.id, type: 'User', name: null, email: null, avatar_url: '', company: null }, rateHeaders('core'));
    if (path === '/user/orgs') return paged(res, url, (user.orgs ?? []).map((login) => ({ login, id: ownerId(login) })));
    if (path === '/user/repos') {
      const sort = url.searchParams.get('sort') ?? 'full_name';
      const affiliation = (url.searchParams.get('affiliation') ?? 'owner,collaborator,organization_member').split(',');
      const mine = repos.filter(
        (r) =>
          (affiliation.includes('owner') && r.owner === user.login) ||
          (affiliation.includes('collaborator') && (r.collaborators ?? []).includes(user.login)) ||
          (affiliation.includes('organization_member') && (user.orgs ?? []).includes(r.owner)),
      );
      const direction = url.searchParams.get('direction') ?? (sort === 'full_name' ? 'asc' : 'desc');
      const key = (r: StandInRepo) => (sort === 'full_name' ? fullName(r).toLowerCase() : (r.pushedAt ?? ''));
      mine.sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : fullName(a) < fullName(b) ? -1 : 1) * (direction === 'asc' ? 1 : -1));
      return paged(
        res,
        url,
        mine.map((r) => repoJson(r, base)),
      );
    }
    if (path === '/user/installations') {
      if (user.tokenKind !== 'app') return error(res, 403, 'You must authenticate with an access token authorized to a GitHub App in order to list installations');
      const all = (user.installations ?? []).map((i) => ({ id: i.id, account: { login: i.account, id: ownerId(i.account), type: i.accountType }, app_id: 1, target_type: i.accountType, repository_selection: 'selected' }));
      return paged(res, url, all, (items) => ({ total_count: all.length, installations: items }));
    }
    const inst = /^\/user\/installations\/(\d+)\/repositories$/.exec(path);
    if (inst) {
      const i = user.tokenKind === 'app' ? (user.installations ?? []).find((x) => String(x.id) === inst[1]) : undefined;
      if (!i) return error(res, 404, 'Not Found');
      const all = i.repositories.map((n) => repos.find((r) => fullName(r) === n)).filter((r): r is StandInRepo => !!r).map((r) => repoJson(r, base));
      return paged(res, url, all, (items) => ({ total_count: all.length, repository_selection: 'selected', repositories: items }));
    }
    if (path === '/search/repositories') {
      const found = searchRepositories(user, url.searchParams.get('q') ?? '');
      if (typeof found === 'string') return error(res, 422, 'Validation Failed', {}, { errors: [{ resource: 'Search', field: 'q', code: 'missing' }] });
      const sort = url.searchParams.get('sort');
      const order = url.searchParams.get('order') === 'asc' ? 1 : -1;
      if (sort === 'stars') found.sort((a, b) => ((a.stars ?? 0) - (b.stars ?? 0)) * order || (fullName(a) < fullName(b) ? -1 : 1));
      else if (sort === 'updated') found.sort((a, b) => (a.pushedAt ?? '').localeCompare(b.pushedAt ?? '') * order || (fullName(a) < fullName(b) ? -1 : 1));
      const all = found.map((r) => repoJson(r, base));
      return paged(res, url, all, (items) => ({ total_count: all.length, incomplete_results: false, items }));
    }
    const repoPath = /^\/repos\/([^/]+)\/([^/]+)(\/branches)?$/.exec(path);
    if (repoPath) {
      const repo = repos.find((r) => r.owner.toLowerCase() === repoPath[1]!.toLowerCase() && r.name.toLowerCase() === repoPath[2]!.toLowerCase());
      if (!repo || !canSee(user, repo)) return error(res, 404, 'Not Found');
      if (!repoPath[3]) return json(res, 200, repoJson(repo, base), rateHeaders('core'));
      return paged(
        res,
        url,
        (repo.branches ?? []).map((b) => ({ name: b.name, commit: { sha: b.sha, url: `${base}/repos/${fullName(repo)}/commits/${b.sha}` }, protected: !!b.protected })),
      );
    }
    return error(res, 404, 'Not Found');
  }

  const listener = (req: IncomingMessage, res: ServerResponse) => {
    handle(req, res).catch((err: unknown) => {
      if (!res.headersSent) error(res, 500, `stand-in failure: ${(err as Error).message}`);
    });
  };
  const server: Server = opts.tls ? createHttpsServer(opts.tls, listener) : createHttpServer(listener);
  const tunnel = opts.connectTls;
  if (tunnel) {
    server.on('connect', (_req: IncomingMessage, socket: Socket, head: Buffer) => {
      socket.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      if (head.length) socket.unshift(head);
      const tls = new TLSSocket(socket, { isServer: true, key: tunnel.key, cert: tunnel.cert });
      tls.on('error', () => socket.destroy());
      server.emit('connection', tls);
    });
  }
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  const { port } = server.address() as AddressInfo;
  base = `${opts.tls ? 'https' : 'http'}://127.0.0.1:${port}`;
  return {
    url: base,
    requests,
    users,
    repos,
    pulls,
    issues,
    fail: (fault, o = {}) => void faults.push({ fault, pathPrefix: o.pathPrefix, times: o.times ?? 1 }),
    close: () =>
      new Promise<void>((ok) => {
        server.closeAllConnections();
        server.close(() => ok());
      }),
  };
}
