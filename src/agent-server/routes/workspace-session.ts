// POST/DELETE /api/auth/workspace-session (OpenHands 1.58's auth_router.py): a browser that holds
// the session key trades it for an HttpOnly cookie, so that <iframe src>/<img src> of workspace
// files (which cannot carry the X-Session-API-Key header) are authenticated. The caller has passed
// the session-key check already (this route sits behind it, like every /api route). The cookie is
// scoped to /api/conversations and honoured only by the workspace file routes (http/auth.ts), so
// it adds no CSRF surface to the rest of the API.
import Router from '@koa/router';
import type { Context } from 'koa';
import { Invalid } from '../../api/errors.ts';
import { WORKSPACE_SESSION_COOKIE } from '../../api/agent-server/settings.ts';
import { SESSION_HEADER } from '../http/auth.ts';

/** Browsers clamp Max-Age to about 400 days: this asks for the longest they allow (OpenHands' value). */
const MAX_AGE_SECONDS = 60 * 60 * 24 * 365 * 10;
const COOKIE_PATH = '/api/conversations';
/** RFC 6265 cookie-octet. */
const COOKIE_OCTETS = /^[\x21\x23-\x2B\x2D-\x3A\x3C-\x5B\x5D-\x7E]*$/;
const LOOPBACK = new Set(['localhost', '127.0.0.1', '::1']);

/**
 * Whether the browser will keep a `Secure` cookie from this request: HTTPS (as a TLS-terminating
 * proxy reports it in X-Forwarded-Proto), or plain HTTP to a loopback host (a secure context).
 */
export function isSecureContext(ctx: Context): boolean {
  const proto = ctx.get('x-forwarded-proto').split(',')[0]!.trim().toLowerCase() || ctx.protocol;
  if (proto === 'https') return true;
  let host = ctx.get('x-forwarded-host').split(',')[0]!.trim() || ctx.get('host');
  if (host.startsWith('[')) host = host.slice(1, host.indexOf(']'));
  else if (host.split(':').length === 2) host = host.split(':')[0]!;
  return LOOPBACK.has(host.toLowerCase());
}

/**
 * SameSite=None so cross-site iframes carry it (it is then only stored when Secure), HttpOnly so
 * script in a workspace page cannot read it, Partitioned (CHIPS) so third-party-cookie blocking
 * keeps it. Written by hand: the value is the key as given, in OpenHands' attribute order.
 */
function setCookie(ctx: Context, value: string, maxAge: number): void {
  // A key a cookie cannot carry as it is (spaces, quotes, semicolons...) would come back altered.
  if (!COOKIE_OCTETS.test(value)) throw new Invalid([{ loc: ['header', 'X-Session-API-Key'], msg: 'The session key cannot be carried by a cookie', type: 'value_error' }]);
  const quoted = value === '' ? '""' : value;
  const secure = isSecureContext(ctx);
  ctx.append('Set-Cookie', `${WORKSPACE_SESSION_COOKIE}=${quoted}; HttpOnly; Max-Age=${maxAge}; Path=${COOKIE_PATH}; SameSite=none${secure ? '; Secure; Partitioned' : ''}`);
  ctx.status = 204;
}

export function workspaceSessionRoutes(): Router {
  const router = new Router();
  router.post('/auth/workspace-session', async (ctx) => setCookie(ctx, ctx.get(SESSION_HEADER), MAX_AGE_SECONDS));
  router.delete('/auth/workspace-session', async (ctx) => setCookie(ctx, '', 0));
  return router;
}
