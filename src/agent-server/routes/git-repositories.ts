// GET /api/git/repositories/search?provider=&query=&limit=&page_id= (OpenHands 1.58): the
// repositories a git provider token can reach. OpenHands lists GitHub's with a token from its
// settings secrets (`github_token`, `GITHUB_TOKEN`, `GH_TOKEN` or `github`); without one it answers
// `missing_token: true` with no items, and so does this server. Listing with a stored token (a call
// to GitHub's API) is not built here: 501 with that message, never an empty list that would read as
// "this token reaches nothing" (the application lists repositories itself). Other providers: 400, as there.
import Router from '@koa/router';
import { GitRepositorySearchQuery, type GitProviderRepositoryPage } from '../../api/agent-server/runtime.ts';
import { BadRequest, NotImplemented } from '../../api/errors.ts';
import { validate } from '../http/validate.ts';

/** The settings secrets OpenHands takes a GitHub token from, in its order. */
export const GITHUB_TOKEN_SECRETS = ['github_token', 'GITHUB_TOKEN', 'GH_TOKEN', 'github'];

/** `secret(name)`: a stored settings secret's value (undefined: none). */
export function gitRepositoryRoutes(secret: (name: string) => string | undefined): Router {
  const r = new Router();
  r.get('/git/repositories/search', validate({ query: GitRepositorySearchQuery }), (ctx) => {
    const { provider } = ctx.state['query'] as GitRepositorySearchQuery;
    if (provider !== 'github') throw new BadRequest(`Repository discovery is not supported for provider '${provider}'`);
    if (GITHUB_TOKEN_SECRETS.some((name) => secret(name))) throw new NotImplemented('Listing GitHub repositories with a stored token is not implemented by this agent server');
    const body: GitProviderRepositoryPage = { items: [], next_page_id: null, missing_token: true };
    ctx.body = body;
  });
  return r;
}
