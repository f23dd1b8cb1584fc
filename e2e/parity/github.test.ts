// GET /api/git/repositories/search with a stored GitHub token, side by side: the real OpenHands
// agent server 1.58.2 and ours against one GitHub stand-in (src/testing/github). 1.58 always calls
// https://api.github.com, so it is given the stand-in as its HTTPS proxy (HTTPS_PROXY, which httpx
// follows) with a certificate for api.github.com that it trusts through SSL_CERT_FILE; ours is given
// the stand-in as its github host. What a client sees must agree: every page, page ids, the query
// filter and the errors, except the deliberate differences asserted below (a rate limit, a 5xx's body).
// A pair of servers of its own: the proxy and CA must not reach the main suite's flows.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGitHubStandIn, type GitHubStandIn } from '../../src/testing/github/server.ts';
import { openhandsBinary, startAgentyard, startOpenHands, type Side } from './servers.ts';

const bin = openhandsBinary();
/** The certificate for api.github.com is made with openssl; without it the comparison cannot run. */
const openssl = (() => {
  try {
    execFileSync('openssl', ['version'], { stdio: 'ignore' });
    return true;
  } catch {
    console.warn('GitHub side-by-side SKIPPED: no openssl to make the stand-in a certificate for api.github.com');
    return false;
  }
})();
const TOKEN = 'ghp_parity_github_token_01';
const SEARCH = '/api/git/repositories/search?provider=github';

describe.skipIf(!bin || !openssl)('GitHub repository search side by side (OpenHands 1.58.2 and ours, one GitHub stand-in)', () => {
  let gh: GitHubStandIn;
  let oh: Side;
  let ay: Side;
  let dir: string;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'parity-github-'));
    const [key, cert] = [join(dir, 'key.pem'), join(dir, 'cert.pem')];
    execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '1', '-subj', '/CN=api.github.com', '-addext', 'subjectAltName=DNS:api.github.com', '-keyout', key, '-out', cert], { stdio: 'ignore' });
    gh = await startGitHubStandIn({ connectTls: { key: readFileSync(key, 'utf8'), cert: readFileSync(cert, 'utf8') } });
    gh.users.push({ login: 'octo', id: 7, token: TOKEN, orgs: ['acme'] });
    for (let i = 0; i < 150; i++) {
      const pushedAt = new Date(Date.UTC(2026, 0, 1) + i * 3_600_000).toISOString().replace('.000', '');
      gh.repos.push({ owner: i % 3 === 0 ? 'acme' : 'octo', ownerType: i % 3 === 0 ? 'Organization' : 'User', name: `repo-${String(i).padStart(3, '0')}`, private: i % 4 === 0, stars: i, pushedAt });
    }
    [oh, ay] = await Promise.all([
      startOpenHands(bin!, { HTTPS_PROXY: gh.url, https_proxy: gh.url, SSL_CERT_FILE: cert, NO_PROXY: '127.0.0.1,localhost', no_proxy: '127.0.0.1,localhost' }),
      startAgentyard({}, { githubHost: gh.url }),
    ]);
  }, 300_000);
  afterAll(async () => {
    await Promise.all([oh?.close(), ay?.close()]);
    await gh?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  /** Every page at this query string, following next_page_id: [status, body] of each. */
  async function walk(s: Side, q: string): Promise<unknown[]> {
    const pages: unknown[] = [];
    let next: string | null = null;
    do {
      const r = await s.api(`${SEARCH}${q}${next ? `&page_id=${encodeURIComponent(next)}` : ''}`);
      pages.push([r.status, r.body]);
      next = r.status === 200 ? r.body.next_page_id : null;
    } while (next && pages.length < 40);
    return pages;
  }

  it('lists, pages, filters and fails alike', async () => {
    const both = async <T>(f: (s: Side) => Promise<T>): Promise<[T, T]> => [await f(oh), await f(ay)];
    const missing = await both((s) => s.api(SEARCH));
    expect(missing[1]).toEqual(missing[0]);
    expect(missing[0]).toMatchObject({ status: 200, body: { missing_token: true } });
    for (const s of [oh, ay]) expect((await s.api('/api/settings/secrets', { method: 'PUT', body: { name: 'GITHUB_TOKEN', value: TOKEN } })).status).toBe(200);

    gh.requests.length = 0;
    for (const q of ['', '&limit=30', '&limit=7&query=ACME/repo-1', '&query=octo&limit=100', '&query=nothing-like-this']) {
      const [theirs, ours] = await both((s) => walk(s, q));
      expect(ours, q).toEqual(theirs);
      expect((theirs[0] as [number])[0], q).toBe(200);
    }
    // Both asked the stand-in the same requests, 1.58 as api.github.com through its proxy.
    const asked = (host: (h: string | undefined) => boolean) => gh.requests.filter((r) => host(r.host)).map((r) => `${r.method} ${r.path}?${r.query} ${r.authorization}`);
    const theirsAsked = asked((h) => h === 'api.github.com');
    expect(theirsAsked.length).toBeGreaterThan(5);
    expect(asked((h) => h !== 'api.github.com')).toEqual(theirsAsked);

    for (const bad of ['x', '0', '1:-1']) {
      const [theirs, ours] = await both((s) => s.api(`${SEARCH}&page_id=${bad}`));
      expect(ours, bad).toEqual(theirs);
    }
    const [notFound, notFoundOurs] = await both(async (s) => (gh.fail({ kind: 'server-error', status: 404 }), s.api(SEARCH)));
    expect(notFoundOurs).toEqual(notFound);
    expect(notFound).toEqual({ status: 400, body: { detail: 'GitHub repository search failed' } });
    // Deliberate, as plugins_fetch.unreachable_detail of the main suite: both answer GitHub's 5xx with
    // a 502; ours with the route's detail, where 1.58's generic 5xx handler wraps it in a repr string.
    const [failed, failedOurs] = await both(async (s) => (gh.fail({ kind: 'server-error', status: 500 }), s.api(SEARCH)));
    expect(failed).toEqual({ status: 502, body: { detail: 'Internal Server Error', exception: '502: GitHub repository search failed' } });
    expect(failedOurs).toEqual({ status: 502, body: { detail: 'GitHub repository search failed' } });
    // Deliberate: a rate limit is a 429 with GitHub's wait here (a client can tell "wait" from "this
    // token may not"), where 1.58 passes GitHub's 403 on (and answers GitHub's 429 with a 400).
    const [theirs, ours] = await both(async (s) => (gh.fail({ kind: 'secondary-rate-limit', status: 403, retryAfter: 30 }), s.api(SEARCH)));
    expect(theirs).toEqual({ status: 403, body: { detail: 'GitHub repository search failed' } });
    expect(ours).toEqual({ status: 429, body: { detail: "GitHub's rate limit for this token is exhausted; retry in 30 s" } });

    for (const s of [oh, ay]) expect((await s.api('/api/settings/secrets', { method: 'PUT', body: { name: 'GITHUB_TOKEN', value: 'ghp_revoked_0000000000' } })).status).toBe(200);
    const revoked = await both((s) => s.api(SEARCH));
    expect(revoked[1]).toEqual(revoked[0]);
    expect(revoked[0].status).toBe(401);
  }, 240_000);
});
