// The login routes, outside /api/v1 (browser navigation, not API calls; README, "Login"):
//   GET  /auth/session   who is signed in (and the session's CSRF token), and whether OIDC login is on
//   GET  /auth/login     starts the authorization code flow with PKCE: a redirect to the provider
//   GET  /auth/callback  the provider's redirect back: code redeemed, user created/updated, session started
//   POST /auth/logout    ends the session (CSRF-checked); answers where to go: the provider's
//                        end-session URL (RP-initiated logout) when it has one, else /
// A login request is kept in the app store under a hash of a short-lived cookie of its own, so the
// callback may reach any replica and only the browser that started the login can finish it.
import Router from '@koa/router';
import type { Context } from 'koa';
import * as oidc from 'openid-client';
import { isAgentyardError, NotImplemented } from '../../api/errors.ts';
import { SingleUserInstallation } from '../db/types.ts';
import type { Facade } from '../context.ts';
import { escapeHtml } from '../web/pages.ts';
import { CALLBACK_PATH, type OidcClient } from './oidc.ts';
import { checkCsrf, clearCookie, hashSecret, LOGIN_COOKIE, newSecret, SESSION_COOKIE, sessionOf, setCookie, startSession, type SessionPolicy } from './session.ts';

/** How long a browser has to come back from the provider's login form. */
const LOGIN_REQUEST_MS = 10 * 60_000;

/** The session policy of the login settings: Secure cookies when the service is reached over https. */
export function sessionPolicy(client: OidcClient): SessionPolicy {
  const s = client.settings;
  return { maxAgeMs: s.sessionMaxAgeMs, idleMs: s.sessionIdleMs, secure: s.publicUrl?.startsWith('https:') ?? false };
}

/** Where to go after login: a path of this site only (no scheme, no `//host`), else the app. */
export function safeReturnTo(raw: unknown): string {
  return typeof raw === 'string' && raw.length <= 2000 && /^\/(?![/\\])/.test(raw) ? raw : '/';
}

/** A small page for a login that did not work: what happened, and a way to try again. No script. */
function loginPage(ctx: Context, status: number, title: string, message: string): void {
  ctx.status = status;
  ctx.type = 'text/html; charset=utf-8';
  ctx.set('Content-Security-Policy', "default-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'");
  ctx.set('Cache-Control', 'no-store');
  ctx.set('Referrer-Policy', 'no-referrer');
  ctx.body = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(title)} · agentyard</title></head>
<body><h1>${escapeHtml(title)}</h1><p id="error">${escapeHtml(message)}</p><p><a id="retry" href="/auth/login">Sign in again</a></p></body></html>`;
}

export function loginRoutes(facade: Facade, client: OidcClient | undefined): Router {
  const { db, clock, log } = facade.d;
  const router = new Router();
  const off = () => new NotImplemented('OpenID Connect login is not configured here (set AGENTYARD_OIDC_ISSUER, README "Login"); sign in with an API key');

  router.get('/auth/session', async (ctx) => {
    ctx.set('Cache-Control', 'no-store');
    if (!client) {
      ctx.body = { oidc: false, user: null };
      return;
    }
    const policy = sessionPolicy(client);
    const session = await sessionOf(ctx, db, policy);
    if (!session) {
      if (ctx.cookies.get(SESSION_COOKIE)) clearCookie(ctx, SESSION_COOKIE, policy, '/');
      ctx.body = { oidc: true, user: null };
      return;
    }
    const info = await db.getUserInfo(session.user.id);
    ctx.body = { oidc: true, user: { id: session.user.id, name: session.user.name, admin: info?.admin ?? false }, csrf_token: session.csrfToken, expires_at: session.expiresAt };
  });

  router.get('/auth/login', async (ctx) => {
    if (!client) throw off();
    const policy = sessionPolicy(client);
    let started;
    try {
      started = await client.start(safeReturnTo(ctx.query['return_to']));
    } catch (err) {
      if (!isAgentyardError(err)) throw err;
      return loginPage(ctx, 503, 'Sign-in is unavailable', err.message);
    }
    const id = newSecret();
    await db.logins.saveLoginRequest(hashSecret(id), { ...started.request, expiresAt: clock.now().plus({ milliseconds: LOGIN_REQUEST_MS }).toUTC().toISO()! });
    setCookie(ctx, LOGIN_COOKIE, id, policy, { path: '/auth', maxAgeMs: LOGIN_REQUEST_MS });
    ctx.set('Cache-Control', 'no-store');
    ctx.redirect(started.url.toString());
  });

  router.get(CALLBACK_PATH, async (ctx) => {
    if (!client) throw off();
    const policy = sessionPolicy(client);
    const id = ctx.cookies.get(LOGIN_COOKIE);
    clearCookie(ctx, LOGIN_COOKIE, policy, '/auth');
    const request = id ? await db.logins.takeLoginRequest(hashSecret(id)) : undefined;
    if (!request) return loginPage(ctx, 400, 'Sign-in expired', 'This sign-in was not started in this browser, took longer than 10 minutes, or was already used.');
    // The URL the provider redirected to, as openid-client checks it against the redirect URI.
    const callbackUrl = new URL(`${client.redirectUri}${ctx.querystring ? `?${ctx.querystring}` : ''}`);
    let result;
    try {
      result = await client.finish(callbackUrl, request);
    } catch (err) {
      if (err instanceof oidc.AuthorizationResponseError) {
        return loginPage(ctx, 401, 'Sign-in failed', `The identity provider refused the sign-in: ${err.error_description ?? err.error}`);
      }
      if (isAgentyardError(err)) return loginPage(ctx, 503, 'Sign-in is unavailable', err.message);
      log.warn({ err }, 'login: the provider\'s answer did not pass the checks');
      return loginPage(ctx, 401, 'Sign-in failed', 'The identity provider\'s answer could not be verified.');
    }
    let login;
    try {
      login = await db.logins.userForIdentity(result.identity);
    } catch (err) {
      if (err instanceof SingleUserInstallation) return loginPage(ctx, 409, 'Sign-in refused', err.message);
      throw err;
    }
    if (login.disabled) return loginPage(ctx, 403, 'Account disabled', 'This account is disabled; an administrator can enable it again.');
    // A login always gets a fresh session id; one this browser held before ends here.
    const previous = ctx.cookies.get(SESSION_COOKIE);
    if (previous) await db.logins.deleteSession(hashSecret(previous));
    await startSession(ctx, db, clock, policy, login.user.id, result.idToken);
    log.info({ user: login.user.id, issuer: result.identity.issuer }, 'login: session started');
    ctx.set('Cache-Control', 'no-store');
    ctx.redirect(request.returnTo);
  });

  router.post('/auth/logout', async (ctx) => {
    if (!client) throw off();
    const policy = sessionPolicy(client);
    const id = ctx.cookies.get(SESSION_COOKIE);
    let redirect = '/';
    if (id) {
      const session = await sessionOf(ctx, db, policy);
      if (session) {
        checkCsrf(ctx, session);
        await db.logins.deleteSession(hashSecret(id));
        redirect = (await client.endSessionUrl(session.idToken, `${client.settings.publicUrl}/`)) ?? '/';
      }
      clearCookie(ctx, SESSION_COOKIE, policy, '/');
    }
    ctx.body = { redirect };
  });

  return router;
}
