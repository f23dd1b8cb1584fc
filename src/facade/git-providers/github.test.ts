// The app API's git searches for the github provider, through the facade's HTTP API, against the
// GitHub stand-in (src/testing/github: GitHub's REST and GraphQL answers over real HTTP, as a GitHub
// Enterprise Server at the configured host): the token saved through /secrets/git-providers (checked
// with the host, kept as GITHUB_TOKEN, never answered back), repositories, searches, branches,
// installations and suggested tasks paged without losing or repeating one, and GitHub's refusals
// (bad credentials, rate limits, failures) answered as this API's errors.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { SecretKind } from '../../api/secret.ts';
import { githubApiUrls, nextLink } from '../../util/github-api.ts';
import { startGitHubStandIn, type GitHubStandIn, type StandInRepo } from '../../testing/github/server.ts';
import { NS, startHarness, type Harness, walkPages, testGitHosts } from '../test-support.ts';
import { storedSecretsName } from '../user-secrets.ts';

const V1 = '/api/v1';
const TOKEN = 'ghu_octo_app_token_0001';
const PAT = 'ghp_pat_token_of_bob_0002';

describe('where a GitHub host keeps its API', () => {
  it('is api.github.com for github.com, and /api/v3 and /api/graphql of any other host (GitHub Enterprise Server)', () => {
    expect(githubApiUrls('https://github.com')).toEqual({ rest: 'https://api.github.com', graphql: 'https://api.github.com/graphql' });
    expect(githubApiUrls('https://ghe.example.com/')).toEqual({ rest: 'https://ghe.example.com/api/v3', graphql: 'https://ghe.example.com/api/graphql' });
    expect(githubApiUrls('http://127.0.0.1:8080')).toEqual({ rest: 'http://127.0.0.1:8080/api/v3', graphql: 'http://127.0.0.1:8080/api/graphql' });
  });
  it('reads rel="next" of a Link header', () => {
    expect(nextLink('<https://x/a?page=1>; rel="prev", <https://x/a?page=3>; rel="next", <https://x/a?page=9>; rel="last"')).toBe('https://x/a?page=3');
    expect(nextLink('<https://x/a?page=1>; rel="first"')).toBeNull();
    expect(nextLink(null)).toBeNull();
  });
});

describe('/api/v1/git for github, against the GitHub stand-in', { timeout: 30_000 }, () => {
  let gh: GitHubStandIn;
  let h: Harness;

  const repo = (owner: string, name: string, more: Partial<StandInRepo> = {}): StandInRepo => ({ owner, name, ...more });
  beforeAll(async () => {
    gh = await startGitHubStandIn();
    gh.users.push(
      {
        login: 'octo',
        id: 101,
        token: TOKEN,
        tokenKind: 'app',
        orgs: ['acme', 'widget-works'],
        installations: [
          { id: 11, account: 'octo', accountType: 'User', repositories: ['octo/alpha'] },
          { id: 12, account: 'acme', accountType: 'Organization', repositories: ['acme/widgets', 'acme/gadgets', 'acme/private-tools'] },
          { id: 13, account: 'widget-works', accountType: 'Organization', repositories: [] },
        ],
      },
      { login: 'bob', id: 102, token: PAT, tokenKind: 'pat' },
    );
    // Pushed at distinct times: GitHub's sort=pushed is newest first.
    const at = (d: number) => `2026-02-${String(d).padStart(2, '0')}T10:00:00Z`;
    gh.repos.push(
      repo('octo', 'alpha', { stars: 5, pushedAt: at(20), private: true }),
      repo('octo', 'beta', { stars: 1, pushedAt: at(3) }),
      repo('octo', 'widget-notes', { stars: 0, pushedAt: at(11) }),
      repo('acme', 'widgets', {
        ownerType: 'Organization',
        stars: 50,
        pushedAt: at(15),
        defaultBranch: 'trunk',
        branches: ['trunk', 'feature/a', 'feature/b', 'feature/c', 'fix/1', 'release/1.0', 'release/2.0'].map((name, i) => ({ name, sha: String(i).repeat(40), protected: name === 'trunk', committedDate: at(i + 1) })),
      }),
      repo('acme', 'gadgets', { ownerType: 'Organization', stars: 7, pushedAt: at(9) }),
      repo('acme', 'private-tools', { ownerType: 'Organization', private: true, stars: 2, pushedAt: at(25) }),
      repo('widget-works', 'core', { ownerType: 'Organization', stars: 30, pushedAt: at(1) }),
      repo('widget-works', 'docs', { ownerType: 'Organization', stars: 3, pushedAt: at(2) }),
      repo('widget-works', 'site', { ownerType: 'Organization', stars: 9, pushedAt: at(4) }),
      repo('stranger', 'widgets-secret', { private: true, stars: 99 }),
      repo('stranger', 'public-widget', { stars: 40, pushedAt: at(5) }),
    );
    gh.pulls.push(
      { repo: 'acme/widgets', number: 1, title: 'Conflicting', author: 'octo', mergeable: 'CONFLICTING', checks: 'FAILURE', updatedAt: at(20) },
      { repo: 'acme/widgets', number: 2, title: 'Red checks', author: 'octo', checks: 'FAILURE', updatedAt: at(19) },
      { repo: 'octo/alpha', number: 3, title: 'Reviewed', author: 'octo', checks: 'SUCCESS', reviews: ['APPROVED', 'CHANGES_REQUESTED'], updatedAt: at(18) },
      { repo: 'octo/alpha', number: 4, title: 'All green', author: 'octo', checks: 'SUCCESS', reviews: ['APPROVED'], updatedAt: at(17) },
      { repo: 'octo/beta', number: 5, title: 'Closed one', author: 'octo', state: 'CLOSED', mergeable: 'CONFLICTING' },
      { repo: 'acme/gadgets', number: 6, title: 'Someone else', author: 'bob', mergeable: 'CONFLICTING' },
    );
    gh.issues.push(
      { repo: 'acme/gadgets', number: 7, title: 'Assigned to me', assignees: ['octo'], updatedAt: at(10) },
      { repo: 'octo/beta', number: 8, title: 'Mine too', assignees: ['bob', 'octo'], updatedAt: at(12) },
      { repo: 'octo/beta', number: 9, title: 'Not mine', assignees: ['bob'] },
      { repo: 'octo/beta', number: 10, title: 'Closed', assignees: ['octo'], state: 'CLOSED' },
    );
    h = await startHarness(undefined, { gitHosts: testGitHosts({ github: gh.url }) });
  });
  afterAll(async () => {
    await h?.close();
    await gh?.close();
  });
  beforeEach(() => {
    gh.requests.length = 0;
  });

  const walk = (path: string, key?: string) => walkPages(h, path, key);
  /** The stand-in's own answer, all pages (what a client of GitHub sees). */
  async function direct(path: string, token = TOKEN): Promise<any[]> {
    const out: any[] = [];
    for (let url: string | null = `${gh.url}/api/v3${path}${path.includes('?') ? '&' : '?'}per_page=100`; url; ) {
      const r = await fetch(url, { headers: { authorization: `Bearer ${token}` } });
      const body = (await r.json()) as any;
      out.push(...(Array.isArray(body) ? body : (body.items ?? body.repositories ?? body.installations)));
      url = nextLink(r.headers.get('link'));
    }
    return out;
  }

  it('answers 403 "Git provider token required" before a token is saved, without calling GitHub', async () => {
    for (const path of ['installations/search?provider=github', 'repositories/search?provider=github', 'branches/search?provider=github&repository=acme/widgets&query=', 'suggested-tasks/search']) {
      expect(await h.call('GET', `${V1}/git/${path}`), path).toMatchObject({ status: 403, body: { detail: 'Git provider token required (such as GitHub).' } });
    }
    expect(gh.requests).toEqual([]);
  });

  it('saves a github token only after GitHub accepts it, for the configured host only; never answers it back', async () => {
    const save = (body: unknown, key?: string) => h.call('POST', `${V1}/secrets/git-providers`, { body, ...(key ? { key } : {}) });
    const wrongHost = await save({ provider_tokens: { github: { token: TOKEN, host: 'github.com' } } });
    expect(wrongHost.status).toBe(422);
    expect(wrongHost.body.detail[0]).toMatchObject({ loc: ['body', 'provider_tokens', 'github', 'host'], msg: `This installation's github host is ${gh.url}; tokens are sent there only` });
    const bad = await save({ provider_tokens: { github: { token: 'ghp_not_a_token', host: gh.url } } });
    expect(bad.status).toBe(422);
    expect(bad.body.detail[0]).toMatchObject({ loc: ['body', 'provider_tokens', 'github', 'token'], msg: 'Invalid token. Please make sure it is a valid github token.' });
    expect(await h.store.get(SecretKind, NS, storedSecretsName(h.alice.user.id))).toBeUndefined();
    // The refused token reached GitHub's /user, and only that (the wrong host was refused before any call).
    expect(gh.requests.map((r) => [r.method, r.path, r.authorization])).toEqual([['GET', '/user', 'Bearer ghp_not_a_token']]);

    const ok = await save({ provider_tokens: { github: { token: TOKEN, host: `${gh.url}/`, user_id: null } } });
    expect(ok).toMatchObject({ status: 200, body: { message: 'Git providers stored' } });
    const secret = (await h.store.get(SecretKind, NS, storedSecretsName(h.alice.user.id)))!;
    expect(Buffer.from(secret.data!.GITHUB_TOKEN!, 'base64').toString()).toBe(TOKEN);
    const settings = await h.call('GET', `${V1}/settings`);
    expect(settings.body.provider_tokens_set).toEqual({ github: gh.url });
    const secrets = await h.call('GET', `${V1}/secrets/search`);
    expect(secrets.body.items).toEqual([{ name: 'GITHUB_TOKEN', description: `github token of octo on ${gh.url}` }]);
    for (const r of [ok, settings, secrets, bad]) expect(JSON.stringify(r.body)).not.toContain(TOKEN);
    // Every call went to the configured host's Enterprise API, with the token as GitHub documents it.
    expect(gh.requests.every((r) => r.host === new URL(gh.url).host)).toBe(true);

    expect((await save({ provider_tokens: { github: { token: PAT } } }, h.bob.key)).status).toBe(200);
  });

  it("lists the caller's repositories page by page, newest push first: every one once, at any limit", async () => {
    const expected = (await direct('/user/repos?sort=pushed')).map((r) => r.full_name);
    expect(expected).toEqual(['acme/private-tools', 'octo/alpha', 'acme/widgets', 'octo/widget-notes', 'acme/gadgets', 'widget-works/site', 'octo/beta', 'widget-works/docs', 'widget-works/core']);
    for (const limit of [1, 2, 4, 100]) {
      const { items, pages } = await walk(`${V1}/git/repositories/search?provider=github&limit=${limit}`);
      expect(items.map((r) => r.full_name), `limit ${limit}`).toEqual(expected);
      expect(pages).toBe(Math.ceil(expected.length / limit));
    }
    const first = await h.call('GET', `${V1}/git/repositories/search?provider=github&limit=2`);
    expect(first.body.items[1]).toEqual({
      id: expect.stringMatching(/^[0-9]+$/),
      full_name: 'octo/alpha',
      git_provider: 'github',
      is_public: false,
      stargazers_count: 5,
      link_header: expect.stringContaining('rel="next"'),
      pushed_at: '2026-02-20T10:00:00Z',
      owner_type: 'user',
      main_branch: 'main',
    });
    expect(first.body.items[0].owner_type).toBe('organization');
    // OpenHands' request: GET /user/repos sorted by push, per_page limit+1.
    const call = gh.requests.findLast((r) => r.path === '/user/repos')!;
    expect(Object.fromEntries(call.query)).toEqual({ per_page: '3', page: '1', sort: 'pushed' });
    expect(call.authorization).toBe(`Bearer ${TOKEN}`);
    const bySort = await h.call('GET', `${V1}/git/repositories/search?provider=github&sort_order=stars-desc`);
    expect(bySort).toMatchObject({ status: 400, body: { detail: 'sort_order is not supported when listing user repositories. It will be supported after API refactoring.' } });
  });

  it("lists GitHub App installations, and an installation's repositories; a personal access token has none", async () => {
    const all = await walk(`${V1}/git/installations/search?provider=github&limit=2`);
    expect(all).toEqual({ pages: 2, items: ['11', '12', '13'] });
    const { items } = await walk(`${V1}/git/repositories/search?provider=github&installation_id=12&limit=2`);
    expect(items.map((r) => r.full_name)).toEqual(['acme/widgets', 'acme/gadgets', 'acme/private-tools']);
    expect(await h.call('GET', `${V1}/git/repositories/search?provider=github&installation_id=99`)).toMatchObject({ status: 404 });
    const malformed = await h.call('GET', `${V1}/git/repositories/search?provider=github&installation_id=../../user`);
    expect(malformed.status).toBe(422);
    expect(malformed.body.detail[0].loc).toEqual(['query', 'installation_id']);
    expect(await h.call('GET', `${V1}/git/installations/search?provider=github`, { key: h.bob.key })).toMatchObject({ status: 200, body: { items: [], next_page_id: null } });
  });

  it("searches as OpenHands asks GitHub: the caller's and their organizations' repositories by name, an organization's, a public URL", async () => {
    const { items, pages } = await walk(`${V1}/git/repositories/search?provider=github&query=widget&limit=2`);
    // octo's own (user:octo), then each organization's, then the top two of an organization whose name matches; each once.
    expect(items.map((r) => r.full_name)).toEqual(['octo/widget-notes', 'acme/widgets', 'widget-works/core', 'widget-works/site']);
    expect(pages).toBe(2);
    const qs = new Set(gh.requests.filter((r) => r.path === '/search/repositories').map((r) => r.query.get('q')));
    expect([...qs]).toEqual(['in:name widget user:octo', 'widget org:acme', 'widget org:widget-works', 'org:widget-works']);
    // Only repositories the token can see: never stranger/widgets-secret.
    expect(items.some((r) => r.full_name === 'stranger/widgets-secret')).toBe(false);

    const inOrg = await h.call('GET', `${V1}/git/repositories/search?provider=github&query=${encodeURIComponent('acme/gad')}`);
    expect(inOrg.body.items.map((r: any) => r.full_name)).toEqual(['acme/gadgets']);
    expect(gh.requests.at(-1)!.query.get('q')).toBe('org:acme in:name gad');

    const byUrl = await h.call('GET', `${V1}/git/repositories/search?provider=github&query=${encodeURIComponent(`${gh.url}/stranger/public-widget`)}`);
    expect(byUrl.body.items.map((r: any) => r.full_name)).toEqual(['stranger/public-widget']);
    expect(gh.requests.at(-1)!.query.get('q')).toBe('in:name stranger/public-widget is:public');
    const privateByUrl = await h.call('GET', `${V1}/git/repositories/search?provider=github&query=${encodeURIComponent(`${gh.url}/acme/private-tools`)}`);
    expect(privateByUrl.body.items).toEqual([]);

    const asc = await h.call('GET', `${V1}/git/repositories/search?provider=github&query=${encodeURIComponent('widget-works/o')}&sort_order=stars-asc`);
    expect(asc.body.items.map((r: any) => r.full_name)).toEqual(['widget-works/docs', 'widget-works/core']);
    expect(Object.fromEntries(gh.requests.at(-1)!.query)).toMatchObject({ sort: 'stars', order: 'asc' });
  });

  it('lists branches page by page and searches them by name (GraphQL refs), every page reachable', async () => {
    const listed = await direct('/repos/acme/widgets/branches');
    for (const limit of [1, 3, 30]) {
      const { items } = await walk(`${V1}/git/branches/search?provider=github&repository=acme/widgets&query=&limit=${limit}`);
      expect(items, `limit ${limit}`).toEqual(listed.map((b) => ({ name: b.name, commit_sha: b.commit.sha, protected: b.name === 'trunk', last_push_date: null })));
    }
    const { items, pages } = await walk(`${V1}/git/branches/search?provider=github&repository=${encodeURIComponent('https://github.com/acme/widgets.git')}&query=FEATURE&limit=2`);
    expect(items).toEqual(['feature/a', 'feature/b', 'feature/c'].map((name, i) => ({ name, commit_sha: String(i + 1).repeat(40), protected: false, last_push_date: `2026-02-0${i + 2}T10:00:00Z` })));
    expect(pages).toBe(2);
    const gql = gh.requests.filter((r) => r.graphql);
    expect(gql.map((r) => r.graphql!.variables)).toEqual([
      { owner: 'acme', name: 'widgets', query: 'FEATURE', first: 3, after: null },
      { owner: 'acme', name: 'widgets', query: 'FEATURE', first: 5, after: null },
    ]);
    for (const path of ['acme/nothing-here', 'stranger/widgets-secret']) {
      for (const query of ['', 'x']) {
        expect(await h.call('GET', `${V1}/git/branches/search?provider=github&repository=${path}&query=${query}`), `${path} ${query}`).toMatchObject({ status: 200, body: { items: [], next_page_id: null } });
      }
    }
  });

  it('suggests the open pull requests with something to do and the open issues assigned, as OpenHands, paged', async () => {
    const { items, pages } = await walk(`${V1}/git/suggested-tasks/search?limit=2`);
    expect(items).toEqual([
      { git_provider: 'github', task_type: 'MERGE_CONFLICTS', repo: 'acme/widgets', issue_number: 1, title: 'Conflicting' },
      { git_provider: 'github', task_type: 'FAILING_CHECKS', repo: 'acme/widgets', issue_number: 2, title: 'Red checks' },
      { git_provider: 'github', task_type: 'UNRESOLVED_COMMENTS', repo: 'octo/alpha', issue_number: 3, title: 'Reviewed' },
      { git_provider: 'github', task_type: 'OPEN_ISSUE', repo: 'octo/beta', issue_number: 8, title: 'Mine too' },
      { git_provider: 'github', task_type: 'OPEN_ISSUE', repo: 'acme/gadgets', issue_number: 7, title: 'Assigned to me' },
    ]);
    expect(pages).toBe(3);
    expect(gh.requests.filter((r) => r.graphql).map((r) => r.graphql!.variables)).toContainEqual({ login: 'octo' });
    // Another user's token: their own pull requests and issues.
    const bob = await h.call('GET', `${V1}/git/suggested-tasks/search`, { key: h.bob.key });
    expect(bob.body.items.map((t: any) => [t.task_type, t.repo, t.issue_number])).toEqual([
      ['MERGE_CONFLICTS', 'acme/gadgets', 6],
      ['OPEN_ISSUE', 'octo/beta', 8],
      ['OPEN_ISSUE', 'octo/beta', 9],
    ]);
  });

  it("answers GitHub's refusals: rate limits 429 with Retry-After, failures 502, a revoked token 403", async () => {
    const now = Math.floor(h.clock.now().toMillis() / 1000);
    gh.fail({ kind: 'primary-rate-limit', resetAt: now + 120 }, { pathPrefix: '/user/repos' });
    const primary = await h.call('GET', `${V1}/git/repositories/search?provider=github`);
    expect(primary.status).toBe(429);
    expect(primary.headers.get('retry-after')).toBe('120');
    expect(primary.body.detail).toContain('API rate limit exceeded');

    gh.fail({ kind: 'secondary-rate-limit', status: 429, retryAfter: 30 }, { pathPrefix: '/search' });
    const secondary = await h.call('GET', `${V1}/git/repositories/search?provider=github&query=acme/x`);
    expect(secondary).toMatchObject({ status: 429 });
    expect(secondary.headers.get('retry-after')).toBe('30');

    gh.fail({ kind: 'graphql-rate-limit' }, { pathPrefix: '/graphql' });
    expect((await h.call('GET', `${V1}/git/suggested-tasks/search`)).status).toBe(429);

    gh.fail({ kind: 'server-error', status: 503 }, { pathPrefix: '/repos/' });
    const failed = await h.call('GET', `${V1}/git/branches/search?provider=github&repository=acme/widgets&query=`);
    expect(failed.status).toBe(502);
    expect(failed.body.detail).toContain('answered 503');

    // GitHub revokes the token: "Bad credentials" (401), answered 403 as OpenHands does.
    const octo = gh.users.find((u) => u.login === 'octo')!;
    octo.token = 'ghu_rotated';
    try {
      const r = await h.call('GET', `${V1}/git/repositories/search?provider=github`);
      expect(r).toMatchObject({ status: 403, body: { detail: 'Invalid github token' } });
      expect(JSON.stringify(r.body)).not.toContain(TOKEN);
    } finally {
      octo.token = TOKEN;
    }
  });

  it('answers 502 when the host cannot be reached, naming the host and not the token', async () => {
    const closed = await startGitHubStandIn();
    const url = closed.url;
    await closed.close();
    const h2 = await startHarness(undefined, { gitHosts: testGitHosts({ github: url, gitlab: undefined, bitbucket: undefined }) });
    try {
      const saved = await h2.call('POST', `${V1}/secrets`, { body: { name: 'GITHUB_TOKEN', value: TOKEN } });
      expect(saved.status).toBe(201);
      const r = await h2.call('GET', `${V1}/git/repositories/search?provider=github`);
      expect(r.status).toBe(502);
      expect(r.body.detail).toContain(url);
      expect(JSON.stringify(r.body)).not.toContain(TOKEN);
    } finally {
      await h2.close();
    }
  });
});
