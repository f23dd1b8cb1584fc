// Administrators: users with the admin flag (the built-in `admin` of `agentyard up` and
// `agentyard api`, or `agentyard users create --admin`). One check for every admin-only route.
import type { Context, Next } from 'koa';
import { Forbidden } from '../api/errors.ts';
import { userOf } from './context.ts';
import type { FacadeDeps } from './deps.ts';

/** Middleware refusing (403, with `why`) a caller who is not an administrator. */
export function adminOnly(d: FacadeDeps, why: string) {
  return async function requireAdmin(ctx: Context, next: Next): Promise<void> {
    if (!(await d.db.getUserInfo(userOf(ctx).id))?.admin) throw new Forbidden(why);
    await next();
  };
}
