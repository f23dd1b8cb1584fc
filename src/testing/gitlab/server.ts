// A stand-in for a GitLab host's REST API (/api/v4) and the GraphQL query the app API sends
// (/api/graphql), over real HTTP: gitlab.com's API cannot be reached here, and a GitLab cannot run
// here. It answers as GitLab documents: tokens as `Authorization: Bearer` or `PRIVATE-TOKEN`, 401
// `{"message":"401 Unauthorized"}` for an unknown token, 403 `insufficient_scope` for a token
// without read_api/api, 404 `{"message":"404 Project Not Found"}` for a project the token cannot
// see, offset pagination (page, per_page up to 100, default 20) with Link, X-Total, X-Total-Pages,
// X-Page, X-Per-Page, X-Next-Page and X-Prev-Page headers. Every request is recorded.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { json, readBody } from '../scripted-llm/server.ts';

export interface GitLabUser {
  id: number;
  username: string;
  name: string;
}

export interface GitLabBranch {
  name: string;
  sha: string;
  protected?: boolean;
  committedDate: string;
}

export interface GitLabProject {
  id: number;
  /** `group/sub/project` or `user/project`. */
  path: string;
  /** The namespace is a group (else a user's). */
  group: boolean;
  visibility: 'public' | 'internal' | 'private';
  stars: number;
  lastActivity: string;
  createdAt: string;
  defaultBranch: string;
  /** Usernames of members. */
  members: string[];
  branches: GitLabBranch[];
}

export interface GitLabIssue {
  project: string;
  iid: number;
  title: string;
  assignees: string[];
  state: 'opened' | 'closed';
}

export interface GitLabMergeRequest {
  project: string;
  iid: number;
  title: string;
  author: string;
  state: 'opened' | 'merged';
  updatedAt: string;
  conflicts: boolean;
  pipeline?: 'SUCCESS' | 'FAILED' | 'RUNNING';
  /** Each discussion's notes as [resolvable, resolved]. */
  discussions: [boolean, boolean][][];
}

export interface GitLabToken {
  user: string;
  scopes: ('api' | 'read_api' | 'read_user')[];
}

export interface GitLabData {
  users: GitLabUser[];
  projects: GitLabProject[];
  issues: GitLabIssue[];
  mergeRequests: GitLabMergeRequest[];
  tokens: Record<string, GitLabToken>;
}

export interface RecordedRequest {
  method: string;
  path: string;
  query: URLSearchParams;
  authorization: string | undefined;
}

export interface GitLabStandIn {
  /** The host's base URL (what AGENTYARD_GIT_HOSTS.gitlab names); the API is at /api/v4. */
  url: string;
  data: GitLabData;
  requests: RecordedRequest[];
  close(): Promise<void>;
}

function projectJson(p: GitLabProject, base: string) {
  const parts = p.path.split('/');
  return {
    id: p.id,
    name: parts.at(-1),
    path: parts.at(-1),
    path_with_namespace: p.path,
    name_with_namespace: parts.join(' / '),
    namespace: { id: p.id * 10, name: parts[0], path: parts.slice(0, -1).join('/'), kind: p.group ? 'group' : 'user', full_path: parts.slice(0, -1).join('/') },
    visibility: p.visibility,
    star_count: p.stars,
    forks_count: 0,
    default_branch: p.defaultBranch,
    created_at: p.createdAt,
    last_activity_at: p.lastActivity,
    web_url: `${base}/${p.path}`,
    http_url_to_repo: `${base}/${p.path}.git`,
  };
}

/** GitLab's offset pagination over a whole list: the page's items and the headers GitLab sends. */
function paginate<T>(all: T[], url: URL, base: string): { items: T[]; headers: Record<string, string> } {
  const perPage = Math.min(Math.max(Number(url.searchParams.get('per_page') ?? 20) || 20, 1), 100);
  const page = Math.max(Number(url.searchParams.get('page') ?? 1) || 1, 1);
  const totalPages = Math.max(1, Math.ceil(all.length / perPage));
  const link = (n: number) => {
    const u = new URL(url.pathname + url.search, base);
    u.searchParams.set('page', String(n));
    u.searchParams.set('per_page', String(perPage));
    return u.toString();
  };
  const links: string[] = [];
  if (page > 1) links.push(`<${link(page - 1)}>; rel="prev"`);
  if (page < totalPages) links.push(`<${link(page + 1)}>; rel="next"`);
  links.push(`<${link(1)}>; rel="first"`, `<${link(totalPages)}>; rel="last"`);
  return {
    items: all.slice((page - 1) * perPage, page * perPage),
    headers: {
      link: links.join(', '),
      'x-total': String(all.length),
      'x-total-pages': String(totalPages),
      'x-page': String(page),
      'x-per-page': String(perPage),
      'x-next-page': page < totalPages ? String(page + 1) : '',
      'x-prev-page': page > 1 ? String(page - 1) : '',
    },
  };
}

/** GitLab's `search` for branches: the name contains it (any case); a leading ^ or trailing $ anchors it. */
function branchMatches(name: string, search: string): boolean {
  let s = search.toLowerCase();
  const n = name.toLowerCase();
  const start = s.startsWith('^');
  const end = s.endsWith('$');
  s = s.replace(/^\^/, '').replace(/\$$/, '');
  if (start && end) return n === s;
  if (start) return n.startsWith(s);
  if (end) return n.endsWith(s);
  return n.includes(s);
}

export async function startGitLabStandIn(data: GitLabData): Promise<GitLabStandIn> {
  const requests: RecordedRequest[] = [];
  let base = '';

  const visible = (p: GitLabProject, user: string) => p.visibility !== 'private' || p.members.includes(user);
  const project = (id: string, user: string) => {
    const decoded = decodeURIComponent(id);
    return data.projects.find((p) => (String(p.id) === decoded || p.path.toLowerCase() === decoded.toLowerCase()) && visible(p, user));
  };

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', base);
    const authorization = req.headers.authorization;
    requests.push({ method: req.method ?? '', path: url.pathname, query: url.searchParams, authorization });
    const bearer = authorization?.startsWith('Bearer ') ? authorization.slice(7) : (req.headers['private-token'] as string | undefined);
    const token = bearer ? data.tokens[bearer] : undefined;
    if (!token) return json(res, 401, { message: '401 Unauthorized' });
    const user = data.users.find((u) => u.username === token.user)!;
    const canRead = token.scopes.includes('api') || token.scopes.includes('read_api');

    if (req.method === 'POST' && url.pathname === '/api/graphql') {
      if (!canRead) return json(res, 403, { error: 'insufficient_scope', error_description: 'The request requires higher privileges than provided by the access token.', scope: 'api read_api' });
      const body = JSON.parse((await readBody(req)) || '{}') as { query?: string };
      // The one query the app API sends: the current user's authored merge requests.
      if (!/currentUser\s*\{\s*authoredMergeRequests\(state: opened, sort: UPDATED_DESC, first: 100\)/.test(body.query ?? '')) {
        return json(res, 200, { errors: [{ message: 'The stand-in answers only the authoredMergeRequests query' }] });
      }
      const nodes = data.mergeRequests
        .filter((m) => m.author === user.username && m.state === 'opened')
        .sort((a, b) => b.updatedAt.localeCompare(a.updatedAt))
        .slice(0, 100)
        .map((m) => ({
          iid: String(m.iid),
          title: m.title,
          project: { fullPath: m.project },
          conflicts: m.conflicts,
          pipelines: { nodes: m.pipeline ? [{ status: m.pipeline }] : [] },
          discussions: { nodes: m.discussions.map((notes) => ({ notes: { nodes: notes.map(([resolvable, resolved]) => ({ resolvable, resolved })) } })) },
        }));
      return json(res, 200, { data: { currentUser: { authoredMergeRequests: { nodes } } } });
    }
    if (req.method !== 'GET' || !url.pathname.startsWith('/api/v4/')) return json(res, 404, { error: '404 Not Found' });
    const path = url.pathname.slice('/api/v4'.length);

    if (path === '/user') return json(res, 200, { id: user.id, username: user.username, name: user.name, state: 'active', avatar_url: null, web_url: `${base}/${user.username}`, email: `${user.username}@example.com` });
    if (!canRead) return json(res, 403, { error: 'insufficient_scope', error_description: 'The request requires higher privileges than provided by the access token.', scope: 'api read_api' });

    if (path === '/projects') {
      const q = url.searchParams;
      let list = data.projects.filter((p) => visible(p, user.username));
      if (q.get('membership') === 'true' || q.get('membership') === '1') list = list.filter((p) => p.members.includes(user.username));
      const search = q.get('search')?.toLowerCase();
      if (search) {
        const namespaces = q.get('search_namespaces') === 'true';
        list = list.filter((p) => p.path.split('/').at(-1)!.toLowerCase().includes(search) || (namespaces && p.path.toLowerCase().includes(search)));
      }
      const orderBy = q.get('order_by') ?? 'created_at';
      const key: Record<string, (p: GitLabProject) => string | number> = {
        id: (p) => p.id,
        name: (p) => p.path.split('/').at(-1)!,
        path: (p) => p.path.split('/').at(-1)!,
        created_at: (p) => p.createdAt,
        updated_at: (p) => p.lastActivity,
        last_activity_at: (p) => p.lastActivity,
        star_count: (p) => p.stars,
      };
      if (!key[orderBy]) return json(res, 400, { error: 'order_by does not have a valid value' });
      const dir = (q.get('sort') ?? 'desc') === 'asc' ? 1 : -1;
      // Ties by id, as GitLab breaks them.
      list = [...list].sort((a, b) => {
        const [x, y] = [key[orderBy]!(a), key[orderBy]!(b)];
        return (x < y ? -1 : x > y ? 1 : a.id - b.id) * dir;
      });
      const { items, headers } = paginate(list, url, base);
      return json(res, 200, items.map((p) => projectJson(p, base)), headers);
    }

    const branches = /^\/projects\/([^/]+)\/repository\/branches$/.exec(path);
    if (branches) {
      const p = project(branches[1]!, user.username);
      if (!p) return json(res, 404, { message: '404 Project Not Found' });
      const search = url.searchParams.get('search');
      // By name, byte order, as Gitaly sorts refs.
      const list = [...p.branches].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0)).filter((b) => !search || branchMatches(b.name, search));
      const { items, headers } = paginate(list, url, base);
      return json(
        res,
        200,
        items.map((b) => ({ name: b.name, merged: false, protected: b.protected ?? false, default: b.name === p.defaultBranch, commit: { id: b.sha, short_id: b.sha.slice(0, 8), committed_date: b.committedDate } })),
        headers,
      );
    }

    const one = /^\/projects\/([^/]+)$/.exec(path);
    if (one) {
      const p = project(one[1]!, user.username);
      return p ? json(res, 200, projectJson(p, base)) : json(res, 404, { message: '404 Project Not Found' });
    }

    if (path === '/issues') {
      const q = url.searchParams;
      if (q.get('scope') !== 'assigned_to_me') return json(res, 400, { error: 'the stand-in lists assigned_to_me issues only' });
      const state = q.get('state') ?? 'all';
      const list = data.issues.filter((i) => i.assignees.includes(user.username) && (state === 'all' || i.state === state) && (!q.get('assignee_username') || i.assignees.includes(q.get('assignee_username')!)));
      const { items, headers } = paginate(list, url, base);
      return json(
        res,
        200,
        items.map((i) => ({ iid: i.iid, title: i.title, state: i.state, references: { short: `#${i.iid}`, relative: `#${i.iid}`, full: `${i.project}#${i.iid}` } })),
        headers,
      );
    }
    return json(res, 404, { error: '404 Not Found' });
  }

  const server: Server = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => json(res, 500, { message: String(err) }));
  });
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { url: base, data, requests, close: () => new Promise<void>((ok) => server.close(() => ok())) };
}
