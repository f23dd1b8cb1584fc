// GET /api/v1/app-conversations/{conversation_id}/skills: the skills the workspace loads.
import Router from '@koa/router';
import { userOf, type Facade } from '../context.ts';
import { conversationSkills } from '../skills.ts';

export function skillRoutes({ d }: Facade): Router {
  const r = new Router({ prefix: '/app-conversations' });
  r.get('/:conversation_id/skills', async (ctx) => {
    ctx.body = await conversationSkills(d, userOf(ctx), ctx.params['conversation_id']!);
  });
  return r;
}
