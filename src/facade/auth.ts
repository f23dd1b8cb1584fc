// Bearer API keys for every request except the public pages and the webhooks (which authenticate
// with the sandbox's session key instead, routes/webhooks.ts); without a key, a browser session's
// cookie (login/session.ts), CSRF-checked. A request with a key is never judged by its cookies. It runs before routing and before
// any body is read; a refused request with a body gets `Connection: close`, so an unauthenticated
// upload is answered at once and its socket closed instead of the rest being drained.
import type { Context, Middleware } from 'koa';
import { Unauthorized } from '../api/errors.ts';
import type { AppStore } from './db/types.ts';
import { authenticateSession, sessionOf, type SessionPolicy } from './login/session.ts';

const BEARER = /^Bearer\s+(\S+)\s*$/i;

/** On a refusal: a request body still on its way is not drained; the socket closes after the answer. */
export function closeIfBody(ctx: Context): void {
  if ((ctx.request.length ?? 0) > 0 || ctx.get('transfer-encoding') !== '') ctx.set('Connection', 'close');
}

export function requireApiKey(db: AppStore, opts: { except: (path: string) => boolean; sessions?: () => SessionPolicy }): Middleware {
  return async function apiKeyAuth(ctx, next) {
    if (!opts.except(ctx.path)) {
      const m = BEARER.exec(ctx.get('authorization'));
      if (!m && opts.sessions) {
        const session = await authenticateSession(ctx, db, opts.sessions()).catch((err: unknown) => {
          closeIfBody(ctx);
          throw err;
        });
        if (session) {
          ctx.state.user = session.user;
          return next();
        }
      }
      const user = m ? await db.findUserByApiKey(m[1]!) : undefined;
      if (!user) {
        closeIfBody(ctx);
        throw new Unauthorized(m ? 'Invalid API key' : 'Missing Authorization: Bearer <API key> header');
      }
      ctx.state.user = user;
    }
    await next();
  };
}

/**
 * Whether the credentials a request came with still hold: its API key still names an enabled user,
 * or its session cookie a live session. A long-lived response (the conversation change stream)
 * asks now and then, and ends when they no longer do; the client's reconnect then gets the 401.
 */
export async function credentialsHold(ctx: Context, db: AppStore, sessions?: () => SessionPolicy): Promise<boolean> {
  const m = BEARER.exec(ctx.get('authorization'));
  if (m) return (await db.findUserByApiKey(m[1]!)) !== undefined;
  return sessions !== undefined && (await sessionOf(ctx, db, sessions())) !== undefined;
}
