// A stand-in for Bitbucket Cloud's REST API 2.0 (served at <url>/2.0), over real HTTP:
// api.bitbucket.org cannot be reached here. It answers as Atlassian documents: Bearer access
// tokens or HTTP basic `user:app-password`; errors as `{"type": "error", "error": {"message"}}`
// (401 for unknown credentials, 403 for a token without the scope, 404 for a repository the
// caller cannot see); paged lists as `{pagelen, page, size, values, next, previous}` with `page`
// and `pagelen` (at most 100) and `next` a full URL; `q` filters in BBQL as far as the app API
// uses it (name~"text": contains, any case) and `sort` by a field, `-` for descending.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { json } from '../scripted-llm/server.ts';

export interface BitbucketRepo {
  workspace: string;
  slug: string;
  isPrivate: boolean;
  updatedOn: string;
  createdOn: string;
  mainBranch: string;
  branches: { name: string; hash: string; date: string }[];
}

export interface BitbucketCredential {
  user: string;
  /** Workspaces this credential can read (access tokens are bound to one). */
  workspaces: string[];
  /** read: may read repositories; without it, only /user answers. */
  scopes: ('account' | 'repository')[];
}

export interface BitbucketData {
  users: { username: string; displayName: string; accountId: string }[];
  workspaces: string[];
  repos: BitbucketRepo[];
  /** Key: the Bearer token, or `user:password` for basic credentials. */
  credentials: Record<string, BitbucketCredential>;
}

export interface BitbucketStandIn {
  url: string;
  data: BitbucketData;
  requests: { method: string; path: string; query: URLSearchParams; authorization: string | undefined }[];
  close(): Promise<void>;
}

const error = (res: ServerResponse, status: number, message: string) => json(res, status, { type: 'error', error: { message } });

/** Parses the BBQL the app API sends: `name~"text"` (with \" and \\ escapes). */
function parseQuery(q: string | null): ((name: string) => boolean) | null | 'bad' {
  if (!q) return null;
  const m = /^name\s*~\s*"((?:[^"\\]|\\.)*)"$/.exec(q.trim());
  if (!m) return 'bad';
  const text = m[1]!.replace(/\\(.)/g, '$1').toLowerCase();
  return (name) => name.toLowerCase().includes(text);
}

function sorter<T>(sort: string | null, fields: Record<string, (x: T) => string>): ((a: T, b: T) => number) | 'bad' | null {
  if (!sort) return null;
  const desc = sort.startsWith('-');
  const get = fields[sort.replace(/^-/, '')];
  if (!get) return 'bad';
  return (a, b) => (get(a) < get(b) ? -1 : get(a) > get(b) ? 1 : 0) * (desc ? -1 : 1);
}

export async function startBitbucketStandIn(data: BitbucketData): Promise<BitbucketStandIn> {
  const requests: BitbucketStandIn['requests'] = [];
  let base = '';

  function paged(res: ServerResponse, url: URL, all: unknown[]): void {
    const pagelen = Math.min(Math.max(Number(url.searchParams.get('pagelen') ?? 10) || 10, 1), 100);
    const page = Math.max(Number(url.searchParams.get('page') ?? 1) || 1, 1);
    const link = (n: number) => {
      const u = new URL(url.pathname + url.search, base);
      u.searchParams.set('page', String(n));
      return u.toString();
    };
    const values = all.slice((page - 1) * pagelen, page * pagelen);
    json(res, 200, {
      pagelen,
      page,
      size: all.length,
      values,
      ...(page * pagelen < all.length ? { next: link(page + 1) } : {}),
      ...(page > 1 ? { previous: link(page - 1) } : {}),
    });
  }

  const repoJson = (r: BitbucketRepo) => ({
    type: 'repository',
    uuid: `{${r.workspace}-${r.slug}}`,
    slug: r.slug,
    name: r.slug,
    full_name: `${r.workspace}/${r.slug}`,
    is_private: r.isPrivate,
    updated_on: r.updatedOn,
    created_on: r.createdOn,
    mainbranch: { type: 'branch', name: r.mainBranch },
    workspace: { type: 'workspace', slug: r.workspace, name: r.workspace },
    links: { html: { href: `${base}/${r.workspace}/${r.slug}` } },
  });

  function handle(req: IncomingMessage, res: ServerResponse): void {
    const url = new URL(req.url ?? '/', base);
    const authorization = req.headers.authorization;
    requests.push({ method: req.method ?? '', path: url.pathname, query: url.searchParams, authorization });
    let key: string | undefined;
    if (authorization?.startsWith('Bearer ')) key = authorization.slice(7);
    else if (authorization?.startsWith('Basic ')) key = Buffer.from(authorization.slice(6), 'base64').toString();
    const cred = key ? data.credentials[key] : undefined;
    if (!cred) return error(res, 401, 'Access token expired or invalid.');
    if (req.method !== 'GET' || !url.pathname.startsWith('/2.0/')) return error(res, 404, 'Resource not found');
    const path = url.pathname.slice(4);
    const user = data.users.find((u) => u.username === cred.user)!;

    if (path === '/user') return json(res, 200, { type: 'user', username: user.username, display_name: user.displayName, account_id: user.accountId, uuid: `{${user.accountId}}` });
    if (!cred.scopes.includes('repository')) return error(res, 403, 'Your credentials lack one or more required privilege scopes.');

    if (path === '/user/workspaces') {
      const list = data.workspaces.filter((w) => cred.workspaces.includes(w)).map((slug) => ({ type: 'workspace_access', administrator: false, workspace: { type: 'workspace', slug, name: slug, uuid: `{${slug}}` } }));
      return paged(res, url, list);
    }
    const parts = path.split('/').filter(Boolean).map(decodeURIComponent);
    if (parts[0] === 'repositories' && parts.length >= 2) {
      const workspace = parts[1]!;
      const readable = cred.workspaces.includes(workspace);
      if (parts.length === 2) {
        if (!data.workspaces.includes(workspace)) return error(res, 404, `No workspace with identifier '${workspace}'.`);
        const match = parseQuery(url.searchParams.get('q'));
        const sort = sorter<BitbucketRepo>(url.searchParams.get('sort'), { updated_on: (r) => r.updatedOn, created_on: (r) => r.createdOn, name: (r) => r.slug });
        if (match === 'bad' || sort === 'bad') return error(res, 400, 'Invalid query or sort field');
        let list = data.repos.filter((r) => r.workspace === workspace && (readable || !r.isPrivate));
        if (match) list = list.filter((r) => match(r.slug));
        if (sort) list = [...list].sort(sort);
        return paged(res, url, list.map(repoJson));
      }
      const repo = data.repos.find((r) => r.workspace === workspace && r.slug === parts[2] && (readable || !r.isPrivate));
      if (!repo) return error(res, 404, `Repository ${workspace}/${parts[2]} not found`);
      if (parts.length === 3) return json(res, 200, repoJson(repo));
      if (parts.length === 5 && parts[3] === 'refs' && parts[4] === 'branches') {
        const match = parseQuery(url.searchParams.get('q'));
        const sort = sorter<BitbucketRepo['branches'][number]>(url.searchParams.get('sort'), { 'target.date': (b) => b.date, name: (b) => b.name });
        if (match === 'bad' || sort === 'bad') return error(res, 400, 'Invalid query or sort field');
        let list = [...repo.branches];
        if (match) list = list.filter((b) => match(b.name));
        if (sort) list.sort(sort);
        return paged(
          res,
          url,
          list.map((b) => ({ type: 'branch', name: b.name, target: { type: 'commit', hash: b.hash, date: b.date } })),
        );
      }
    }
    return error(res, 404, 'Resource not found');
  }

  const server: Server = createServer(handle);
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { url: base, data, requests, close: () => new Promise<void>((ok) => server.close(() => ok())) };
}
