// Bearer API keys for every /api/v1 route except the webhooks, which authenticate with the
// sandbox's session key instead (routes/webhooks.ts).
import type { Middleware } from 'koa';
import { Unauthorized } from '../api/errors.ts';
import type { AppStore } from './db/types.ts';

const BEARER = /^Bearer\s+(\S+)\s*$/i;

export function requireApiKey(db: AppStore, opts: { except: (path: string) => boolean }): Middleware {
  return async function apiKeyAuth(ctx, next) {
    if (!opts.except(ctx.path)) {
      const m = BEARER.exec(ctx.get('authorization'));
      const user = m ? await db.findUserByApiKey(m[1]!) : undefined;
      if (!user) throw new Unauthorized(m ? 'Invalid API key' : 'Missing Authorization: Bearer <API key> header');
      ctx.state.user = user;
    }
    await next();
  };
}
