// /api/v1/usage: the caller's model usage as the model gateway recorded it (per conversation,
// sandbox and model); /api/v1/usage/users: every user's, for administrators only.
import Router from '@koa/router';
import type { UsageReport, UsersUsage } from '../../api/app/usage.ts';
import { adminOnly } from '../admin.ts';
import { userOf, type Facade } from '../context.ts';

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

  r.get('/usage/users', adminOnly(d, 'Only administrators see every user\'s usage; GET /api/v1/usage shows your own'), async (ctx) => {
    const [total, users] = await Promise.all([d.db.usage.total(), d.db.usage.summary('user')]);
    const body: UsersUsage = { total, items: users.map(({ key, ...t }) => ({ user_id: key, ...t })) };
    ctx.body = body;
  });

  return r;
}
