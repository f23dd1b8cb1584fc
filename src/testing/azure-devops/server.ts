// A stand-in for Azure DevOps Services' REST API, one organization served at <url> (as
// https://dev.azure.com/<organization>), over real HTTP: dev.azure.com cannot be reached here. It
// answers as Microsoft documents: personal access tokens as HTTP basic credentials (any user name),
// Entra ID tokens as Bearer; 401 for unknown credentials; `api-version` required (400 without);
// errors as `{"$id", "message", "typeKey"}` (404 TF401019 for a repository the caller cannot see);
// lists as `{count, value}`, projects and refs paged with `$top` and the x-ms-continuationtoken
// header (sent back as `continuationToken`); connectionData, pull requests by creator and status,
// WIQL and work items as far as the app API reads them.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { json, readBody } from '../scripted-llm/server.ts';

export interface AzureRepo {
  project: string;
  name: string;
  id: string;
  branches: { name: string; sha: string; date: string; policy?: boolean }[];
}

export interface AzureData {
  organization: string;
  user: { id: string; displayName: string };
  projects: string[];
  repos: AzureRepo[];
  pullRequests: { project: string; repo: string; id: number; title: string; creatorId: string; status: 'active' | 'completed'; mergeStatus?: string; prStatus?: string; hasUnresolvedComments?: boolean }[];
  workItems: { project: string; id: number; title: string; assignedToMe: boolean; state: 'Active' | 'Closed' }[];
  /** Personal access tokens (basic) and Entra ID tokens (Bearer) this organization accepts. */
  tokens: string[];
}

export interface AzureStandIn {
  /** The organization's URL (what AGENTYARD_GIT_HOSTS.azure_devops names). */
  url: string;
  data: AzureData;
  requests: { method: string; path: string; query: URLSearchParams; authorization: string | undefined }[];
  close(): Promise<void>;
}

const fail = (res: ServerResponse, status: number, message: string, typeKey: string) => json(res, status, { $id: '1', innerException: null, message, typeName: `Microsoft.TeamFoundation.${typeKey}`, typeKey, errorCode: 0, eventId: 3000 });

/** `pageSize`: the default `$top` (100 on Azure DevOps for projects); tests set it small to exercise continuation tokens. */
export async function startAzureDevOpsStandIn(data: AzureData, opts: { pageSize?: number } = {}): Promise<AzureStandIn> {
  const requests: AzureStandIn['requests'] = [];
  let origin = '';

  /** `$top` and `continuationToken` (here: the index to start at) over a whole list. */
  function continued(res: ServerResponse, url: URL, all: unknown[]): void {
    const top = Math.max(Number(url.searchParams.get('$top') ?? opts.pageSize ?? 100) || 100, 1);
    const from = Number(url.searchParams.get('continuationToken') ?? 0) || 0;
    const value = all.slice(from, from + top);
    const headers: Record<string, string> = from + top < all.length ? { 'x-ms-continuationtoken': String(from + top) } : {};
    json(res, 200, { count: value.length, value }, headers);
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', origin);
    const authorization = req.headers.authorization;
    requests.push({ method: req.method ?? '', path: url.pathname, query: url.searchParams, authorization });
    let token: string | undefined;
    if (authorization?.startsWith('Basic ')) token = Buffer.from(authorization.slice(6), 'base64').toString().split(':').slice(1).join(':');
    else if (authorization?.startsWith('Bearer ')) token = authorization.slice(7);
    if (!token || !data.tokens.includes(token)) {
      res.writeHead(401, { 'content-type': 'text/html' });
      return void res.end('<html><body>Access Denied: The Personal Access Token used has expired or is invalid.</body></html>');
    }
    const parts = url.pathname.split('/').filter(Boolean).map(decodeURIComponent);
    if (parts[0] !== data.organization) return fail(res, 404, `TF400813: Organization ${parts[0]} not found`, 'OrganizationNotFoundException');
    if (!url.searchParams.get('api-version')) return fail(res, 400, 'No api-version was supplied for the request. An api-version must be supplied.', 'VssVersionNotSpecifiedException');
    const rest = parts.slice(1);
    const is = (...p: string[]) => rest.length === p.length && p.every((x, i) => x === '*' || x === rest[i]);
    const repoJson = (r: AzureRepo) => ({ id: r.id, name: r.name, project: { id: `p-${r.project}`, name: r.project }, defaultBranch: 'refs/heads/main', webUrl: `${origin}/${data.organization}/${r.project}/_git/${r.name}` });

    if (req.method === 'GET' && is('_apis', 'connectionData')) {
      return json(res, 200, { authenticatedUser: { id: data.user.id, descriptor: `Microsoft.IdentityModel.Claims.ClaimsIdentity;${data.user.id}`, providerDisplayName: data.user.displayName }, instanceId: 'i-1' });
    }
    if (req.method === 'GET' && is('_apis', 'projects')) return continued(res, url, data.projects.map((name) => ({ id: `p-${name}`, name, state: 'wellFormed' })));
    if (req.method === 'GET' && is('_apis', 'git', 'repositories')) return json(res, 200, { count: data.repos.length, value: data.repos.map(repoJson) });
    const project = rest[0];
    if (project && !data.projects.includes(project)) return fail(res, 404, `TF200016: The following project does not exist: ${project}.`, 'ProjectDoesNotExistWithNameException');
    if (req.method === 'GET' && is('*', '_apis', 'git', 'repositories')) {
      const value = data.repos.filter((r) => r.project === project).map(repoJson);
      return json(res, 200, { count: value.length, value });
    }
    if (rest[1] === '_apis' && rest[2] === 'git' && rest[3] === 'repositories' && rest[4]) {
      const repo = data.repos.find((r) => r.project === project && (r.name.toLowerCase() === rest[4]!.toLowerCase() || r.id === rest[4]));
      if (!repo) return fail(res, 404, `TF401019: The Git repository with name or identifier ${rest[4]} does not exist or you do not have permissions for the operation you are attempting.`, 'GitRepositoryNotFoundException');
      if (is('*', '_apis', 'git', 'repositories', '*')) return json(res, 200, repoJson(repo));
      if (is('*', '_apis', 'git', 'repositories', '*', 'refs')) {
        const filter = url.searchParams.get('filter') ?? '';
        return continued(
          res,
          url,
          repo.branches.map((b) => ({ name: `refs/heads/${b.name}`, objectId: b.sha })).filter((r) => r.name.startsWith(`refs/${filter}`)),
        );
      }
      if (is('*', '_apis', 'git', 'repositories', '*', 'commits', '*')) {
        const b = repo.branches.find((x) => x.sha === rest[6]);
        if (!b) return fail(res, 404, `TF401175: The commit ${rest[6]} does not exist.`, 'GitCommitDoesNotExistException');
        return json(res, 200, { commitId: b.sha, committer: { name: 'Dev', email: 'dev@example.com', date: b.date }, comment: 'commit' });
      }
    }
    if (req.method === 'GET' && is('*', '_apis', 'git', 'policy', 'configurations')) {
      const repo = data.repos.find((r) => r.project === project && r.id === url.searchParams.get('repositoryId'));
      const ref = url.searchParams.get('refName');
      const value = repo?.branches.filter((b) => b.policy && `refs/heads/${b.name}` === ref).map((b, i) => ({ id: i + 1, type: { displayName: 'Minimum number of reviewers' }, settings: { scope: [{ refName: `refs/heads/${b.name}`, repositoryId: repo.id }] } })) ?? [];
      return json(res, 200, { count: value.length, value });
    }
    if (req.method === 'GET' && is('*', '_apis', 'git', 'pullrequests')) {
      const creator = url.searchParams.get('searchCriteria.creatorId');
      const status = url.searchParams.get('searchCriteria.status') ?? 'active';
      const value = data.pullRequests
        .filter((p) => p.project === project && (!creator || p.creatorId === creator) && p.status === status)
        .map((p) => ({ pullRequestId: p.id, title: p.title, status: p.prStatus ?? p.status, mergeStatus: p.mergeStatus ?? 'succeeded', hasUnresolvedComments: p.hasUnresolvedComments ?? false, repository: { id: `r-${p.repo}`, name: p.repo, project: { name: p.project } } }));
      return json(res, 200, { count: value.length, value });
    }
    if (req.method === 'POST' && is('*', '_apis', 'wit', 'wiql')) {
      const body = JSON.parse((await readBody(req)) || '{}') as { query?: string };
      if (!/\[System\.AssignedTo\] = @me AND \[System\.State\] = 'Active'/.test(body.query ?? '')) return fail(res, 400, 'The stand-in runs only the assigned-and-active query', 'WiqlSyntaxException');
      const workItems = data.workItems.filter((w) => w.project === project && w.assignedToMe && w.state === 'Active').map((w) => ({ id: w.id, url: `${origin}/${data.organization}/${project}/_apis/wit/workItems/${w.id}` }));
      return json(res, 200, { queryType: 'flat', workItems });
    }
    if (req.method === 'GET' && is('*', '_apis', 'wit', 'workitems', '*')) {
      const w = data.workItems.find((x) => x.project === project && x.id === Number(rest[4]));
      if (!w) return fail(res, 404, `TF401232: Work item ${rest[4]} does not exist.`, 'WorkItemUnauthorizedAccessException');
      return json(res, 200, { id: w.id, fields: { 'System.Title': w.title, 'System.State': w.state } });
    }
    return fail(res, 404, 'The controller for path was not found', 'NotFound');
  }

  const server: Server = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => fail(res, 500, String(err), 'Internal'));
  });
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { url: `${origin}/${data.organization}`, data, requests, close: () => new Promise<void>((ok) => server.close(() => ok())) };
}
