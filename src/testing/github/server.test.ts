// The GitHub stand-in answers as GitHub's documentation says GitHub answers: what the tests of the
// github searches rely on (Link paging, error bodies, rate-limit headers, GraphQL's errors with 200,
// both URL layouts, visibility).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGitHubStandIn, type GitHubStandIn } from './server.ts';

describe('the GitHub stand-in', () => {
  let gh: GitHubStandIn;
  const auth = { authorization: 'Bearer ghp_one' };
  beforeAll(async () => {
    gh = await startGitHubStandIn();
    gh.users.push({ login: 'one', id: 1, token: 'ghp_one' });
    for (let i = 0; i < 5; i++) gh.repos.push({ owner: 'one', name: `r${i}` });
    gh.repos.push({ owner: 'two', name: 'hidden', private: true });
  });
  afterAll(async () => {
    await gh.close();
  });

  it('pages with per_page/page and a Link header (prev, next, last, first), at / and at /api/v3', async () => {
    const r = await fetch(`${gh.url}/api/v3/user/repos?per_page=2&page=2`, { headers: auth });
    expect(((await r.json()) as any[]).map((x) => x.full_name)).toEqual(['one/r2', 'one/r3']);
    const link = r.headers.get('link')!;
    for (const [rel, page] of [['prev', 1], ['next', 3], ['last', 3], ['first', 1]] as const) {
      expect(link).toContain(`<${gh.url}/api/v3/user/repos?per_page=2&page=${page}>; rel="${rel}"`);
    }
    const last = await fetch(`${gh.url}/user/repos?per_page=2&page=3`, { headers: auth });
    expect(last.headers.get('link')).not.toContain('rel="next"');
    expect(last.headers.get('x-ratelimit-remaining')).toBe('4999');
  });

  it("refuses as GitHub does: Bad credentials, Not Found for what the token cannot see, a search without q, rate limits", async () => {
    const bad = await fetch(`${gh.url}/user`, { headers: { authorization: 'Bearer nope' } });
    expect([bad.status, await bad.json()]).toEqual([401, { message: 'Bad credentials', documentation_url: 'https://docs.github.com/rest', status: '401' }]);
    expect((await fetch(`${gh.url}/repos/two/hidden/branches`, { headers: auth })).status).toBe(404);
    expect((await fetch(`${gh.url}/search/repositories?q=`, { headers: auth })).status).toBe(422);
    gh.fail({ kind: 'primary-rate-limit', resetAt: 2_000_000_000 });
    const limited = await fetch(`${gh.url}/user`, { headers: auth });
    expect([limited.status, limited.headers.get('x-ratelimit-remaining'), limited.headers.get('x-ratelimit-reset')]).toEqual([403, '0', '2000000000']);
    gh.fail({ kind: 'secondary-rate-limit', status: 429, retryAfter: 7 });
    const secondary = await fetch(`${gh.url}/user`, { headers: auth });
    expect([secondary.status, secondary.headers.get('retry-after')]).toEqual([429, '7']);
    expect((await fetch(`${gh.url}/user`, { headers: auth })).status).toBe(200);
  });

  it("answers GraphQL with 200 and errors of type NOT_FOUND, at /graphql and /api/graphql", async () => {
    const post = (path: string, query: string, variables: unknown) => fetch(`${gh.url}${path}`, { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: JSON.stringify({ query, variables }) });
    const missing = await post('/api/graphql', 'query { repository(owner: $owner, name: $name) { refs(first: 1) { nodes { name } } } }', { owner: 'two', name: 'hidden' });
    expect(missing.status).toBe(200);
    expect(await missing.json()).toMatchObject({ data: { repository: null }, errors: [{ type: 'NOT_FOUND' }] });
    const unknown = await post('/graphql', 'query { viewer { login } }', {});
    expect(((await unknown.json()) as any).errors).toHaveLength(1);
  });
});
