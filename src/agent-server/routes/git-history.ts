// GET /api/git/commits?path=&limit= and GET /api/git/commits/{sha}/changes?path= (OpenHands' display
// git API); `GET /api/git/diff?commit=` is in workspace.ts with the other diff. Paths are absolute
// (400 otherwise, as the other git routes); a SHA is hex (422 at ['path','sha'] otherwise).
import Router from '@koa/router';
import { requireAbsolute } from '../http/paths.ts';
import Type from 'typebox';
import { parseValue } from '../../api/events/validate.ts';
import { commitChanges, gitCommits } from '../git/history.ts';
import { GitCommitsQuery, Sha } from '../http/queries.ts';
import { parseQuery } from '../http/validate.ts';
import { pathOf } from './workspace.ts';

const ShaParam = Type.Object({ sha: Sha });

export function gitHistoryRoutes(): Router {
  const r = new Router();
  r.param('sha', (sha, _ctx, next) => {
    parseValue(ShaParam, { sha }, { prefix: ['path'] });
    return next();
  });
  r.get('/git/commits', async (ctx) => {
    const q = parseQuery(GitCommitsQuery, ctx.query);
    ctx.body = await gitCommits(requireAbsolute(q.path), q.limit ?? 50);
  });
  r.get('/git/commits/:sha/changes', async (ctx) => {
    ctx.body = await commitChanges(pathOf(ctx, false).path, ctx.params['sha']!);
  });
  return r;
}
