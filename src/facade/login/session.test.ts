// Browser sessions against the real facade over HTTP (real SQLite, manual clock): the cookie
// authenticates /api/v1, state-changing requests need the session's CSRF token, API keys are never
// subject to it, sessions end at their idle and absolute expiry, on logout and when the user is
// disabled. Sessions are made in the store here; the login flow itself runs against a real
// provider in e2e/login.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startHarness, type Harness } from '../test-support.ts';
import type { LoginSettings } from './config.ts';
import { safeReturnTo } from './routes.ts';
import { hashSecret, newSecret, SESSION_COOKIE } from './session.ts';

const LOGIN: LoginSettings = {
  // Never contacted here: no test in this file goes to the provider.
  issuer: 'http://127.0.0.1:9/realms/none',
  clientId: 'agentyard',
  publicUrl: 'http://127.0.0.1:3000',
  roleClaim: 'groups',
  scopes: 'openid',
  sessionMaxAgeMs: 8 * 3600_000,
  sessionIdleMs: 3600_000,
};

describe('browser sessions', () => {
  let h: Harness;
  beforeEach(async () => {
    h = await startHarness({}, { login: LOGIN });
  });
  afterEach(() => h.close());

  /** A session of `userId` as a login makes it; its cookie header and CSRF token. */
  async function session(userId: string, maxAgeMs = LOGIN.sessionMaxAgeMs): Promise<{ cookie: string; csrf: string }> {
    const id = newSecret();
    const csrf = newSecret();
    await h.db.logins.createSession(hashSecret(id), { userId, csrfToken: csrf, idToken: null, expiresAt: h.clock.now().plus({ milliseconds: maxAgeMs }).toUTC().toISO()! });
    return { cookie: `${SESSION_COOKIE}=${id}`, csrf };
  }

  it('authenticates /api/v1 by the cookie; reads need no CSRF token', async () => {
    const s = await session(h.alice.user.id);
    const me = await h.call('GET', '/api/v1/users/me', { key: null, headers: { cookie: s.cookie } });
    expect(me.status).toBe(200);
    expect(me.body.id).toBe(h.alice.user.id);
    const none = await h.call('GET', '/api/v1/users/me', { key: null });
    expect(none.status).toBe(401);
  });

  it('refuses a state-changing request without the session\'s CSRF token (403, error envelope), takes it with the token', async () => {
    const s = await session(h.alice.user.id);
    const body = { sandbox_grouping_strategy: 'ADD_TO_ANY' };
    const missing = await h.call('POST', '/api/v1/settings', { key: null, body, headers: { cookie: s.cookie } });
    expect(missing.status).toBe(403);
    expect(missing.body).toEqual({ detail: expect.stringContaining('Missing X-CSRF-Token') });
    const other = await session(h.bob.user.id);
    const wrong = await h.call('POST', '/api/v1/settings', { key: null, body, headers: { cookie: s.cookie, 'x-csrf-token': other.csrf } });
    expect(wrong.status).toBe(403);
    expect(wrong.body.detail).toContain('Wrong X-CSRF-Token');
    expect((await h.db.getSettings(h.alice.user.id)).sandbox_grouping_strategy).toBe('NO_GROUPING');
    const ok = await h.call('POST', '/api/v1/settings', { key: null, body, headers: { cookie: s.cookie, 'x-csrf-token': s.csrf } });
    expect(ok.status).toBe(200);
    expect((await h.db.getSettings(h.alice.user.id)).sandbox_grouping_strategy).toBe('ADD_TO_ANY');
  });

  it('never applies CSRF to a request with an API key, whatever cookie it carries; the key decides who calls', async () => {
    const s = await session(h.alice.user.id);
    const res = await h.call('POST', '/api/v1/settings', { key: h.bob.key, body: { sandbox_grouping_strategy: 'ADD_TO_ANY' }, headers: { cookie: s.cookie } });
    expect(res.status).toBe(200);
    expect((await h.db.getSettings(h.bob.user.id)).sandbox_grouping_strategy).toBe('ADD_TO_ANY');
    expect((await h.db.getSettings(h.alice.user.id)).sandbox_grouping_strategy).toBe('NO_GROUPING');
    // A bad key is refused even with a live session cookie beside it.
    expect((await h.call('GET', '/api/v1/users/me', { key: 'ay_not-a-key', headers: { cookie: s.cookie } })).status).toBe(401);
  });

  it('ends a session after the idle timeout, and at its absolute expiry however active; the cookie is cleared', async () => {
    const s = await session(h.alice.user.id);
    for (let i = 0; i < 3; i++) {
      h.clock.advance(50 * 60_000);
      expect((await h.call('GET', '/api/v1/users/me', { key: null, headers: { cookie: s.cookie } })).status).toBe(200);
    }
    h.clock.advance(61 * 60_000);
    const idle = await h.call('GET', '/api/v1/users/me', { key: null, headers: { cookie: s.cookie } });
    expect(idle.status).toBe(401);
    expect(idle.body.detail).toContain('expired');
    expect(idle.headers.get('set-cookie')).toMatch(new RegExp(`^${SESSION_COOKIE}=;`));

    const short = await session(h.alice.user.id, 2 * 3600_000);
    for (let i = 0; i < 4; i++) {
      expect((await h.call('GET', '/api/v1/users/me', { key: null, headers: { cookie: short.cookie } })).status).toBe(200);
      h.clock.advance(30 * 60_000);
    }
    expect((await h.call('GET', '/api/v1/users/me', { key: null, headers: { cookie: short.cookie } })).status).toBe(401);
  });

  it('ends the sessions of a disabled user', async () => {
    const s = await session(h.bob.user.id);
    await h.db.setUserDisabled(h.bob.user.id, true);
    expect((await h.call('GET', '/api/v1/users/me', { key: null, headers: { cookie: s.cookie } })).status).toBe(401);
  });

  it('refuses a non-admin session an admin-only route (403)', async () => {
    const s = await session(h.bob.user.id);
    const res = await h.call('GET', '/api/v1/usage/users', { key: null, headers: { cookie: s.cookie } });
    expect(res.status).toBe(403);
    expect(res.body.detail).toContain('Only administrators');
  });

  it('GET /auth/session tells the app who is signed in and the CSRF token; logout needs the token and ends the session', async () => {
    const s = await session(h.alice.user.id);
    const anon = await h.call('GET', '/auth/session', { key: null });
    expect(anon.body).toEqual({ oidc: true, user: null });
    const who = await h.call('GET', '/auth/session', { key: null, headers: { cookie: s.cookie } });
    expect(who.body).toMatchObject({ oidc: true, user: { id: h.alice.user.id, name: 'alice', admin: false }, csrf_token: s.csrf });
    expect(who.headers.get('cache-control')).toBe('no-store');

    const noToken = await h.call('POST', '/auth/logout', { key: null, headers: { cookie: s.cookie } });
    expect(noToken.status).toBe(403);
    expect((await h.call('GET', '/api/v1/users/me', { key: null, headers: { cookie: s.cookie } })).status).toBe(200);
    // The provider is not reachable here: logout still ends the session, and sends the browser home.
    const out = await h.call('POST', '/auth/logout', { key: null, headers: { cookie: s.cookie, 'x-csrf-token': s.csrf } });
    expect(out.status).toBe(200);
    expect(out.body).toEqual({ redirect: '/' });
    expect(out.headers.get('set-cookie')).toMatch(new RegExp(`^${SESSION_COOKIE}=;.*httponly`, 'i'));
    expect((await h.call('GET', '/api/v1/users/me', { key: null, headers: { cookie: s.cookie } })).status).toBe(401);
  });

  it('answers a login whose provider cannot be reached with a page saying so (503)', async () => {
    const res = await fetch(`${h.server.url}/auth/login`, { redirect: 'manual' });
    expect(res.status).toBe(503);
    expect(await res.text()).toContain('cannot be reached');
  });
});

describe('without OpenID Connect login', () => {
  let h: Harness;
  beforeEach(async () => {
    h = await startHarness();
  });
  afterEach(() => h.close());

  it('says so at /auth/session, answers 501 at /auth/login, and ignores session cookies', async () => {
    expect((await h.call('GET', '/auth/session', { key: null })).body).toEqual({ oidc: false, user: null });
    const login = await h.call('GET', '/auth/login', { key: null });
    expect(login.status).toBe(501);
    expect(login.body.detail).toContain('AGENTYARD_OIDC_ISSUER');
    const id = newSecret();
    await h.db.logins.createSession(hashSecret(id), { userId: h.alice.user.id, csrfToken: 'c', idToken: null, expiresAt: '2099-01-01T00:00:00.000Z' });
    expect((await h.call('GET', '/api/v1/users/me', { key: null, headers: { cookie: `${SESSION_COOKIE}=${id}` } })).status).toBe(401);
  });
});

describe('safeReturnTo', () => {
  it('keeps paths of this site only', () => {
    expect(safeReturnTo('/#/c/abc')).toBe('/#/c/abc');
    expect(safeReturnTo('/admin')).toBe('/admin');
    for (const bad of ['//evil.example', '/\\evil.example', 'https://evil.example/', 'javascript:alert(1)', '', undefined, ['/a']]) expect(safeReturnTo(bad)).toBe('/');
  });
});
