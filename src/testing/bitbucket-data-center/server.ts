// A stand-in for a Bitbucket Data Center's REST API (<url>/rest/api/1.0), over real HTTP: Data
// Center is licensed, self-managed software that cannot run here. It answers as Atlassian
// documents: HTTP access tokens as Bearer, `user:password` (or token as password) as basic
// credentials; 401 `{"errors": [{"message", "exceptionName"}]}` for bad credentials; 404 with
// NoSuchProjectException / NoSuchRepositoryException for what the caller cannot see; paged lists
// as `{size, limit, start, isLastPage, nextPageStart, values}` from `start` and `limit`, the limit
// capped by the server (its page.max settings; `maxLimit` here); the X-AUSERNAME header on answers
// to a user's credentials.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { json } from '../scripted-llm/server.ts';

export interface DcRepo {
  project: string;
  slug: string;
  name: string;
  id: number;
  public: boolean;
  defaultBranch: string;
  /** In the order of their last modification, newest first (what orderBy=MODIFICATION answers). */
  branches: { name: string; sha: string }[];
}

export interface DcData {
  projects: { key: string; name: string }[];
  repos: DcRepo[];
  /** Bearer tokens (and passwords) → the user they act as (null: a project or repository access token, no user). */
  tokens: Record<string, { user: string | null; projects: string[] }>;
}

export interface DcStandIn {
  url: string;
  data: DcData;
  requests: { method: string; path: string; query: URLSearchParams; authorization: string | undefined }[];
  close(): Promise<void>;
}

const fail = (res: ServerResponse, status: number, message: string, exceptionName: string) => json(res, status, { errors: [{ context: null, message, exceptionName: `com.atlassian.bitbucket.${exceptionName}` }] });

export async function startBitbucketDcStandIn(data: DcData, opts: { maxLimit?: number } = {}): Promise<DcStandIn> {
  const requests: DcStandIn['requests'] = [];
  const maxLimit = opts.maxLimit ?? 1000;
  let base = '';

  function paged(res: ServerResponse, url: URL, all: unknown[], headers: Record<string, string>): void {
    const start = Math.max(Number(url.searchParams.get('start') ?? 0) || 0, 0);
    const limit = Math.min(Math.max(Number(url.searchParams.get('limit') ?? 25) || 25, 1), maxLimit);
    const values = all.slice(start, start + limit);
    const isLastPage = start + values.length >= all.length;
    json(res, 200, { size: values.length, limit, start, isLastPage, values, ...(isLastPage ? {} : { nextPageStart: start + values.length }) }, headers);
  }

  const repoJson = (r: DcRepo) => ({ id: r.id, slug: r.slug, name: r.name, public: r.public, scmId: 'git', state: 'AVAILABLE', project: { key: r.project, name: data.projects.find((p) => p.key === r.project)?.name }, links: { self: [{ href: `${base}/projects/${r.project}/repos/${r.slug}/browse` }] } });

  function handle(req: IncomingMessage, res: ServerResponse): void {
    const url = new URL(req.url ?? '/', base);
    const authorization = req.headers.authorization;
    requests.push({ method: req.method ?? '', path: url.pathname, query: url.searchParams, authorization });
    let secret: string | undefined;
    if (authorization?.startsWith('Bearer ')) secret = authorization.slice(7);
    else if (authorization?.startsWith('Basic ')) secret = Buffer.from(authorization.slice(6), 'base64').toString().split(':').slice(1).join(':');
    const token = secret ? data.tokens[secret] : undefined;
    if (!token) return fail(res, 401, 'Authentication failed. Please check your credentials and try again.', 'auth.IncorrectPasswordAuthenticationException');
    const headers: Record<string, string> = token.user ? { 'x-ausername': encodeURIComponent(token.user) } : {};
    if (req.method !== 'GET' || !url.pathname.startsWith('/rest/api/1.0/')) return fail(res, 404, 'Not found', 'NotFoundException');
    const parts = url.pathname.slice('/rest/api/1.0/'.length).split('/').filter(Boolean).map(decodeURIComponent);
    const readable = (r: DcRepo) => r.public || token.projects.includes(r.project);

    if (parts.length === 1 && parts[0] === 'repos') return paged(res, url, data.repos.filter(readable).map(repoJson), headers);
    if (parts[0] !== 'projects') return fail(res, 404, 'Not found', 'NotFoundException');
    if (parts.length === 1) {
      return paged(
        res,
        url,
        data.projects.filter((p) => token.projects.includes(p.key) || data.repos.some((r) => r.project === p.key && r.public)).map((p) => ({ key: p.key, name: p.name, id: p.key.length })),
        headers,
      );
    }
    const project = data.projects.find((p) => p.key.toLowerCase() === parts[1]!.toLowerCase());
    if (!project || !(token.projects.includes(project.key) || data.repos.some((r) => r.project === project.key && r.public))) return fail(res, 404, `Project ${parts[1]} does not exist.`, 'project.NoSuchProjectException');
    if (parts.length === 3 && parts[2] === 'repos') return paged(res, url, data.repos.filter((r) => r.project === project.key && readable(r)).map(repoJson), headers);
    if (parts[2] !== 'repos' || !parts[3]) return fail(res, 404, 'Not found', 'NotFoundException');
    const repo = data.repos.find((r) => r.project === project.key && r.slug === parts[3] && readable(r));
    if (!repo) return fail(res, 404, `Repository ${project.key}/${parts[3]} does not exist.`, 'repository.NoSuchRepositoryException');
    if (parts.length === 4) return json(res, 200, repoJson(repo), headers);
    if (parts.length === 5 && parts[4] === 'default-branch') return json(res, 200, { id: `refs/heads/${repo.defaultBranch}`, displayId: repo.defaultBranch, type: 'BRANCH' }, headers);
    if (parts.length === 5 && parts[4] === 'branches') {
      const filter = url.searchParams.get('filterText')?.toLowerCase();
      const list = repo.branches
        .filter((b) => !filter || b.name.toLowerCase().includes(filter))
        .map((b) => ({ id: `refs/heads/${b.name}`, displayId: b.name, type: 'BRANCH', latestCommit: b.sha, latestChangeset: b.sha, isDefault: b.name === repo.defaultBranch }));
      // orderBy=MODIFICATION (as listed); ALPHABETICAL by name.
      if (url.searchParams.get('orderBy') === 'ALPHABETICAL') list.sort((a, b) => (a.displayId < b.displayId ? -1 : 1));
      return paged(res, url, list, headers);
    }
    return fail(res, 404, 'Not found', 'NotFoundException');
  }

  const server: Server = createServer(handle);
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { url: base, data, requests, close: () => new Promise<void>((ok) => server.close(() => ok())) };
}
