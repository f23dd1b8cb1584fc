// /api/v1/usage: the caller's model usage as the model gateway recorded it (per conversation,
// sandbox and model); /api/v1/usage/users: every user's, for the installation's admin only.
import Router from '@koa/router';
import type { UsageReport, UsersUsage } from '../../api/app/usage.ts';
import { Forbidden } from '../../api/errors.ts';
import { userOf, type Facade } from '../context.ts';

/** The built-in user `agentyard up` and `agentyard api` create; the only one who sees everyone's usage. */
export const ADMIN_USER_ID = 'admin';

export function usageRoutes({ d }: Facade): Router {
  const r = new Router();

  r.get('/usage', async (ctx) => {
    const userId = userOf(ctx).id;
    const [total, conversations, sandboxes, models] = await Promise.all([
      d.db.usage.total({ userId }),
      d.db.usage.summary('conversation', { userId }),
      d.db.usage.summary('sandbox', { userId }),
      d.db.usage.summary('model', { userId }),
    ]);
    const body: UsageReport = {
      user_id: userId,
      total,
      by_conversation: conversations.map(({ key, ...t }) => ({ conversation_id: key, ...t })),
      by_sandbox: sandboxes.map(({ key, ...t }) => ({ sandbox_id: key ?? '', ...t })),
      by_model: models.map(({ key, ...t }) => ({ model: key ?? '', ...t })),
    };
    ctx.body = body;
  });

  r.get('/usage/users', async (ctx) => {
    if (userOf(ctx).id !== ADMIN_USER_ID) throw new Forbidden('Only the admin user sees every user\'s usage; GET /api/v1/usage shows your own');
    const [total, users] = await Promise.all([d.db.usage.total(), d.db.usage.summary('user')]);
    const body: UsersUsage = { total, items: users.map(({ key, ...t }) => ({ user_id: key, ...t })) };
    ctx.body = body;
  });

  return r;
}
