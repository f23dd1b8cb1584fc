// GET /api/git/repositories/search?provider=&query=&limit=&page_id= (OpenHands 1.58): the
// repositories a git provider token can reach. OpenHands lists GitHub's with a token from its
// settings secrets (`github_token`, `GITHUB_TOKEN`, `GH_TOKEN` or `github`, in that order); without
// one it answers `missing_token: true` with no items, and so does this server. With one, GitHub's
// API of the configured github host is asked (git/github-repositories.ts). Other providers: 400, as there.
import Router from '@koa/router';
import { GitRepositorySearchQuery, type GitProviderRepositoryPage } from '../../api/agent-server/runtime.ts';
import { BadRequest } from '../../api/errors.ts';
import { searchGitHubRepositories } from '../git/github-repositories.ts';
import { validate } from '../http/validate.ts';

/** The settings secrets OpenHands takes a GitHub token from, in its order. */
export const GITHUB_TOKEN_SECRETS = ['github_token', 'GITHUB_TOKEN', 'GH_TOKEN', 'github'];

/** `secret(name)`: a stored settings secret's value (undefined: none). `githubHost`: AGENTYARD_GIT_HOSTS' github. */
export function gitRepositoryRoutes(secret: (name: string) => string | undefined, githubHost: string, now: () => number = Date.now): Router {
  const r = new Router();
  r.get('/git/repositories/search', validate({ query: GitRepositorySearchQuery }), async (ctx) => {
    const { provider, query, limit = 100, page_id } = ctx.state['query'] as GitRepositorySearchQuery;
    if (provider !== 'github') throw new BadRequest(`Repository discovery is not supported for provider '${provider}'`);
    const token = GITHUB_TOKEN_SECRETS.map((name) => secret(name)).find((v) => v);
    if (!token) {
      const body: GitProviderRepositoryPage = { items: [], next_page_id: null, missing_token: true };
      ctx.body = body;
      return;
    }
    ctx.body = await searchGitHubRepositories({ host: githubHost, token, limit, now, ...(query !== undefined ? { query } : {}), ...(page_id !== undefined ? { pageId: page_id } : {}) });
  });
  return r;
}
