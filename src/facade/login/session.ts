// Browser sessions (README, "Login"): a random id in an httpOnly, SameSite=Lax cookie (Secure when
// the service is reached over https), only its sha256 in the app store; a synchronizer CSRF token
// per session, which every state-changing request authenticated by the cookie must echo in the
// X-CSRF-Token header. The app reads the token from GET /auth/session (same origin only: no CORS).
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Context } from 'koa';
import { Forbidden, Unauthorized } from '../../api/errors.ts';
import type { Clock } from '../../controller/clock.ts';
import type { AppStore } from '../db/types.ts';
import type { SessionRecord } from '../db/logins.ts';

export const SESSION_COOKIE = 'agentyard_session';
export const LOGIN_COOKIE = 'agentyard_login';
export const CSRF_HEADER = 'X-CSRF-Token';

/** Methods that change nothing (RFC 9110 safe methods) need no CSRF token. */
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

export interface SessionPolicy {
  maxAgeMs: number;
  idleMs: number;
  /** Secure cookies: the service is reached over https (its public URL). */
  secure: boolean;
}

export const newSecret = (): string => randomBytes(32).toString('base64url');
export const hashSecret = (s: string): string => createHash('sha256').update(s).digest('hex');

export function setCookie(ctx: Context, name: string, value: string, policy: SessionPolicy, opts: { path: string; maxAgeMs: number }): void {
  // Behind a TLS ingress the request reaches this process over plain http: the cookies library
  // would refuse a Secure cookie there, though the browser's connection is https.
  if (policy.secure) ctx.cookies.secure = true;
  ctx.cookies.set(name, value, { httpOnly: true, secure: policy.secure, sameSite: 'lax', path: opts.path, maxAge: opts.maxAgeMs, overwrite: true });
}

export function clearCookie(ctx: Context, name: string, policy: SessionPolicy, path: string): void {
  if (policy.secure) ctx.cookies.secure = true;
  ctx.cookies.set(name, '', { httpOnly: true, secure: policy.secure, sameSite: 'lax', path, maxAge: 0, overwrite: true });
}

/** Starts a session for the user; sets its cookie. */
export async function startSession(ctx: Context, db: AppStore, clock: Clock, policy: SessionPolicy, userId: string, idToken: string | null): Promise<void> {
  const id = newSecret();
  await db.logins.createSession(hashSecret(id), { userId, csrfToken: newSecret(), idToken, expiresAt: clock.now().plus({ milliseconds: policy.maxAgeMs }).toUTC().toISO()! });
  setCookie(ctx, SESSION_COOKIE, id, policy, { path: '/', maxAgeMs: policy.maxAgeMs });
}

/** The request's session, when its cookie names a live one. */
export async function sessionOf(ctx: Context, db: AppStore, policy: SessionPolicy): Promise<SessionRecord | undefined> {
  const id = ctx.cookies.get(SESSION_COOKIE);
  return id ? db.logins.findSession(hashSecret(id), policy.idleMs) : undefined;
}

function sameToken(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/** 403 for a state-changing request whose X-CSRF-Token is missing or not the session's. */
export function checkCsrf(ctx: Context, session: SessionRecord): void {
  if (SAFE_METHODS.has(ctx.method)) return;
  const sent = ctx.get(CSRF_HEADER);
  if (!sent) throw new Forbidden(`Missing ${CSRF_HEADER} header: a request authenticated by the session cookie must carry the session's CSRF token`);
  if (!sameToken(sent, session.csrfToken)) throw new Forbidden(`Wrong ${CSRF_HEADER} header: it is not this session's CSRF token`);
}

/**
 * The caller of a request without an API key: its session, CSRF-checked. A cookie that names no live
 * session (expired, logged out, user disabled) is cleared and answered 401.
 */
export async function authenticateSession(ctx: Context, db: AppStore, policy: SessionPolicy): Promise<SessionRecord | undefined> {
  if (!ctx.cookies.get(SESSION_COOKIE)) return undefined;
  const session = await sessionOf(ctx, db, policy);
  if (!session) {
    clearCookie(ctx, SESSION_COOKIE, policy, '/');
    throw new Unauthorized('The session has expired or was signed out: sign in again');
  }
  checkCsrf(ctx, session);
  return session;
}
