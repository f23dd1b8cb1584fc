// GET /api/v1/app-conversations/{conversation_id}/hooks: the hooks configured in the workspace.
import Router from '@koa/router';
import { userOf, type Facade } from '../context.ts';
import { conversationHooks } from '../hooks.ts';

export function hookRoutes({ d }: Facade): Router {
  const r = new Router({ prefix: '/app-conversations' });
  r.get('/:conversation_id/hooks', async (ctx) => {
    ctx.body = await conversationHooks(d, userOf(ctx), ctx.params['conversation_id']!);
  });
  return r;
}
