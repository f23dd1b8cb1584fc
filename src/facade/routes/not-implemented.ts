// Routes of spec part 4 that a later issue builds. They answer 501 with what is missing, after
// the same authentication and ownership checks as the real routes (a foreign id is still a 404).
import Router from '@koa/router';
import { ConversationKind } from '../../api/conversation.ts';
import { NotFound, NotImplemented } from '../../api/errors.ts';
import { userOf, type Facade } from '../context.ts';
import { getOwned } from '../resources.ts';

const CONVERSATION_ROUTES: [method: 'get' | 'patch' | 'delete' | 'post', path: string, what: string][] = [
  ['get', '/:conversation_id/files', 'Listing workspace files'],
];

export function notImplementedRoutes({ d }: Facade): Router {
  const r = new Router({ prefix: '/app-conversations' });
  for (const [method, path, what] of CONVERSATION_ROUTES) {
    r[method](path, async (ctx) => {
      const id = ctx.params['conversation_id']!;
      if (!(await getOwned(d, ConversationKind, userOf(ctx).id, id))) throw new NotFound(`Conversation ${id} not found`);
      throw new NotImplemented(`${what} is not implemented yet`);
    });
  }
  return r;
}
