// GET /api/tools/: the names of the tools a conversation on this server can have (the same list as
// /server_info usable_tools; see src/agent/tools/catalog.ts for what is and is not in it).
import Router from '@koa/router';

export function toolRoutes(usableTools: readonly string[]): Router {
  const r = new Router();
  r.get('/tools/', async (ctx) => {
    ctx.body = [...usableTools];
  });
  return r;
}
