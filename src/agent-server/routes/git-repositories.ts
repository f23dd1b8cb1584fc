// GET /api/git/repositories/search?provider=&query=&limit=&page_id= (OpenHands 1.58): the
// repositories a git provider token can reach. OpenHands lists GitHub's with a token from its
// settings secrets; this agent server holds no provider token of its own (conversations get theirs
// as conversation secrets, and the application lists repositories itself), so a GitHub search says
// `missing_token: true` with no items — OpenHands' own answer when it has no token — and other
// providers are a 400, as there.
import Router from '@koa/router';
import { GitRepositorySearchQuery, type GitProviderRepositoryPage } from '../../api/agent-server/runtime.ts';
import { BadRequest } from '../../api/errors.ts';
import { validate } from '../http/validate.ts';

export function gitRepositoryRoutes(): Router {
  const r = new Router();
  r.get('/git/repositories/search', validate({ query: GitRepositorySearchQuery }), (ctx) => {
    const { provider } = ctx.state['query'] as GitRepositorySearchQuery;
    if (provider !== 'github') throw new BadRequest(`Repository discovery is not supported for provider '${provider}'`);
    const body: GitProviderRepositoryPage = { items: [], next_page_id: null, missing_token: true };
    ctx.body = body;
  });
  return r;
}
