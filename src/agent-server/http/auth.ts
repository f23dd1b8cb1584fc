// Session-key authentication for `/api/*` (header X-Session-API-Key) and for the sockets.
// An empty key list turns authentication off, as in OpenHands.
import { createHash, timingSafeEqual } from 'node:crypto';
import type { Middleware } from 'koa';
import { Unauthorized } from '../../api/errors.ts';
import { closeIfBody } from '../../facade/auth.ts';
import { WORKSPACE_SESSION_COOKIE } from '../../api/agent-server/settings.ts';

export const SESSION_HEADER = 'x-session-api-key';

/**
 * The workspace file routes, the only ones that also accept the workspace session cookie (minted by
 * POST /api/auth/workspace-session) in place of the header: browsers cannot put a header on an
 * <iframe src>. Every other route wants the header, so the cookie adds no CSRF surface.
 */
const WORKSPACE_FILES = /^\/api\/conversations\/[^/]+\/workspace(\/|$)/;

function digest(s: string): Buffer {
  return createHash('sha256').update(s).digest();
}

export class SessionKeys {
  #digests: Buffer[];

  constructor(keys: readonly string[]) {
    this.#digests = keys.filter((k) => k !== '').map(digest);
  }

  /** From now on only `keys` are accepted (a warm-pool sandbox handed over to its user). */
  replace(keys: readonly string[]): void {
    this.#digests = keys.filter((k) => k !== '').map(digest);
  }

  /** Exactly `key` is accepted and nothing else. */
  isOnly(key: string): boolean {
    return this.#digests.length === 1 && this.matches(key);
  }

  get enabled(): boolean {
    return this.#digests.length > 0;
  }

  /** Constant-time per key (comparing digests, so lengths never leak). */
  matches(candidate: unknown): boolean {
    if (typeof candidate !== 'string' || candidate === '') return false;
    const d = digest(candidate);
    let ok = false;
    for (const k of this.#digests) ok = timingSafeEqual(k, d) || ok;
    return ok;
  }
}

/**
 * `bearer`: an `Authorization: Bearer <session key>` is accepted too (the OpenAI-compatible gateway,
 * whose clients send their API key that way; the same keys, not a second credential).
 */
export function requireSessionKey(keys: SessionKeys, opts: { bearer?: boolean } = {}): Middleware {
  return async function sessionAuth(ctx, next) {
    const bearer = opts.bearer ? /^Bearer\s+(\S+)\s*$/i.exec(ctx.get('authorization'))?.[1] : undefined;
    const cookie = WORKSPACE_FILES.test(ctx.path) ? ctx.cookies.get(WORKSPACE_SESSION_COOKIE) : undefined;
    if (keys.enabled && !keys.matches(ctx.get(SESSION_HEADER)) && !keys.matches(bearer) && !keys.matches(cookie)) {
      closeIfBody(ctx); // a refused upload is not drained
      throw new Unauthorized('Unauthorized');
    }
    await next();
  };
}
