// The app API's git searches for the bitbucket provider (Bitbucket Cloud), over the app API's real
// HTTP interface, against a stand-in Bitbucket Cloud API over real HTTP (src/testing/bitbucket:
// its documented error bodies, BBQL filters and {values, next} pages; api.bitbucket.org cannot be
// reached here). Checked: the token's check and its two forms (Bearer, user:password as basic
// credentials), workspaces as installations, repositories per workspace and across them, searches
// as OpenHands runs them, branches, every page exact, and the token sent to the configured host only.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startBitbucketStandIn, type BitbucketData, type BitbucketRepo, type BitbucketStandIn } from '../../testing/bitbucket/server.ts';
import { bitbucketApi } from './bitbucket.ts';
import { startHarness, type Harness, walkPages, testGitHosts } from '../test-support.ts';

const V1 = '/api/v1';
const TOKEN = 'ATCTT3xFfGN0-alice';

function repo(workspace: string, slug: string, day: number, o: Partial<BitbucketRepo> = {}): BitbucketRepo {
  return { workspace, slug, isPrivate: true, updatedOn: `2026-01-${String(day).padStart(2, '0')}T00:00:00+00:00`, createdOn: '2025-01-01T00:00:00+00:00', mainBranch: 'main', branches: [], ...o };
}

const branches = ['main', 'dev', 'feature/a', 'Feature/B', 'feature/c', 'release'].map((name, i) => ({ name, hash: `${i}`.repeat(40), date: `2026-02-${String(10 - i).padStart(2, '0')}T00:00:00+00:00` }));
function data(): BitbucketData {
  return {
    users: [{ username: 'alice-bb', displayName: 'Alice', accountId: '557058:a' }],
    workspaces: ['acme', 'alice-bb', 'zeta', 'other'],
    repos: [
      repo('acme', 'api', 20, { branches }),
      repo('acme', 'web', 25, { isPrivate: false }),
      repo('acme', 'infra', 5),
      repo('acme', 'zeta-tools', 12),
      repo('alice-bb', 'notes', 15),
      repo('alice-bb', 'dotfiles', 28, { isPrivate: false }),
      repo('zeta', 'core', 3),
      repo('zeta', 'apps', 9),
      repo('other', 'secret', 1),
    ],
    credentials: {
      [TOKEN]: { user: 'alice-bb', workspaces: ['acme', 'alice-bb', 'zeta'], scopes: ['account', 'repository'] },
      'alice-bb:app-password': { user: 'alice-bb', workspaces: ['acme'], scopes: ['account', 'repository'] },
      'account-only': { user: 'alice-bb', workspaces: ['acme'], scopes: ['account'] },
    },
  };
}

describe('bitbucketApi', () => {
  it("is api.bitbucket.org for bitbucket.org (OpenHands' https://api.{host}/2.0), else the configured base's /2.0", () => {
    expect(bitbucketApi('https://bitbucket.org')).toBe('https://api.bitbucket.org/2.0');
    expect(bitbucketApi('http://127.0.0.1:9/')).toBe('http://127.0.0.1:9/2.0');
  });
});

describe('/api/v1/git for bitbucket, against a stand-in Bitbucket Cloud over HTTP', () => {
  let bb: BitbucketStandIn;
  let h: Harness;
  const byUpdated = (ws: string) =>
    bb.data.repos
      .filter((r) => r.workspace === ws)
      .sort((a, b) => b.updatedOn.localeCompare(a.updatedOn))
      .map((r) => `${r.workspace}/${r.slug}`);

  beforeAll(async () => {
    bb = await startBitbucketStandIn(data());
    h = await startHarness(undefined, { gitHosts: testGitHosts({ bitbucket: bb.url }) });
  }, 60_000);
  afterAll(async () => {
    await h?.close();
    await bb?.close();
  });

  const walk = (path: string, key?: string) => walkPages(h, path, key);

  it('saves a token only after GET /2.0/user accepts it; a user:password token goes as basic credentials', async () => {
    const save = (body: unknown, key?: string) => h.call('POST', `${V1}/secrets/git-providers`, { body, ...(key ? { key } : {}) });
    expect((await save({ provider_tokens: { bitbucket: { token: TOKEN, host: 'bitbucket.org' } } })).status).toBe(422);
    const bad = await save({ provider_tokens: { bitbucket: { token: 'nope', host: bb.url } } });
    expect(bad.body.detail[0]).toMatchObject({ loc: ['body', 'provider_tokens', 'bitbucket', 'token'], msg: 'Invalid token. Please make sure it is a valid bitbucket token.' });
    expect(await save({ provider_tokens: { bitbucket: { token: TOKEN, host: bb.url } } })).toMatchObject({ status: 200, body: { message: 'Git providers stored' } });
    expect((await h.call('GET', `${V1}/secrets/search`)).body.items).toEqual([{ name: 'BITBUCKET_TOKEN', description: `bitbucket token of alice-bb on ${bb.url}` }]);
    expect((await h.call('GET', `${V1}/settings`)).body.provider_tokens_set).toEqual({ bitbucket: bb.url });

    expect((await save({ provider_tokens: { bitbucket: { token: 'alice-bb:app-password' } } }, h.bob.key)).status).toBe(200);
    const basic = bb.requests.at(-1)!;
    expect(basic).toMatchObject({ path: '/2.0/user', authorization: `Basic ${Buffer.from('alice-bb:app-password').toString('base64')}` });
    expect(await h.call('GET', `${V1}/git/installations/search?provider=bitbucket`, { key: h.bob.key })).toMatchObject({ status: 200, body: { items: ['acme'], next_page_id: null } });
  });

  it('lists workspaces as installations, paged', async () => {
    const { items, pages } = await walk(`${V1}/git/installations/search?provider=bitbucket&limit=2`);
    expect(items).toEqual(['acme', 'alice-bb', 'zeta']);
    expect(pages).toBe(2);
  });

  it("lists a workspace's repositories by last update, page by page at any limit; without installation_id, every workspace's in turn", async () => {
    for (const limit of [1, 3, 100]) {
      const { items } = await walk(`${V1}/git/repositories/search?provider=bitbucket&installation_id=acme&limit=${limit}`);
      expect(items.map((r) => r.full_name), `limit ${limit}`).toEqual(byUpdated('acme'));
    }
    const first = await h.call('GET', `${V1}/git/repositories/search?provider=bitbucket&installation_id=acme&limit=1`);
    expect(first.body.items[0]).toEqual({
      id: '{acme-web}',
      full_name: 'acme/web',
      git_provider: 'bitbucket',
      is_public: true,
      stargazers_count: null,
      link_header: `<${bb.url}/2.0/repositories/acme?page=2>; rel="next"`,
      pushed_at: '2026-01-25T00:00:00+00:00',
      owner_type: 'organization',
      main_branch: 'main',
    });
    const listing = bb.requests.filter((r) => r.path === '/2.0/repositories/acme').at(-1)!;
    expect(Object.fromEntries(listing.query)).toEqual({ sort: '-updated_on', pagelen: '2', page: '1' });
    for (const limit of [2, 4]) {
      const { items } = await walk(`${V1}/git/repositories/search?provider=bitbucket&limit=${limit}`);
      expect(items.map((r) => r.full_name)).toEqual([...byUpdated('acme'), ...byUpdated('alice-bb'), ...byUpdated('zeta')]);
    }
    expect((await h.call('GET', `${V1}/git/repositories/search?provider=bitbucket&sort_order=updated-desc`)).status).toBe(400);
  });

  it('searches as OpenHands does: workspace/name, else workspaces named like the query then repositories named like it; each once', async () => {
    const scoped = await walk(`${V1}/git/repositories/search?provider=bitbucket&query=${encodeURIComponent('acme/A')}&limit=1`);
    expect(scoped.items.map((r) => r.full_name)).toEqual(['acme/api', 'acme/zeta-tools', 'acme/infra']);
    expect(bb.requests.some((r) => r.query.get('q') === 'name~"A"')).toBe(true);
    const zeta = await walk(`${V1}/git/repositories/search?provider=bitbucket&query=zeta&limit=2`);
    expect(zeta.items.map((r) => r.full_name)).toEqual([...byUpdated('zeta'), 'acme/zeta-tools']);
    const asc = await walk(`${V1}/git/repositories/search?provider=bitbucket&query=${encodeURIComponent('acme/')}&sort_order=updated-asc&limit=3`);
    expect(asc.items.map((r) => r.full_name)).toEqual([...byUpdated('acme')].reverse());
    const quoted = await h.call('GET', `${V1}/git/repositories/search?provider=bitbucket&query=${encodeURIComponent('acme/a"b')}`);
    expect(quoted).toMatchObject({ status: 200, body: { items: [] } });
    const url = await h.call('GET', `${V1}/git/repositories/search?provider=bitbucket&query=${encodeURIComponent(`${bb.url}/alice-bb/dotfiles/src/main`)}`);
    expect(url.body).toEqual({ items: [expect.objectContaining({ full_name: 'alice-bb/dotfiles', link_header: null })], next_page_id: null });
    const hidden = await h.call('GET', `${V1}/git/repositories/search?provider=bitbucket&query=${encodeURIComponent(`${bb.url}/other/secret`)}`);
    expect(hidden.body).toEqual({ items: [], next_page_id: null });
  });

  it('lists branches by latest commit and searches them by name, every page exact; a hidden repository has none', async () => {
    for (const limit of [1, 4, 30]) {
      const { items } = await walk(`${V1}/git/branches/search?provider=bitbucket&repository=acme/api&query=&limit=${limit}`);
      expect(items.map((b) => b.name), `limit ${limit}`).toEqual(branches.map((b) => b.name));
    }
    const { items } = await walk(`${V1}/git/branches/search?provider=bitbucket&repository=acme/api&query=FEATURE&limit=2`);
    expect(items).toEqual(
      branches.filter((b) => b.name.toLowerCase().includes('feature')).map((b) => ({ name: b.name, commit_sha: b.hash, protected: false, last_push_date: b.date })),
    );
    for (const repository of ['other/secret', 'acme/missing']) {
      expect(await h.call('GET', `${V1}/git/branches/search?provider=bitbucket&repository=${repository}&query=`)).toMatchObject({ status: 200, body: { items: [], next_page_id: null } });
    }
  });

  it('has no suggested tasks (as OpenHands 1.11), and sent tokens to the configured host only', async () => {
    expect(await h.call('GET', `${V1}/git/suggested-tasks/search`)).toMatchObject({ status: 200, body: { items: [], next_page_id: null } });
    const sent = new Set(bb.requests.map((r) => r.authorization));
    expect([...sent].sort()).toEqual(['Bearer nope', `Bearer ${TOKEN}`, `Basic ${Buffer.from('alice-bb:app-password').toString('base64')}`].sort());
  });

  it('answers 403 for a token without the repository scope, and "Invalid bitbucket token" once it is revoked', async () => {
    expect((await h.call('POST', `${V1}/secrets/git-providers`, { key: h.bob.key, body: { provider_tokens: { bitbucket: { token: 'account-only' } } } })).status).toBe(200);
    expect(await h.call('GET', `${V1}/git/installations/search?provider=bitbucket`, { key: h.bob.key })).toMatchObject({
      status: 403,
      body: { detail: 'The bitbucket host refused this token access to /2.0/user/workspaces (a scope or permission it lacks?)' },
    });
    delete bb.data.credentials['account-only'];
    expect(await h.call('GET', `${V1}/git/branches/search?provider=bitbucket&repository=acme/api&query=`, { key: h.bob.key })).toMatchObject({ status: 403, body: { detail: 'Invalid bitbucket token' } });
  });
});
