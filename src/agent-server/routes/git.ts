// POST /api/agentyard/git/clone (agentyard addition): the app's PREPARING_REPOSITORY step.
// The answer always comes as 200 with a status, so the caller tells failures apart by value.
import Router from '@koa/router';
import { GitCloneRequest, MarketplacePluginsRequest } from '../../api/agent-server/git.ts';
import { parseBody } from '../../api/agent-server/parse.ts';
import { cloneRepository } from '../git/clone.ts';
import { marketplacePlugins } from '../git/marketplace.ts';

export function gitRoutes(workspaceDir: string): Router {
  const r = new Router();
  r.post('/agentyard/git/clone', async (ctx) => {
    ctx.body = await cloneRepository(workspaceDir, parseBody(GitCloneRequest, ctx.request.body));
  });
  r.post('/agentyard/marketplaces/plugins', async (ctx) => {
    ctx.body = await marketplacePlugins(parseBody(MarketplacePluginsRequest, ctx.request.body));
  });
  return r;
}
