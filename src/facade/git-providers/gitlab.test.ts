// The app API's git searches for the gitlab provider, over the app API's real HTTP interface,
// against a stand-in GitLab host over real HTTP (src/testing/gitlab: GitLab's documented status
// codes, error bodies and paging headers; gitlab.com cannot be reached here). What is checked: the
// GITLAB_TOKEN saved through /secrets/git-providers after the host accepted it, sent only to the
// configured host; projects and branches (nested groups too) paged without losing or repeating
// one; suggested tasks as OpenHands builds them, every assigned issue included; OpenHands' errors.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SecretKind } from '../../api/secret.ts';
import { startGitLabStandIn, type GitLabData, type GitLabProject, type GitLabStandIn } from '../../testing/gitlab/server.ts';
import { NS, startHarness, type Harness, walkPages, testGitHosts } from '../test-support.ts';
import { storedSecretsName } from '../user-secrets.ts';

const V1 = '/api/v1';
const ALICE = 'glpat-alice-0123456789';

function project(id: number, path: string, o: Partial<GitLabProject> = {}): GitLabProject {
  return {
    id,
    path,
    group: !path.startsWith('alice-gl/'),
    visibility: 'private',
    stars: id % 4,
    lastActivity: `2026-01-${String(30 - id).padStart(2, '0')}T10:00:00Z`,
    createdAt: `2025-06-${String(id).padStart(2, '0')}T10:00:00Z`,
    defaultBranch: 'main',
    members: ['alice-gl'],
    branches: [{ name: 'main', sha: `${id}`.padStart(40, 'a'), committedDate: '2026-01-01T00:00:00Z' }],
    ...o,
  };
}

const branchNames = ['main', 'dev', 'feature/a', 'feature/b', 'FEATURE-c', 'release/1.0', 'release/1.1', 'hotfix'];
function data(): GitLabData {
  const projects = [
    project(1, 'acme/platform/api', { branches: branchNames.map((name, i) => ({ name, sha: `${i}`.repeat(40), protected: name === 'main', committedDate: `2026-02-0${i + 1}T00:00:00Z` })), stars: 9 }),
    project(2, 'acme/widgets', { visibility: 'public', stars: 5 }),
    project(3, 'alice-gl/notes'),
    project(4, 'acme/platform/web', { visibility: 'internal' }),
    project(5, 'alice-gl/dotfiles', { stars: 7 }),
    project(6, 'acme/infra'),
    project(7, 'tools/lint', { stars: 1 }),
    project(8, 'secret/vault', { members: ['bob-gl'] }),
    project(9, 'public/lib', { visibility: 'public', members: ['bob-gl'] }),
  ];
  const issues = Array.from({ length: 25 }, (_, i) => ({ project: i % 2 ? 'acme/widgets' : 'acme/platform/api', iid: 100 + i, title: `Issue ${i}`, assignees: ['alice-gl'], state: 'opened' as const }));
  issues.push({ project: 'acme/widgets', iid: 300, title: 'Closed', assignees: ['alice-gl'], state: 'closed' as 'opened' });
  issues.push({ project: 'acme/widgets', iid: 301, title: "Bob's", assignees: ['bob-gl'], state: 'opened' });
  const mr = (iid: number, o: Partial<GitLabData['mergeRequests'][number]>) => ({ project: 'acme/platform/api', iid, title: `MR ${iid}`, author: 'alice-gl', state: 'opened' as const, updatedAt: `2026-03-${String(iid).padStart(2, '0')}T00:00:00Z`, conflicts: false, discussions: [], ...o });
  return {
    users: [
      { id: 11, username: 'alice-gl', name: 'Alice' },
      { id: 12, username: 'bob-gl', name: 'Bob' },
    ],
    projects,
    issues,
    mergeRequests: [
      mr(1, { conflicts: true }),
      mr(2, { pipeline: 'FAILED', project: 'acme/widgets' }),
      mr(3, { discussions: [[[false, false]], [[true, true], [true, false]]] }),
      mr(4, { pipeline: 'SUCCESS', discussions: [[[true, true]]] }),
      mr(5, { state: 'merged' as 'opened', conflicts: true }),
      mr(6, { author: 'bob-gl', conflicts: true }),
    ],
    tokens: {
      [ALICE]: { user: 'alice-gl', scopes: ['api'] },
      'glpat-user-only': { user: 'alice-gl', scopes: ['read_user'] },
      'glpat-bob': { user: 'bob-gl', scopes: ['read_api'] },
    },
  };
}

describe('/api/v1/git for gitlab, against a stand-in GitLab over HTTP', () => {
  let gl: GitLabStandIn;
  let h: Harness;

  beforeAll(async () => {
    gl = await startGitLabStandIn(data());
    h = await startHarness(undefined, { gitHosts: testGitHosts({ gitlab: gl.url }) });
  }, 60_000);
  afterAll(async () => {
    await h?.close();
    await gl?.close();
  });

  const walk = (path: string, key?: string) => walkPages(h, path, key);

  it('answers 403 (OpenHands: "Git provider token required") before a token is saved', async () => {
    for (const path of ['/git/repositories/search?provider=gitlab', '/git/branches/search?provider=gitlab&repository=acme/widgets&query=', '/git/suggested-tasks/search']) {
      expect(await h.call('GET', V1 + path), path).toMatchObject({ status: 403, body: { detail: 'Git provider token required (such as GitHub).' } });
    }
    expect(gl.requests).toEqual([]);
  });

  it('saves a gitlab token only after the host accepts it, for the configured host only; never answers it back', async () => {
    const save = (body: unknown) => h.call('POST', `${V1}/secrets/git-providers`, { body });
    const elsewhere = await save({ provider_tokens: { gitlab: { token: ALICE, host: 'gitlab.com' } } });
    expect(elsewhere.status).toBe(422);
    expect(elsewhere.body.detail[0].loc).toEqual(['body', 'provider_tokens', 'gitlab', 'host']);
    const bad = await save({ provider_tokens: { gitlab: { token: 'glpat-nope', host: gl.url } } });
    expect(bad.status).toBe(422);
    expect(bad.body.detail[0]).toMatchObject({ loc: ['body', 'provider_tokens', 'gitlab', 'token'], msg: 'Invalid token. Please make sure it is a valid gitlab token.' });
    expect(await h.store.get(SecretKind, NS, storedSecretsName(h.alice.user.id))).toBeUndefined();

    const ok = await save({ provider_tokens: { gitlab: { token: ALICE, host: `${gl.url}/` } } });
    expect(ok).toMatchObject({ status: 200, body: { message: 'Git providers stored' } });
    const secret = (await h.store.get(SecretKind, NS, storedSecretsName(h.alice.user.id)))!;
    expect(Buffer.from(secret.data!.GITLAB_TOKEN!, 'base64').toString()).toBe(ALICE);
    const settings = await h.call('GET', `${V1}/settings`);
    expect(settings.body.provider_tokens_set).toEqual({ gitlab: gl.url });
    const secrets = await h.call('GET', `${V1}/secrets/search`);
    expect(secrets.body.items).toEqual([{ name: 'GITLAB_TOKEN', description: `gitlab token of alice-gl on ${gl.url}` }]);
    for (const r of [ok, settings, secrets, bad, elsewhere]) expect(JSON.stringify(r.body)).not.toContain(ALICE);
    // The check is OpenHands': GET /api/v4/user with the token as a Bearer token.
    expect(gl.requests.map((r) => [r.method, r.path, r.authorization])).toEqual([
      ['GET', '/api/v4/user', 'Bearer glpat-nope'],
      ['GET', '/api/v4/user', `Bearer ${ALICE}`],
    ]);
  });

  it("lists the caller's projects by last activity, page by page: every one once, at any limit", async () => {
    const expected = gl.data.projects
      .filter((p) => p.members.includes('alice-gl'))
      .sort((a, b) => b.lastActivity.localeCompare(a.lastActivity))
      .map((p) => p.path);
    expect(expected).toHaveLength(7);
    for (const limit of [1, 2, 3, 100]) {
      const { items, pages } = await walk(`${V1}/git/repositories/search?provider=gitlab&limit=${limit}`);
      expect(items.map((r) => r.full_name), `limit ${limit}`).toEqual(expected);
      expect(pages).toBe(Math.ceil(expected.length / limit));
    }
    const first = await h.call('GET', `${V1}/git/repositories/search?provider=gitlab&limit=2`);
    expect(first.body.items[0]).toEqual({
      id: '1',
      full_name: 'acme/platform/api',
      git_provider: 'gitlab',
      is_public: false,
      stargazers_count: 9,
      link_header: expect.stringContaining('rel="next"'),
      pushed_at: null,
      owner_type: 'organization',
      main_branch: 'main',
    });
    const listing = gl.requests.filter((r) => r.path === '/api/v4/projects').at(-1)!;
    expect(Object.fromEntries(listing.query)).toMatchObject({ membership: 'true', order_by: 'last_activity_at', sort: 'desc', page: '1', per_page: '3' });
    expect((await h.call('GET', `${V1}/git/repositories/search?provider=gitlab&query=notes`)).body.items[0]).toMatchObject({ full_name: 'alice-gl/notes', owner_type: 'user' });
    expect(await h.call('GET', `${V1}/git/repositories/search?provider=gitlab&sort_order=stars-desc`)).toMatchObject({
      status: 400,
      body: { detail: 'sort_order is not supported when listing user repositories. It will be supported after API refactoring.' },
    });
  });

  it('searches projects (names and namespaces) in the sort_order asked, paged; a project URL names one project', async () => {
    const { items } = await walk(`${V1}/git/repositories/search?provider=gitlab&query=PLATFORM&limit=1`);
    expect(items.map((r) => r.full_name)).toEqual(['acme/platform/api', 'acme/platform/web']);
    const byStars = await walk(`${V1}/git/repositories/search?provider=gitlab&query=a&sort_order=stars-asc&limit=2`);
    const stars = byStars.items.map((r) => r.stargazers_count);
    expect(stars).toEqual([...stars].sort((a, b) => a - b));
    expect(byStars.items).toHaveLength(6);
    const search = gl.requests.filter((r) => r.query.get('search') === 'a').at(-1)!;
    expect(Object.fromEntries(search.query)).toMatchObject({ membership: 'true', search_namespaces: 'true', order_by: 'star_count', sort: 'asc' });
    // Default: stars, most first.
    const byDefault = await h.call('GET', `${V1}/git/repositories/search?provider=gitlab&query=a&limit=2`);
    expect(byDefault.body.items.map((r: any) => r.full_name)).toEqual(['acme/platform/api', 'alice-gl/dotfiles']);

    const url = await h.call('GET', `${V1}/git/repositories/search?provider=gitlab&query=${encodeURIComponent(`${gl.url}/public/lib/-/tree/main`)}`);
    expect(url.body).toEqual({ items: [expect.objectContaining({ full_name: 'public/lib', is_public: true, link_header: null })], next_page_id: null });
    const hidden = await h.call('GET', `${V1}/git/repositories/search?provider=gitlab&query=${encodeURIComponent(`${gl.url}/secret/vault`)}`);
    expect(hidden.body).toEqual({ items: [], next_page_id: null });
  });

  it('lists and searches the branches of a nested project without losing one; a project the token cannot see has none', async () => {
    const sorted = [...branchNames].sort();
    for (const limit of [1, 3, 30]) {
      const { items } = await walk(`${V1}/git/branches/search?provider=gitlab&repository=acme/platform/api&query=&limit=${limit}`);
      expect(items.map((b) => b.name), `limit ${limit}`).toEqual(sorted);
    }
    const { items } = await walk(`${V1}/git/branches/search?provider=gitlab&repository=acme/platform/api&query=&limit=30`);
    expect(items.find((b) => b.name === 'main')).toEqual({ name: 'main', commit_sha: '0'.repeat(40), protected: true, last_push_date: '2026-02-01T00:00:00Z' });
    const search = await walk(`${V1}/git/branches/search?provider=gitlab&repository=acme/platform/api&query=feature&limit=2`);
    expect(search.items.map((b) => b.name)).toEqual(['FEATURE-c', 'feature/a', 'feature/b']);
    expect(search.pages).toBe(2);
    expect(gl.requests.some((r) => r.path === '/api/v4/projects/acme%2Fplatform%2Fapi/repository/branches' && r.query.get('search') === 'feature')).toBe(true);
    for (const repo of ['secret/vault', 'acme/nothing']) {
      expect(await h.call('GET', `${V1}/git/branches/search?provider=gitlab&repository=${repo}&query=`), repo).toMatchObject({ status: 200, body: { items: [], next_page_id: null } });
    }
  });

  it("builds suggested tasks as OpenHands does: merge requests that need work, then every open issue assigned to the caller", async () => {
    const { items, pages } = await walk(`${V1}/git/suggested-tasks/search?limit=10`);
    expect(items.slice(0, 3)).toEqual([
      { git_provider: 'gitlab', task_type: 'UNRESOLVED_COMMENTS', repo: 'acme/platform/api', issue_number: 3, title: 'MR 3' },
      { git_provider: 'gitlab', task_type: 'FAILING_CHECKS', repo: 'acme/widgets', issue_number: 2, title: 'MR 2' },
      { git_provider: 'gitlab', task_type: 'MERGE_CONFLICTS', repo: 'acme/platform/api', issue_number: 1, title: 'MR 1' },
    ]);
    const issues = items.slice(3);
    expect(issues).toHaveLength(25);
    expect(issues[0]).toEqual({ git_provider: 'gitlab', task_type: 'OPEN_ISSUE', repo: 'acme/platform/api', issue_number: 100, title: 'Issue 0' });
    expect(new Set(issues.map((t) => t.issue_number)).size).toBe(25);
    expect(pages).toBe(3);
    const graphql = gl.requests.filter((r) => r.path === '/api/graphql');
    expect(graphql.length).toBeGreaterThan(0);
    expect(graphql.every((r) => r.method === 'POST' && r.authorization === `Bearer ${ALICE}`)).toBe(true);
  });

  it("answers OpenHands' errors: no installations (400), bad limits and page ids 422", async () => {
    expect(await h.call('GET', `${V1}/git/installations/search?provider=gitlab`)).toMatchObject({ status: 400, body: { detail: "Provider gitlab doesn't support installations" } });
    for (const [q, loc] of [
      ['provider=gitlab&limit=0', 'limit'],
      ['provider=gitlab&page_id=bm9wZQ', 'page_id'],
    ] as const) {
      const r = await h.call('GET', `${V1}/git/repositories/search?${q}`);
      expect(r.status, q).toBe(422);
      expect(r.body.detail[0].loc, q).toEqual(['query', loc]);
    }
  });

  it('sends every token to the configured host only, as a Bearer token', async () => {
    expect(gl.requests.length).toBeGreaterThan(20);
    const sent = new Set(gl.requests.map((r) => r.authorization));
    expect([...sent].sort()).toEqual(['Bearer glpat-nope', `Bearer ${ALICE}`].sort());
  });

  it('answers 403 naming the missing scope, and "Invalid gitlab token" once the host no longer knows the token', async () => {
    const save = await h.call('POST', `${V1}/secrets/git-providers`, { key: h.bob.key, body: { provider_tokens: { gitlab: { token: 'glpat-user-only' } } } });
    expect(save.status).toBe(200);
    expect(await h.call('GET', `${V1}/git/repositories/search?provider=gitlab`, { key: h.bob.key })).toMatchObject({
      status: 403,
      body: { detail: 'The gitlab host refused this token access to /api/v4/projects (a scope or permission it lacks?)' },
    });
    delete gl.data.tokens['glpat-user-only'];
    const r = await h.call('GET', `${V1}/git/suggested-tasks/search`, { key: h.bob.key });
    expect(r).toMatchObject({ status: 403, body: { detail: 'Invalid gitlab token' } });
    expect(JSON.stringify(r.body)).not.toContain('glpat-user-only');
    expect((await h.call('DELETE', `${V1}/secrets/git-providers`, { key: h.bob.key })).status).toBe(200);
    expect((await h.call('GET', `${V1}/settings`, { key: h.bob.key })).body.provider_tokens_set).toEqual({});
  });
});
