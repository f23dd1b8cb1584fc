// The app API's git searches for the forgejo provider against a real Gitea (hack/gitea.sh; SQLite,
// loopback HTTP) over real HTTP: the provider token saved through /secrets/git-providers (checked
// against the host, kept as the FORGEJO_TOKEN secret, never answered back), repositories and
// branches paged without losing or repeating one, OpenHands' errors, and 501 for providers not searched here.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SecretKind } from '../../api/secret.ts';
import { giteaBinary, seedGitea, startGitea, type GiteaSeed, type GiteaServer } from '../../testing/gitea/server.ts';
import { PROVIDER_TYPES } from '../../api/app/git.ts';
import { DRIVERS } from './index.ts';
import { decodePageId, encodePageId } from './pages.ts';
import { normalizeHost } from './tokens.ts';
import { NS, startHarness, type Harness, walkPages, testGitHosts } from '../test-support.ts';
import { until } from '../../testing/until.ts';
import { storedSecretsName } from '../user-secrets.ts';

const bin = giteaBinary();
if (!bin) console.warn('forgejo git-search suite SKIPPED: no Gitea binary (run hack/gitea.sh; make test does)');

describe('page ids and hosts', () => {
  it("encode as OpenHands' do (base64 of the number, unpadded) and refuse what they did not give out", () => {
    expect(encodePageId(2)).toBe('Mg');
    expect(encodePageId(10)).toBe('MTA');
    expect(decodePageId(undefined)).toBe(1);
    expect(decodePageId('MTA')).toBe(10);
    for (const bad of ['MA', 'LTE', 'abc', 'Mi4w']) expect(() => decodePageId(bad), bad).toThrow(/page id/);
  });
  it('normalizes a host as OpenHands reads it: https:// unless http:// is given, no /api/v1', () => {
    expect(normalizeHost('git.example.com/')).toBe('https://git.example.com');
    expect(normalizeHost('http://127.0.0.1:3000/api/v1')).toBe('http://127.0.0.1:3000');
    expect(normalizeHost('HTTPS://Git.Example.com')).toBe('https://git.example.com');
  });
});

// Each test makes tens of requests to Gitea: room for a loaded machine.
describe.skipIf(!bin)('/api/v1/git for forgejo, against a real Gitea', { timeout: 60_000 }, () => {
  let gitea: GiteaServer;
  let seed: GiteaSeed;
  let h: Harness;
  const V1 = '/api/v1';

  beforeAll(async () => {
    gitea = await startGitea(bin!);
    seed = await seedGitea(gitea);
    h = await startHarness(undefined, { gitHosts: testGitHosts({ forgejo: gitea.url }) });
  }, 120_000);
  afterAll(async () => {
    await h?.close();
    await gitea?.stop();
  });

  const walk = (path: string, key?: string) => walkPages(h, path, key);

  it('answers 403 (OpenHands: "Git provider token required") before a token is saved', async () => {
    for (const path of ['/git/installations/search?provider=forgejo', '/git/repositories/search?provider=forgejo', '/git/branches/search?provider=forgejo&repository=acme/widgets&query=', '/git/suggested-tasks/search']) {
      const r = await h.call('GET', V1 + path);
      expect(r, path).toMatchObject({ status: 403, body: { detail: 'Git provider token required (such as GitHub).' } });
    }
  });

  it('saves a forgejo token only after the host accepts it, for the configured host only; never answers it back', async () => {
    const save = (body: unknown) => h.call('POST', `${V1}/secrets/git-providers`, { body });
    const wrongHost = await save({ provider_tokens: { forgejo: { token: gitea.token, host: 'http://169.254.169.254' } } });
    expect(wrongHost.status).toBe(422);
    expect(wrongHost.body.detail[0].loc).toEqual(['body', 'provider_tokens', 'forgejo', 'host']);
    const bad = await save({ provider_tokens: { forgejo: { token: '0'.repeat(40), host: gitea.url } } });
    expect(bad.status).toBe(422);
    expect(bad.body.detail[0]).toMatchObject({ loc: ['body', 'provider_tokens', 'forgejo', 'token'], msg: 'Invalid token. Please make sure it is a valid forgejo token.' });
    const sso = await save({ provider_tokens: { enterprise_sso: { token: 'x' } } });
    expect(sso.status).toBe(501);
    expect(sso.body.detail).toContain('does not search Enterprise SSO');
    const unknown = await save({ provider_tokens: { sourcehut: { token: 'x' } } });
    expect(unknown.status).toBe(422);
    expect(await h.store.get(SecretKind, NS, storedSecretsName(h.alice.user.id))).toBeUndefined();

    // The host as OpenHands' web app sends it (with /api/v1 and a trailing slash) names the same host.
    const ok = await save({ provider_tokens: { forgejo: { token: gitea.token, host: `${gitea.url}/api/v1/`, user_id: null } } });
    expect(ok).toMatchObject({ status: 200, body: { message: 'Git providers stored' } });
    const secret = (await h.store.get(SecretKind, NS, storedSecretsName(h.alice.user.id)))!;
    expect(Buffer.from(secret.data!.FORGEJO_TOKEN!, 'base64').toString()).toBe(gitea.token);
    // A host-only update keeps the token.
    expect((await save({ provider_tokens: { forgejo: { token: '', host: gitea.url } } })).status).toBe(200);
    const settings = await h.call('GET', `${V1}/settings`);
    expect(settings.body.provider_tokens_set).toEqual({ forgejo: gitea.url });
    const secrets = await h.call('GET', `${V1}/secrets/search`);
    expect(secrets.body.items).toEqual([{ name: 'FORGEJO_TOKEN', description: `forgejo token of ${gitea.user.login} on ${gitea.url}` }]);
    for (const r of [ok, settings, secrets, bad]) expect(JSON.stringify(r.body)).not.toContain(gitea.token);
  });

  it('lists the caller\'s repositories page by page: every one once, in the host\'s order, at any limit', async () => {
    const direct = await gitea.api('GET', '/user/repos?limit=50');
    const expected = (direct.body as any[]).map((r) => r.full_name);
    expect(expected.sort()).toEqual(seed.repos.map((r) => r.fullName).sort());
    for (const limit of [1, 2, 3, 100]) {
      const { items, pages } = await walk(`${V1}/git/repositories/search?provider=forgejo&limit=${limit}`);
      expect(items.map((r) => r.full_name), `limit ${limit}`).toEqual((direct.body as any[]).map((r) => r.full_name));
      expect(pages).toBe(Math.max(1, Math.ceil(expected.length / limit)));
    }
    // Gitea moves updated_at in the seconds after the seeding pushes (its post-push work runs
    // asynchronously): compare with Gitea's answer while it holds still (the same before and after ours).
    const gadgetsOfGitea = async () => ((await gitea.api('GET', '/user/repos?limit=50')).body as any[]).find((r) => r.full_name === 'acme/gadgets');
    const [gadgets, repo] = await until('Gitea to hold acme/gadgets still', async () => {
      const before = await gadgetsOfGitea();
      const { items } = await walk(`${V1}/git/repositories/search?provider=forgejo&limit=2`);
      const after = await gadgetsOfGitea();
      return before.updated_at === after.updated_at ? [items.find((r) => r.full_name === 'acme/gadgets'), after] : undefined;
    }, 30_000, 500);
    expect(gadgets).toEqual({
      id: String(repo.id),
      full_name: 'acme/gadgets',
      git_provider: 'forgejo',
      is_public: false,
      stargazers_count: 0,
      link_header: expect.stringContaining('rel='),
      pushed_at: repo.updated_at,
      owner_type: 'user',
      main_branch: 'main',
    });
    const bySort = await h.call('GET', `${V1}/git/repositories/search?provider=forgejo&sort_order=stars-desc`);
    expect(bySort).toMatchObject({ status: 400, body: { detail: 'sort_order is not supported when listing user repositories. It will be supported after API refactoring.' } });
  });

  it('searches repositories by name on the host, and pages the matches', async () => {
    const r = await h.call('GET', `${V1}/git/repositories/search?provider=forgejo&query=widg`);
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ items: [{ full_name: 'acme/widgets', is_public: true, link_header: null }], next_page_id: null });
    const { items } = await walk(`${V1}/git/repositories/search?provider=forgejo&query=a&sort_order=updated-asc&limit=1`);
    const direct = await gitea.api('GET', '/repos/search?q=a&sort=updated&order=asc&mode=source&limit=50');
    expect(items.map((x) => x.full_name)).toEqual((direct.body.data as any[]).map((x) => x.full_name));
    expect(items.length).toBeGreaterThan(2);
    // A repository URL on this host asks for public repositories only.
    const url = await h.call('GET', `${V1}/git/repositories/search?provider=forgejo&query=${encodeURIComponent(`${gitea.url}/acme/gadgets`)}`);
    expect(url.body.items).toEqual([]);
  });

  it('lists and searches branches without losing one; a repository the token cannot see has none', async () => {
    const widgets = seed.repos.find((r) => r.fullName === 'acme/widgets')!;
    const direct = (await gitea.api('GET', '/repos/acme/widgets/branches?limit=50')).body as any[];
    expect(direct.map((b) => b.name).sort()).toEqual([...widgets.branches].sort());
    for (const limit of [1, 2, 3, 30]) {
      const { items } = await walk(`${V1}/git/branches/search?provider=forgejo&repository=acme/widgets&query=&limit=${limit}`);
      expect(items, `limit ${limit}`).toEqual(direct.map((b) => ({ name: b.name, commit_sha: b.commit.id, protected: false, last_push_date: null })));
    }
    const { items: releases, pages } = await walk(`${V1}/git/branches/search?provider=forgejo&repository=acme/widgets&query=FEATURE&limit=2`);
    expect(releases.map((b) => b.name)).toEqual(['feature/a', 'feature/b', 'feature/c']);
    expect(pages).toBe(2);
    const none = await h.call('GET', `${V1}/git/branches/search?provider=forgejo&repository=acme/nothing-here&query=`);
    expect(none).toMatchObject({ status: 200, body: { items: [], next_page_id: null } });
    const malformed = await h.call('GET', `${V1}/git/branches/search?provider=forgejo&repository=widgets&query=`);
    expect(malformed.status).toBe(422);
    expect(malformed.body.detail[0].loc).toEqual(['query', 'repository']);
    const noQuery = await h.call('GET', `${V1}/git/branches/search?provider=forgejo&repository=acme/widgets`);
    expect(noQuery.status).toBe(422);
    expect(noQuery.body.detail[0].loc).toEqual(['query', 'query']);
  });

  it("answers OpenHands' errors: installations 400 for forgejo, limits and providers 422, bad page ids 422", async () => {
    expect(await h.call('GET', `${V1}/git/installations/search?provider=forgejo`)).toMatchObject({ status: 400, body: { detail: "Provider forgejo doesn't support installations" } });
    for (const [q, loc] of [
      ['provider=forgejo&limit=0', 'limit'],
      ['provider=forgejo&limit=101', 'limit'],
      ['provider=sourcehut', 'provider'],
      ['', 'provider'],
      ['provider=forgejo&page_id=bm9wZQ', 'page_id'],
    ] as const) {
      const r = await h.call('GET', `${V1}/git/repositories/search?${q}`);
      expect(r.status, q).toBe(422);
      expect(r.body.detail[0].loc, q).toEqual(['query', loc]);
    }
    expect(await h.call('GET', `${V1}/git/suggested-tasks/search`)).toMatchObject({ status: 200, body: { items: [], next_page_id: null } });
  });

  it('answers 501 for the providers not searched here', async () => {
    const unsearched = PROVIDER_TYPES.filter((p) => !DRIVERS[p]);
    expect(unsearched).toContain('enterprise_sso');
    for (const provider of unsearched) {
      for (const path of [`installations/search?provider=${provider}`, `repositories/search?provider=${provider}`, `branches/search?provider=${provider}&repository=a/b&query=`]) {
        const r = await h.call('GET', `${V1}/git/${path}`);
        expect(r.status, path).toBe(501);
        expect(r.body.detail).toMatch(/^agentyard does not search .* \(not built\): it searches .*Forgejo.* hosts only/);
      }
    }
  });

  it("keeps each user's token to themselves", async () => {
    const r = await h.call('GET', `${V1}/git/repositories/search?provider=forgejo`, { key: h.bob.key });
    expect(r).toMatchObject({ status: 403, body: { detail: 'Git provider token required (such as GitHub).' } });
  });

  it('answers 403 naming the scope when the token may read the user but not repositories', async () => {
    const token = await gitea.newToken('user-only', ['read:user']);
    expect((await h.call('POST', `${V1}/secrets/git-providers`, { key: h.bob.key, body: { provider_tokens: { forgejo: { token } } } })).status).toBe(200);
    const r = await h.call('GET', `${V1}/git/repositories/search?provider=forgejo`, { key: h.bob.key });
    expect(r).toMatchObject({ status: 403, body: { detail: 'The forgejo host refused this token access to /user/repos (a scope it lacks?)' } });
    expect((await h.call('DELETE', `${V1}/secrets/git-providers`, { key: h.bob.key })).status).toBe(200);
  });

  it('answers 403 "Invalid forgejo token" once the host revokes the token, and forgets tokens on DELETE', async () => {
    const token = await gitea.newToken('revoked-soon', ['all']);
    expect((await h.call('POST', `${V1}/secrets/git-providers`, { key: h.bob.key, body: { provider_tokens: { forgejo: { token, host: gitea.url } } } })).status).toBe(200);
    expect((await h.call('GET', `${V1}/git/repositories/search?provider=forgejo`, { key: h.bob.key })).status).toBe(200);
    const del = await gitea.api('DELETE', `/users/${gitea.user.login}/tokens/revoked-soon`, undefined, { basic: [gitea.user.login, gitea.user.password] });
    expect(del.status).toBe(204);
    const r = await h.call('GET', `${V1}/git/repositories/search?provider=forgejo`, { key: h.bob.key });
    expect(r).toMatchObject({ status: 403, body: { detail: 'Invalid forgejo token' } });
    expect(JSON.stringify(r.body)).not.toContain(token);

    expect(await h.call('DELETE', `${V1}/secrets/git-providers`, { key: h.bob.key })).toMatchObject({ status: 200, body: { message: 'Unset Git provider tokens' } });
    expect((await h.call('DELETE', `${V1}/secrets/git-providers`, { key: h.bob.key })).status).toBe(200);
    expect((await h.call('GET', `${V1}/git/repositories/search?provider=forgejo`, { key: h.bob.key })).status).toBe(403);
    expect((await h.call('GET', `${V1}/settings`, { key: h.bob.key })).body.provider_tokens_set).toEqual({});
  });
});
