// The `azure_devops` provider: one Azure DevOps organization, configured as its URL in
// AGENTYARD_GIT_HOSTS.azure_devops (https://dev.azure.com/<organization>; no default), read through
// its REST API (api-version 7.1) with the caller's AZURE_DEVOPS_TOKEN stored secret (OpenHands'
// name for it). As OpenHands sends it: a token shaped like a JWT (an Entra ID OAuth token) as a
// Bearer token, any other (a personal access token) as HTTP basic credentials with an empty user.
//
// Calls, shapes and defaults follow openhands-ai 1.11 (integrations/azure_devops): the one
// installation is the organization; repositories are `organization/project/repo`, listed project by
// project (/_apis/projects, then each project's /_apis/git/repositories), and a search keeps those
// whose name contains the query (/_apis/git/repositories); a branch is a refs/heads/ ref with its
// commit's committer date and, when listed, whether a branch policy protects it; suggested tasks
// are the caller's active pull requests with conflicts, a failed status or unresolved comments, and
// the Active work items assigned to them (WIQL), project by project. Unlike OpenHands: every page
// is an exact window (it loses every limit+1th item and answers page 1 of a search forever), lists
// the host pages with continuation tokens are read to the end (it stops at the first 100 projects),
// a repository URL of this organization names that repository, and a repository of another
// organization is not looked up (OpenHands sends the token to whatever organization is named).
import { Forbidden } from '../../api/errors.ts';
import type { GitBranch, GitRepository, SuggestedTask } from '../../api/app/git.ts';
import type { FacadeDeps } from '../deps.ts';
import { ProviderHttp, urlOf } from './http.ts';
import { encodePageId, pageOf } from './pages.ts';
import type { GitProviderDriver, ProviderSearch } from './provider.ts';

const API_VERSION = '7.1';
/** The most items a list read with continuation tokens yields. */
const MAX_READ = 10_000;
/** The WIQL OpenHands runs for the work items of a suggested-task list. */
const ASSIGNED_ACTIVE = "SELECT [System.Id], [System.Title], [System.State] FROM WorkItems WHERE [System.AssignedTo] = @me AND [System.State] = 'Active'";

/** OpenHands' looks_like_jwt: three non-empty dot-separated parts. */
function looksLikeJwt(token: string): boolean {
  const parts = token.split('.');
  return parts.length === 3 && parts.every(Boolean);
}

/** The organization of a configured base URL: its last path segment (dev.azure.com/<organization>). */
export function organizationOf(base: string): string {
  const parts = new URL(base).pathname.split('/').filter(Boolean);
  return decodeURIComponent(parts.at(-1) ?? '');
}

const seg = (s: string) => encodeURIComponent(s);

export class AzureDevOpsClient {
  readonly base: string;
  readonly organization: string;
  private readonly http: ProviderHttp;
  constructor(d: FacadeDeps, base: string, token: string) {
    this.base = base.replace(/\/+$/, '');
    this.organization = organizationOf(this.base);
    const authorization = looksLikeJwt(token) ? `Bearer ${token}` : `Basic ${Buffer.from(`:${token}`).toString('base64')}`;
    this.http = new ProviderHttp(d, { provider: 'azure_devops', authorization });
  }

  url(path: string, params: Record<string, string | number | undefined> = {}): URL {
    return urlOf(this.base, path, { 'api-version': API_VERSION, ...params });
  }

  async get(path: string, params: Record<string, string | number | undefined> = {}) {
    return this.http.get(this.url(path, params));
  }

  async post(path: string, body: unknown) {
    return this.http.call('POST', this.url(path), body);
  }

  /** Every item of a list ({count, value}), following x-ms-continuationtoken (bounded); a 404 is none. */
  async all(path: string, params: Record<string, string | number | undefined> = {}): Promise<any[]> {
    const out: any[] = [];
    let continuation: string | undefined;
    do {
      const r = await this.get(path, { ...params, ...(continuation ? { continuationToken: continuation } : {}) });
      out.push(...(Array.isArray(r.body?.value) ? r.body.value : []));
      continuation = r.headers.get('x-ms-continuationtoken') ?? undefined;
    } while (continuation && out.length < MAX_READ);
    return out.slice(0, MAX_READ);
  }

  async projects(): Promise<string[]> {
    return (await this.all('/_apis/projects')).map((p) => String(p?.name ?? '')).filter(Boolean);
  }
}

/** OpenHands' Azure DevOps Repository: `organization/project/repo`, private, nothing else known. */
function repositoryOf(organization: string, project: string, r: any): GitRepository {
  return { id: String(r?.id ?? ''), full_name: `${organization}/${project}/${r?.name ?? ''}`, git_provider: 'azure_devops', is_public: false, stargazers_count: null, link_header: null, pushed_at: null, owner_type: null, main_branch: null };
}

/** `project` and `repo` of `organization/project/repo` (or a URL .../organization/project/_git/repo) in this organization, else null. */
function inOrganization(client: AzureDevOpsClient, path: string): { project: string; repo: string } | null {
  const parts = path.split('/');
  if (parts.length < 3 || parts[0]!.toLowerCase() !== client.organization.toLowerCase()) return null;
  return { project: parts[1]!, repo: parts[2]! };
}

function azureSearch(client: AzureDevOpsClient): ProviderSearch {
  const org = client.organization;
  const repoPath = (project: string, repo: string) => `/${seg(project)}/_apis/git/repositories/${seg(repo)}`;

  return {
    // Authentication is per organization: the configured one is the only installation.
    async installations() {
      return [org];
    },

    async repositories(q, page, limit) {
      const offset = (page - 1) * limit;
      if (q.query) {
        const query = q.query;
        if (/^https?:\/\//.test(query)) {
          const parsed = URL.parse(query);
          const parts = (parsed?.pathname ?? '').split('/').filter(Boolean).map(decodeURIComponent).filter((s) => s !== '_git');
          const at = parts.findIndex((p) => p.toLowerCase() === org.toLowerCase());
          const named = at >= 0 && parts.length >= at + 3 ? { project: parts[at + 1]!, repo: parts[at + 2]! } : null;
          const r = named ? await client.get(repoPath(named.project, named.repo)) : null;
          return pageOf(r?.body ? [repositoryOf(org, named!.project, r.body)].slice(offset) : [], page, limit);
        }
        const wanted = query.toLowerCase();
        const all = (await client.all('/_apis/git/repositories')).filter((r) => String(r?.name ?? '').toLowerCase().includes(wanted));
        return pageOf(
          all.slice(offset, offset + limit + 1).map((r) => repositoryOf(org, String(r?.project?.name ?? ''), r)),
          page,
          limit,
        );
      }
      // OpenHands lists them project by project, in the host's order (it sorts only for sort=updated, which this route never asks).
      const rows: GitRepository[] = [];
      for (const project of await client.projects()) {
        for (const r of await client.all(`/${seg(project)}/_apis/git/repositories`)) rows.push(repositoryOf(org, project, r));
        if (rows.length > offset + limit) break;
      }
      return pageOf(rows.slice(offset, offset + limit + 1), page, limit);
    },

    // A repository the token cannot see, of another organization, or not named organization/project/repo has none (OpenHands: none).
    async branches({ path }, query, page, limit) {
      const named = inOrganization(client, path);
      if (!named) return { items: [], next_page_id: null };
      const base = repoPath(named.project, named.repo);
      const repository = await client.get(base);
      if (!repository.body) return { items: [], next_page_id: null };
      const wanted = query.toLowerCase();
      const refs = (await client.all(`${base}/refs`, { filter: 'heads/' }))
        .map((r) => ({ name: String(r?.name ?? '').replace(/^refs\/heads\//, ''), sha: String(r?.objectId ?? '') }))
        .filter((b) => !wanted || b.name.toLowerCase().includes(wanted));
      const window = refs.slice((page - 1) * limit, page * limit + 1);
      // Per branch, as OpenHands reads them: the commit's committer date; listed (not searched) branches, whether a policy protects them.
      const items: GitBranch[] = [];
      for (const b of window.slice(0, limit)) {
        const commit = await client.get(`${base}/commits/${seg(b.sha)}`);
        let isProtected = false;
        if (!query) {
          const policies = await client.get(`/${seg(named.project)}/_apis/git/policy/configurations`, { repositoryId: String(repository.body.id ?? named.repo), refName: `refs/heads/${b.name}` });
          isProtected = Array.isArray(policies.body?.value) && policies.body.value.length > 0;
        }
        items.push({ name: b.name, commit_sha: b.sha, protected: isProtected, last_push_date: commit.body?.committer?.date ?? null });
      }
      return { items, next_page_id: window.length > limit ? encodePageId(page + 1) : null };
    },

    async suggestedTasks() {
      const projects = await client.projects();
      const me = await client.get('/_apis/connectionData', { 'api-version': '7.1-preview.1' });
      const userId = me.body?.authenticatedUser?.id;
      if (typeof userId !== 'string') throw new Forbidden('Invalid azure_devops token');
      const tasks: SuggestedTask[] = [];
      for (const project of projects) {
        const prs = await client.all(`/${seg(project)}/_apis/git/pullrequests`, { 'searchCriteria.creatorId': userId, 'searchCriteria.status': 'active' });
        for (const pr of prs) {
          const type: SuggestedTask['task_type'] | null = pr?.mergeStatus === 'conflicts' ? 'MERGE_CONFLICTS' : pr?.status === 'failed' ? 'FAILING_CHECKS' : pr?.hasUnresolvedComments ? 'UNRESOLVED_COMMENTS' : null;
          if (type) tasks.push({ git_provider: 'azure_devops', task_type: type, repo: `${org}/${project}/${pr?.repository?.name ?? ''}`, issue_number: Number(pr?.pullRequestId), title: String(pr?.title ?? '') });
        }
        const wiql = await client.post(`/${seg(project)}/_apis/wit/wiql`, { query: ASSIGNED_ACTIVE });
        for (const ref of Array.isArray(wiql.body?.workItems) ? wiql.body.workItems : []) {
          const item = await client.get(`/${seg(project)}/_apis/wit/workitems/${Number(ref?.id)}`);
          tasks.push({ git_provider: 'azure_devops', task_type: 'OPEN_ISSUE', repo: `${org}/${project}`, issue_number: Number(ref?.id), title: String(item.body?.fields?.['System.Title'] ?? '') });
        }
      }
      return tasks;
    },
  };
}

export const azureDevops: GitProviderDriver = {
  title: 'Azure DevOps',
  open: (d, base, token) => azureSearch(new AzureDevOpsClient(d, base, token)),
  // As OpenHands checks an Azure DevOps token: the organization's connectionData must name its user.
  async verifyToken(d, base, token) {
    const me = await new AzureDevOpsClient(d, base, token).get('/_apis/connectionData', { 'api-version': '7.1-preview.1' }).catch((err: unknown) => {
      if (err instanceof Forbidden) return null;
      throw err;
    });
    const user = me?.body?.authenticatedUser;
    // An anonymous caller gets connectionData too, with no id of a signed-in user.
    return me?.status === 200 && typeof user?.id === 'string' && typeof user?.providerDisplayName === 'string' ? user.providerDisplayName : null;
  },
};
