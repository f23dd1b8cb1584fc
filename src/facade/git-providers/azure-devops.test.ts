// The app API's git searches for the azure_devops provider, over the app API's real HTTP
// interface, against a stand-in Azure DevOps organization over real HTTP (src/testing/azure-devops:
// its documented auth, api-version, error bodies, {count, value} lists and continuation tokens;
// dev.azure.com cannot be reached here). Checked: the token's check and its two forms (a PAT as
// basic credentials, a JWT as Bearer), the organization as the one installation, repositories as
// organization/project/repo across projects, searches, branches with commit dates and policies,
// suggested tasks as OpenHands builds them, every page exact, the token sent to that organization only.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAzureDevOpsStandIn, type AzureData, type AzureStandIn } from '../../testing/azure-devops/server.ts';
import { organizationOf } from './azure-devops.ts';
import { splitRepository } from './pages.ts';
import { startHarness, type Harness, walkPages, testGitHosts } from '../test-support.ts';

const V1 = '/api/v1';
const PAT = 'pat0123456789abcdef';
const JWT = 'eyJhbGciOi.eyJzdWIiOi.c2lnbmF0dXJl';

const branches = ['main', 'dev', 'feature/one', 'Feature/Two', 'release'].map((name, i) => ({ name, sha: `${i + 1}`.repeat(40), date: `2026-03-0${i + 1}T00:00:00Z`, policy: name === 'main' || name === 'release' }));
function data(): AzureData {
  return {
    organization: 'contoso',
    user: { id: 'u-1', displayName: 'Alice Azure' },
    projects: ['Fabrikam', 'My Project', 'Empty', 'Tools'],
    repos: [
      { project: 'Fabrikam', name: 'api', id: 'r-api', branches },
      { project: 'Fabrikam', name: 'web', id: 'r-web', branches: [] },
      { project: 'My Project', name: 'app', id: 'r-app', branches: [] },
      { project: 'My Project', name: 'api-docs', id: 'r-docs', branches: [] },
      { project: 'Tools', name: 'lint', id: 'r-lint', branches: [] },
    ],
    pullRequests: [
      { project: 'Fabrikam', repo: 'api', id: 11, title: 'Conflicting', creatorId: 'u-1', status: 'active', mergeStatus: 'conflicts' },
      { project: 'Fabrikam', repo: 'web', id: 12, title: 'Clean', creatorId: 'u-1', status: 'active' },
      { project: 'My Project', repo: 'app', id: 13, title: 'Discussed', creatorId: 'u-1', status: 'active', hasUnresolvedComments: true },
      { project: 'My Project', repo: 'app', id: 14, title: 'Someone else', creatorId: 'u-2', status: 'active', mergeStatus: 'conflicts' },
      { project: 'Tools', repo: 'lint', id: 15, title: 'Done', creatorId: 'u-1', status: 'completed', mergeStatus: 'conflicts' },
    ],
    workItems: [
      { project: 'Fabrikam', id: 101, title: 'Fix login', assignedToMe: true, state: 'Active' },
      { project: 'Fabrikam', id: 102, title: 'Closed one', assignedToMe: true, state: 'Closed' },
      { project: 'Tools', id: 103, title: 'Not mine', assignedToMe: false, state: 'Active' },
      { project: 'Tools', id: 104, title: 'Speed up lint', assignedToMe: true, state: 'Active' },
    ],
    tokens: [PAT, JWT],
  };
}

describe('azure devops names', () => {
  it('takes the organization from the configured URL, and organization/project/repo (spaces, URLs) from a request', () => {
    expect(organizationOf('https://dev.azure.com/contoso')).toBe('contoso');
    expect(organizationOf('https://dev.azure.com/contoso/')).toBe('contoso');
    expect(splitRepository('contoso/My Project/app').path).toBe('contoso/My Project/app');
    expect(splitRepository('https://dev.azure.com/contoso/My%20Project/_git/app').path).toBe('contoso/My Project/app');
    expect(splitRepository('group/sub/project').path).toBe('group/sub/project');
    expect(splitRepository('https://gitlab.example.com/group/sub/project/-/tree/main').path).toBe('group/sub/project');
    expect(splitRepository('acme/widgets').path).toBe('acme/widgets');
  });
});

describe('/api/v1/git for azure_devops, against a stand-in Azure DevOps organization over HTTP', () => {
  let az: AzureStandIn;
  let h: Harness;

  beforeAll(async () => {
    // Pages of 2: lists of projects and refs come in several, with continuation tokens.
    az = await startAzureDevOpsStandIn(data(), { pageSize: 2 });
    h = await startHarness(undefined, { gitHosts: testGitHosts({ azure_devops: az.url }) });
  }, 60_000);
  afterAll(async () => {
    await h?.close();
    await az?.close();
  });

  const walk = (path: string, key?: string) => walkPages(h, path, key);

  it('answers 403 before a token is saved; saves one only after connectionData names its user', async () => {
    expect(await h.call('GET', `${V1}/git/installations/search?provider=azure_devops`)).toMatchObject({ status: 403, body: { detail: 'Git provider token required (such as GitHub).' } });
    const save = (body: unknown, key?: string) => h.call('POST', `${V1}/secrets/git-providers`, { body, ...(key ? { key } : {}) });
    expect((await save({ provider_tokens: { azure_devops: { token: PAT, host: 'https://dev.azure.com/evil' } } })).status).toBe(422);
    const bad = await save({ provider_tokens: { azure_devops: { token: 'expired-pat', host: az.url } } });
    expect(bad.body.detail[0]).toMatchObject({ loc: ['body', 'provider_tokens', 'azure_devops', 'token'], msg: 'Invalid token. Please make sure it is a valid azure_devops token.' });
    expect((await save({ provider_tokens: { azure_devops: { token: PAT, host: az.url } } })).status).toBe(200);
    expect((await h.call('GET', `${V1}/secrets/search`)).body.items).toEqual([{ name: 'AZURE_DEVOPS_TOKEN', description: `azure_devops token of Alice Azure on ${az.url}` }]);
    expect((await h.call('GET', `${V1}/settings`)).body.provider_tokens_set).toEqual({ azure_devops: az.url });
    const check = az.requests.at(-1)!;
    expect(check).toMatchObject({ path: '/contoso/_apis/connectionData', authorization: `Basic ${Buffer.from(`:${PAT}`).toString('base64')}` });
    expect(check.query.get('api-version')).toBe('7.1-preview.1');

    expect((await save({ provider_tokens: { azure_devops: { token: JWT } } }, h.bob.key)).status).toBe(200);
    expect(az.requests.at(-1)!.authorization).toBe(`Bearer ${JWT}`);
  });

  it('has the organization as its one installation', async () => {
    expect(await h.call('GET', `${V1}/git/installations/search?provider=azure_devops`)).toMatchObject({ status: 200, body: { items: ['contoso'], next_page_id: null } });
  });

  it('lists repositories project by project as organization/project/repo, every page exact', async () => {
    const expected = ['contoso/Fabrikam/api', 'contoso/Fabrikam/web', 'contoso/My Project/app', 'contoso/My Project/api-docs', 'contoso/Tools/lint'];
    for (const limit of [1, 2, 3, 100]) {
      const { items, pages } = await walk(`${V1}/git/repositories/search?provider=azure_devops&limit=${limit}`);
      expect(items.map((r) => r.full_name), `limit ${limit}`).toEqual(expected);
      expect(pages).toBe(Math.ceil(expected.length / limit));
    }
    const one = await h.call('GET', `${V1}/git/repositories/search?provider=azure_devops&limit=1`);
    expect(one.body.items[0]).toEqual({ id: 'r-api', full_name: 'contoso/Fabrikam/api', git_provider: 'azure_devops', is_public: false, stargazers_count: null, link_header: null, pushed_at: null, owner_type: null, main_branch: null });
    // Every project was read, past the first page of them.
    expect(az.requests.some((r) => r.path === '/contoso/_apis/projects' && r.query.get('continuationToken') === '2')).toBe(true);
  });

  it('searches repositories by name in the organization, paged; a repository URL names that repository', async () => {
    const { items } = await walk(`${V1}/git/repositories/search?provider=azure_devops&query=API&limit=1`);
    expect(items.map((r) => r.full_name)).toEqual(['contoso/Fabrikam/api', 'contoso/My Project/api-docs']);
    const url = await h.call('GET', `${V1}/git/repositories/search?provider=azure_devops&query=${encodeURIComponent(`${az.url}/My%20Project/_git/app`)}`);
    expect(url.body).toEqual({ items: [expect.objectContaining({ id: 'r-app', full_name: 'contoso/My Project/app' })], next_page_id: null });
  });

  it('lists branches with commit dates and branch policies, and searches them, every page exact; other repositories have none', async () => {
    for (const limit of [1, 2, 30]) {
      const { items } = await walk(`${V1}/git/branches/search?provider=azure_devops&repository=contoso/Fabrikam/api&query=&limit=${limit}`);
      expect(items, `limit ${limit}`).toEqual(branches.map((b) => ({ name: b.name, commit_sha: b.sha, protected: b.policy, last_push_date: b.date })));
    }
    const found = await walk(`${V1}/git/branches/search?provider=azure_devops&repository=${encodeURIComponent('contoso/Fabrikam/api')}&query=feature&limit=1`);
    expect(found.items.map((b) => [b.name, b.protected, b.last_push_date])).toEqual([
      ['feature/one', false, '2026-03-03T00:00:00Z'],
      ['Feature/Two', false, '2026-03-04T00:00:00Z'],
    ]);
    for (const repository of ['contoso/Fabrikam/missing', 'fabrikam-other-org/Fabrikam/api', 'contoso/api']) {
      expect(await h.call('GET', `${V1}/git/branches/search?provider=azure_devops&repository=${encodeURIComponent(repository)}&query=`), repository).toMatchObject({ status: 200, body: { items: [], next_page_id: null } });
    }
    expect(az.requests.some((r) => r.path.includes('fabrikam-other-org'))).toBe(false);
  });

  it('builds suggested tasks as OpenHands does: pull requests that need work and active work items assigned to the caller, project by project', async () => {
    const { items } = await walk(`${V1}/git/suggested-tasks/search?limit=2`);
    expect(items).toEqual([
      { git_provider: 'azure_devops', task_type: 'MERGE_CONFLICTS', repo: 'contoso/Fabrikam/api', issue_number: 11, title: 'Conflicting' },
      { git_provider: 'azure_devops', task_type: 'OPEN_ISSUE', repo: 'contoso/Fabrikam', issue_number: 101, title: 'Fix login' },
      { git_provider: 'azure_devops', task_type: 'UNRESOLVED_COMMENTS', repo: 'contoso/My Project/app', issue_number: 13, title: 'Discussed' },
      { git_provider: 'azure_devops', task_type: 'OPEN_ISSUE', repo: 'contoso/Tools', issue_number: 104, title: 'Speed up lint' },
    ]);
  });

  it('sends tokens to the configured organization only, and answers "Invalid azure_devops token" once it is revoked', async () => {
    expect(az.requests.every((r) => r.path.startsWith('/contoso/'))).toBe(true);
    az.data.tokens = az.data.tokens.filter((t) => t !== JWT);
    const r = await h.call('GET', `${V1}/git/repositories/search?provider=azure_devops`, { key: h.bob.key });
    expect(r).toMatchObject({ status: 403, body: { detail: 'Invalid azure_devops token' } });
  });
});
