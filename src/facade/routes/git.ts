// /api/v1/git: OpenHands' repository, branch, installation and suggested-task searches, served for
// forgejo hosts with the caller's FORGEJO_TOKEN (git-providers/); other providers answer 501.
import Router from '@koa/router';
import { input, userOf, type Facade } from '../context.ts';
import { BranchSearchQuery, InstallationSearchQuery, RepositorySearchQuery, SuggestedTaskSearchQuery } from '../../api/app/git.ts';
import { searchBranches, searchInstallations, searchRepositories, searchSuggestedTasks } from '../git-providers/index.ts';
import { validate } from '../validate.ts';

export function gitRoutes({ d }: Facade): Router {
  const r = new Router({ prefix: '/git' });
  r.get('/installations/search', validate({ query: InstallationSearchQuery }), async (ctx) => {
    ctx.body = await searchInstallations(d, userOf(ctx), input<InstallationSearchQuery>(ctx).query);
  });
  r.get('/repositories/search', validate({ query: RepositorySearchQuery }), async (ctx) => {
    ctx.body = await searchRepositories(d, userOf(ctx), input<RepositorySearchQuery>(ctx).query);
  });
  r.get('/branches/search', validate({ query: BranchSearchQuery }), async (ctx) => {
    ctx.body = await searchBranches(d, userOf(ctx), input<BranchSearchQuery>(ctx).query);
  });
  r.get('/suggested-tasks/search', validate({ query: SuggestedTaskSearchQuery }), async (ctx) => {
    ctx.body = await searchSuggestedTasks(d, userOf(ctx), input<SuggestedTaskSearchQuery>(ctx).query);
  });
  return r;
}
