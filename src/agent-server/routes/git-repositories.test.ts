// GET /api/git/repositories/search: without a stored GitHub token, missing_token with no items
// (OpenHands' answer without a token); with one, 501 (not built); other providers are a 400.
import { describe, expect, it } from 'vitest';
import { useTestServer } from '../test-support.ts';

const t = useTestServer();

describe('GET /api/git/repositories/search', () => {
  it('says the token is missing for GitHub, refuses other and unknown providers', async () => {
    expect(await t.s.api('/api/git/repositories/search?provider=github&query=x')).toEqual({ status: 200, body: { items: [], next_page_id: null, missing_token: true } });
    const gitlab = await t.s.api('/api/git/repositories/search?provider=gitlab');
    expect(gitlab).toEqual({ status: 400, body: { detail: "Repository discovery is not supported for provider 'gitlab'" } });
    expect((await t.s.api('/api/git/repositories/search?provider=svn')).body.detail[0].loc).toEqual(['query', 'provider']);
    expect((await t.s.api('/api/git/repositories/search')).body.detail[0].loc).toEqual(['query', 'provider']);
    expect((await t.s.api('/api/git/repositories/search?provider=github&limit=0')).body.detail[0].loc).toEqual(['query', 'limit']);
    expect((await t.s.api('/api/git/repositories/search?provider=github', { key: null })).status).toBe(401);
    // A stored GitHub token: listing with it is not built, said as such (never an empty list).
    expect((await t.s.api('/api/settings/secrets', { method: 'PUT', body: { name: 'GH_TOKEN', value: 'ghp_parity' } })).status).toBe(200);
    const withToken = await t.s.api('/api/git/repositories/search?provider=github');
    expect(withToken.status).toBe(501);
    expect(withToken.body.detail).toMatch(/not implemented/);
    expect(JSON.stringify(withToken.body)).not.toContain('ghp_parity');
  });
});
