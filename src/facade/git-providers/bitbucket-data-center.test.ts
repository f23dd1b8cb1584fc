// The app API's git searches for the bitbucket_data_center provider, over the app API's real HTTP
// interface, against a stand-in Bitbucket Data Center REST API over real HTTP
// (src/testing/bitbucket-data-center: its documented auth, error bodies and start/limit pages, the
// server capping the limit; Data Center cannot run here). Checked: the token's check (GET
// /repos?limit=1) and its two forms, projects as installations, repositories per project and
// across them, searches, branches, every page exact, the token sent to the configured host only.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startBitbucketDcStandIn, type DcData, type DcRepo, type DcStandIn } from '../../testing/bitbucket-data-center/server.ts';
import { startHarness, type Harness, walkPages, testGitHosts } from '../test-support.ts';

const V1 = '/api/v1';
const TOKEN = 'BBDC-MzQ1Njc4OTAxMjM0';

const repo = (project: string, slug: string, id: number, o: Partial<DcRepo> = {}): DcRepo => ({ project, slug, name: slug.replace(/-/g, ' '), id, public: false, defaultBranch: 'main', branches: [], ...o });
const branches = ['develop', 'main', 'feature/login', 'bugfix/x', 'Feature/Search', 'release/2.0'].map((name, i) => ({ name, sha: `${i}`.repeat(40) }));
function data(): DcData {
  return {
    projects: [
      { key: 'PLAT', name: 'Platform' },
      { key: 'WEB', name: 'Web' },
      { key: 'OPS', name: 'Operations' },
      { key: 'HR', name: 'Hidden' },
    ],
    repos: [
      repo('PLAT', 'core-api', 1, { branches, defaultBranch: 'develop' }),
      repo('PLAT', 'auth', 2),
      repo('PLAT', 'billing-api', 3),
      repo('WEB', 'storefront', 4, { public: true }),
      repo('WEB', 'admin', 5),
      repo('OPS', 'terraform', 6),
      repo('HR', 'payroll-api', 7),
    ],
    tokens: {
      [TOKEN]: { user: 'alice.dc', projects: ['PLAT', 'WEB', 'OPS'] },
      'repo-token': { user: null, projects: ['WEB'] },
      's3cret-password': { user: 'bob.dc', projects: ['PLAT'] },
    },
  };
}

describe('/api/v1/git for bitbucket_data_center, against a stand-in Bitbucket Data Center over HTTP', () => {
  let dc: DcStandIn;
  let h: Harness;

  beforeAll(async () => {
    // The server serves at most 2 items a page, whatever the limit asked: pages must be followed.
    dc = await startBitbucketDcStandIn(data(), { maxLimit: 2 });
    h = await startHarness(undefined, { gitHosts: testGitHosts({ bitbucket_data_center: dc.url }) });
  }, 60_000);
  afterAll(async () => {
    await h?.close();
    await dc?.close();
  });

  const walk = (path: string, key?: string) => walkPages(h, path, key);

  it('saves a token only after GET /rest/api/1.0/repos?limit=1 accepts it; a bare token is Bearer, user:password basic', async () => {
    expect(await h.call('GET', `${V1}/git/repositories/search?provider=bitbucket_data_center`)).toMatchObject({ status: 403 });
    const save = (body: unknown, key?: string) => h.call('POST', `${V1}/secrets/git-providers`, { body, ...(key ? { key } : {}) });
    expect((await save({ provider_tokens: { bitbucket_data_center: { token: TOKEN, host: 'bitbucket.example.com' } } })).status).toBe(422);
    const bad = await save({ provider_tokens: { bitbucket_data_center: { token: 'wrong', host: dc.url } } });
    expect(bad.body.detail[0]).toMatchObject({ loc: ['body', 'provider_tokens', 'bitbucket_data_center', 'token'], msg: 'Invalid token. Please make sure it is a valid bitbucket_data_center token.' });
    expect((await save({ provider_tokens: { bitbucket_data_center: { token: TOKEN, host: dc.url } } })).status).toBe(200);
    expect(dc.requests.at(-1)).toMatchObject({ path: '/rest/api/1.0/repos', authorization: `Bearer ${TOKEN}` });
    expect(dc.requests.at(-1)!.query.get('limit')).toBe('1');
    expect((await h.call('GET', `${V1}/secrets/search`)).body.items).toEqual([{ name: 'BITBUCKET_DATA_CENTER_TOKEN', description: `bitbucket_data_center token of alice.dc on ${dc.url}` }]);
    expect((await h.call('GET', `${V1}/settings`)).body.provider_tokens_set).toEqual({ bitbucket_data_center: dc.url });

    expect((await save({ provider_tokens: { bitbucket_data_center: { token: 'bob.dc:s3cret-password' } } }, h.bob.key)).status).toBe(200);
    expect(dc.requests.at(-1)!.authorization).toBe(`Basic ${Buffer.from('bob.dc:s3cret-password').toString('base64')}`);
    expect(await h.call('GET', `${V1}/git/installations/search?provider=bitbucket_data_center`, { key: h.bob.key })).toMatchObject({ status: 200, body: { items: ['PLAT', 'WEB'] } });
  });

  it('lists project keys as installations, every page of the server read', async () => {
    const { items, pages } = await walk(`${V1}/git/installations/search?provider=bitbucket_data_center&limit=2`);
    expect(items).toEqual(['PLAT', 'WEB', 'OPS']);
    expect(pages).toBe(2);
  });

  it("lists a project's repositories and every project's in turn, every page exact though the server serves 2 at a time", async () => {
    for (const limit of [1, 2, 3, 100]) {
      const { items } = await walk(`${V1}/git/repositories/search?provider=bitbucket_data_center&installation_id=PLAT&limit=${limit}`);
      expect(items.map((r) => r.full_name), `limit ${limit}`).toEqual(['PLAT/core-api', 'PLAT/auth', 'PLAT/billing-api']);
    }
    const first = await h.call('GET', `${V1}/git/repositories/search?provider=bitbucket_data_center&installation_id=PLAT&limit=2`);
    expect(first.body.items[0]).toEqual({ id: '1', full_name: 'PLAT/core-api', git_provider: 'bitbucket_data_center', is_public: false, stargazers_count: null, link_header: `<${dc.url}/rest/api/1.0/projects/PLAT/repos?page=2>; rel="next"`, pushed_at: null, owner_type: 'organization', main_branch: null });
    const all = await walk(`${V1}/git/repositories/search?provider=bitbucket_data_center&limit=4`);
    expect(all.items.map((r) => r.full_name)).toEqual(['PLAT/core-api', 'PLAT/auth', 'PLAT/billing-api', 'WEB/storefront', 'WEB/admin', 'OPS/terraform']);
  });

  it('searches as OpenHands does (KEY/text within a project, else every project), and a repository URL names one with its default branch', async () => {
    const api = await walk(`${V1}/git/repositories/search?provider=bitbucket_data_center&query=API&limit=1`);
    expect(api.items.map((r) => r.full_name)).toEqual(['PLAT/core-api', 'PLAT/billing-api']);
    const scoped = await walk(`${V1}/git/repositories/search?provider=bitbucket_data_center&query=${encodeURIComponent('WEB/adm')}&limit=1`);
    expect(scoped.items.map((r) => r.full_name)).toEqual(['WEB/admin']);
    const url = await h.call('GET', `${V1}/git/repositories/search?provider=bitbucket_data_center&query=${encodeURIComponent(`${dc.url}/projects/PLAT/repos/core-api/browse`)}`);
    expect(url.body).toEqual({ items: [expect.objectContaining({ full_name: 'PLAT/core-api', main_branch: 'develop', link_header: null })], next_page_id: null });
    const hidden = await h.call('GET', `${V1}/git/repositories/search?provider=bitbucket_data_center&query=${encodeURIComponent(`${dc.url}/projects/HR/repos/payroll-api`)}`);
    expect(hidden.body).toEqual({ items: [], next_page_id: null });
  });

  it('lists branches by last modification and searches them (filterText), every page exact; a hidden repository has none', async () => {
    for (const limit of [1, 3, 30]) {
      const { items } = await walk(`${V1}/git/branches/search?provider=bitbucket_data_center&repository=PLAT/core-api&query=&limit=${limit}`);
      expect(items, `limit ${limit}`).toEqual(branches.map((b) => ({ name: b.name, commit_sha: b.sha, protected: false, last_push_date: null })));
    }
    const found = await walk(`${V1}/git/branches/search?provider=bitbucket_data_center&repository=PLAT/core-api&query=feature&limit=1`);
    expect(found.items.map((b) => b.name)).toEqual(['feature/login', 'Feature/Search']);
    expect(dc.requests.some((r) => r.query.get('filterText') === 'feature' && r.query.get('orderBy') === 'MODIFICATION')).toBe(true);
    for (const repository of ['HR/payroll-api', 'PLAT/missing', 'NOPE/x']) {
      expect(await h.call('GET', `${V1}/git/branches/search?provider=bitbucket_data_center&repository=${repository}&query=`), repository).toMatchObject({ status: 200, body: { items: [], next_page_id: null } });
    }
  });

  it('has no suggested tasks (as OpenHands 1.11); tokens went to the configured host only; a revoked token is "Invalid bitbucket_data_center token"', async () => {
    expect(await h.call('GET', `${V1}/git/suggested-tasks/search`)).toMatchObject({ status: 200, body: { items: [], next_page_id: null } });
    expect(new Set(dc.requests.map((r) => r.authorization))).toEqual(new Set(['Bearer wrong', `Bearer ${TOKEN}`, `Basic ${Buffer.from('bob.dc:s3cret-password').toString('base64')}`]));
    const saved = await h.call('POST', `${V1}/secrets/git-providers`, { key: h.bob.key, body: { provider_tokens: { bitbucket_data_center: { token: 'repo-token' } } } });
    expect(saved.status).toBe(200);
    expect((await h.call('GET', `${V1}/secrets/search`, { key: h.bob.key })).body.items[0].description).toBe(`bitbucket_data_center token of an HTTP access token on ${dc.url}`);
    delete dc.data.tokens['repo-token'];
    expect(await h.call('GET', `${V1}/git/installations/search?provider=bitbucket_data_center`, { key: h.bob.key })).toMatchObject({ status: 403, body: { detail: 'Invalid bitbucket_data_center token' } });
  });
});
