// GET /api/git/repositories/search through the agent server's HTTP API: without a stored GitHub
// token, missing_token with no items (OpenHands' answer); with one, the repositories GitHub's
// /user/repos lists for it, read from the GitHub stand-in (src/testing/github: GitHub's REST answers
// and Link paging over real HTTP, at the configured github host) with OpenHands 1.58's page ids
// ("page" or "page:offset"), query filter and errors; other providers are a 400.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { nextLink } from '../../util/github-api.ts';
import { startGitHubStandIn, type GitHubStandIn } from '../../testing/github/server.ts';
import { startTestServer, useTestServer } from '../test-support.ts';

const TOKEN = 'ghp_agent_server_token_01';
let gh: GitHubStandIn;
beforeAll(async () => {
  gh = await startGitHubStandIn();
  gh.users.push({ login: 'octo', id: 7, token: TOKEN, orgs: ['acme'] }, { login: 'other', id: 8, token: 'ghp_other_token_000002' });
  // 230 repositories, over three of GitHub's 100-item pages; a few another user owns, unseen.
  for (let i = 0; i < 230; i++) {
    const day = new Date(Date.UTC(2026, 0, 1) + i * 3_600_000).toISOString().replace('.000', '');
    gh.repos.push({ owner: i % 3 === 0 ? 'acme' : 'octo', ownerType: i % 3 === 0 ? 'Organization' : 'User', name: `repo-${String(i).padStart(3, '0')}`, private: i % 5 === 0, stars: i, pushedAt: day });
  }
  gh.repos.push({ owner: 'other', name: 'repo-777', private: true });
});
afterAll(async () => {
  await gh?.close();
});
beforeEach(() => {
  gh.requests.length = 0;
});

const t = useTestServer(() => ({ githubHost: gh.url }));
const SEARCH = '/api/git/repositories/search?provider=github';

async function storeToken(name: string, value: string): Promise<void> {
  expect((await t.s.api('/api/settings/secrets', { method: 'PUT', body: { name, value } })).status).toBe(200);
}

/** What GitHub lists for the token (all pages), as the stand-in answers a client of GitHub. */
async function direct(): Promise<any[]> {
  const out: any[] = [];
  for (let url: string | null = `${gh.url}/api/v3/user/repos?per_page=100&sort=pushed&affiliation=owner,collaborator,organization_member`; url; ) {
    const r = await fetch(url, { headers: { authorization: `Bearer ${TOKEN}` } });
    out.push(...((await r.json()) as any[]));
    url = nextLink(r.headers.get('link'));
  }
  return out;
}

async function walk(path: string): Promise<{ ids: (string | null)[]; names: string[] }> {
  const ids: (string | null)[] = [];
  const names: string[] = [];
  let next: string | null = null;
  do {
    const r = await t.s.api(`${path}${next ? `&page_id=${encodeURIComponent(next)}` : ''}`);
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body.missing_token).toBe(false);
    names.push(...r.body.items.map((x: any) => x.full_name));
    next = r.body.next_page_id;
    ids.push(next);
  } while (next && ids.length < 100);
  return { ids, names };
}

describe('GET /api/git/repositories/search', { timeout: 30_000 }, () => {
  it('says the token is missing for GitHub, refuses other and unknown providers', async () => {
    expect(await t.s.api(`${SEARCH}&query=x`)).toEqual({ status: 200, body: { items: [], next_page_id: null, missing_token: true } });
    const gitlab = await t.s.api('/api/git/repositories/search?provider=gitlab');
    expect(gitlab).toEqual({ status: 400, body: { detail: "Repository discovery is not supported for provider 'gitlab'" } });
    expect((await t.s.api('/api/git/repositories/search?provider=svn')).body.detail[0].loc).toEqual(['query', 'provider']);
    expect((await t.s.api('/api/git/repositories/search')).body.detail[0].loc).toEqual(['query', 'provider']);
    expect((await t.s.api(`${SEARCH}&limit=0`)).body.detail[0].loc).toEqual(['query', 'limit']);
    expect((await t.s.api(SEARCH, { key: null })).status).toBe(401);
    expect(gh.requests).toEqual([]);
  });

  it("lists the token's repositories as GitHub orders them, with 1.58's page ids, every one once", async () => {
    await storeToken('GH_TOKEN', TOKEN);
    const expected = (await direct()).map((r) => r.full_name);
    expect(expected).toHaveLength(230);
    gh.requests.length = 0;
    // limit 100: one GitHub page each; the next page id is GitHub's next page.
    const hundred = await walk(SEARCH);
    expect(hundred).toEqual({ ids: ['2', '3', null], names: expected });
    const call = gh.requests[0]!;
    expect([call.path, Object.fromEntries(call.query), call.authorization]).toEqual(['/user/repos', { per_page: '100', page: '1', sort: 'pushed', affiliation: 'owner,collaborator,organization_member' }, `Bearer ${TOKEN}`]);
    // limit 30: windows inside a GitHub page ("page:offset"), then GitHub's next page.
    const thirty = await walk(`${SEARCH}&limit=30`);
    expect(thirty.names).toEqual(expected);
    expect(thirty.ids.slice(0, 5)).toEqual(['1:30', '1:60', '1:90', '2', '2:30']);
    const first = await t.s.api(`${SEARCH}&limit=1`);
    const repo = (await direct())[0];
    expect(first.body.items).toEqual([{ id: String(repo.id), full_name: repo.full_name, git_provider: 'github', is_public: !repo.private, stargazers_count: repo.stargazers_count, pushed_at: repo.pushed_at, main_branch: 'main' }]);
    expect(JSON.stringify(first.body)).not.toContain(TOKEN);
  });

  it('keeps the repositories whose full name contains the query, reading GitHub pages until `limit` match', async () => {
    await storeToken('github_token', TOKEN);
    await storeToken('GITHUB_TOKEN', 'ghp_other_token_000002');
    const expected = (await direct()).map((r) => r.full_name).filter((n) => n.toLowerCase().includes('acme/repo-1'));
    expect(expected.length).toBeGreaterThan(20);
    gh.requests.length = 0;
    const { names, ids } = await walk(`${SEARCH}&query=ACME/Repo-1&limit=7`);
    expect(names).toEqual(expected);
    expect(ids.at(-1)).toBeNull();
    // github_token comes first among the names OpenHands reads.
    expect(new Set(gh.requests.map((r) => r.authorization))).toEqual(new Set([`Bearer ${TOKEN}`]));
  });

  it("answers 1.58's errors, and a rate limit as 429 with GitHub's wait", async () => {
    await storeToken('GITHUB_TOKEN', TOKEN);
    for (const bad of ['x', '0', '-1', '1:-2', '2:x']) expect(await t.s.api(`${SEARCH}&page_id=${bad}`), bad).toEqual({ status: 400, body: { detail: 'Invalid repository page_id' } });

    gh.fail({ kind: 'server-error', status: 500 });
    expect(await t.s.api(SEARCH)).toEqual({ status: 502, body: { detail: 'GitHub repository search failed' } });
    gh.fail({ kind: 'server-error', status: 404 });
    expect(await t.s.api(SEARCH)).toEqual({ status: 400, body: { detail: 'GitHub repository search failed' } });

    gh.fail({ kind: 'secondary-rate-limit', status: 403, retryAfter: 42 });
    const secondary = await t.s.api(SEARCH);
    expect(secondary.status).toBe(429);
    expect(secondary.body.detail).toBe("GitHub's rate limit for this token is exhausted; retry in 42 s");
    gh.fail({ kind: 'primary-rate-limit', status: 429, resetAt: Math.floor(Date.now() / 1000) + 600 });
    const primary = await t.s.api(SEARCH);
    expect(primary.status).toBe(429);
    expect(primary.body.detail).toMatch(/retry in (59\d|600) s/);

    // GitHub no longer knows the token: its 401 passed on, as 1.58 does.
    await storeToken('GITHUB_TOKEN', 'ghp_revoked_000000000');
    const revoked = await t.s.api(SEARCH);
    expect(revoked).toEqual({ status: 401, body: { detail: 'GitHub repository search failed' } });
  });

  it('answers 502 when the GitHub host cannot be reached', async () => {
    const closed = await startGitHubStandIn();
    await closed.close();
    // A second server of this test, pointed at a host that is gone.
    const dir = mkdtempSync(join(tmpdir(), 'gh-gone-'));
    const s = await startTestServer(dir, { githubHost: closed.url });
    try {
      expect((await s.api('/api/settings/secrets', { method: 'PUT', body: { name: 'GITHUB_TOKEN', value: TOKEN } })).status).toBe(200);
      expect(await s.api(SEARCH)).toEqual({ status: 502, body: { detail: 'GitHub repository search failed' } });
    } finally {
      await s.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
