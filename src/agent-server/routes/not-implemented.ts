// Parts of the OpenHands agent-server API (the 1.44 client schema) that agentyard has not built.
// They answer 501 with a clear message (never 404, which would read as "wrong URL", and never a
// fake success). Conversation routes still check the id first (422 for a non-UUID), as every route does.
import Router from '@koa/router';
import { NotImplemented } from '../../api/errors.ts';
import { withConversationIdParam } from '../http/validate.ts';

type Method = 'get' | 'post' | 'put' | 'all';

export const NOT_BUILT: [method: Method, path: string, what: string][] = [
];

/** OpenHands 1.58 routes outside `/api` that are not built (none today; kept for the next one). */
export const NOT_BUILT_OUTSIDE_API: [method: Method, path: string, what: string][] = [];

export function notImplementedRoutes(table: [Method, string, string][] = NOT_BUILT): Router {
  const router = withConversationIdParam(new Router());
  for (const [method, path, what] of table) {
    const handler = async () => {
      throw new NotImplemented(`${what} is not implemented by this agent server`);
    };
    router[method](path, handler);
  }
  return router;
}
