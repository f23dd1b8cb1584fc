// /api/v1/sandboxes: create, batch read, search, pause, resume, delete.
import Router from '@koa/router';
import { input, userOf, type Facade } from '../context.ts';
import { batchSandboxes, createSandbox, deleteSandbox, pauseSandbox, resumeSandbox, searchSandboxes } from '../sandboxes.ts';
import { SandboxIdsQuery, PageQuery, SandboxCreateQuery, SandboxDeleteQuery } from '../../api/app/requests.ts';
import { validate } from '../validate.ts';

export function sandboxRoutes({ d }: Facade): Router {
  const r = new Router({ prefix: '/sandboxes' });

  r.post('/', validate({ query: SandboxCreateQuery }), async (ctx) => {
    ctx.body = await createSandbox(d, userOf(ctx), input<SandboxCreateQuery>(ctx).query.sandbox_spec_id);
  });

  r.get('/', validate({ query: SandboxIdsQuery }), async (ctx) => {
    ctx.body = await batchSandboxes(d, userOf(ctx), input<SandboxIdsQuery>(ctx).query.id);
  });

  r.get('/search', validate({ query: PageQuery }), async (ctx) => {
    ctx.body = await searchSandboxes(d, userOf(ctx), input<PageQuery>(ctx).query);
  });

  r.post('/:sandbox_id/pause', async (ctx) => {
    await pauseSandbox(d, userOf(ctx), ctx.params['sandbox_id']!);
    ctx.body = { success: true };
  });

  r.post('/:sandbox_id/resume', async (ctx) => {
    await resumeSandbox(d, userOf(ctx), ctx.params['sandbox_id']!);
    ctx.body = { success: true };
  });

  r.delete('/:sandbox_id', validate({ query: SandboxDeleteQuery }), async (ctx) => {
    await deleteSandbox(d, userOf(ctx), ctx.params['sandbox_id']!, input<SandboxDeleteQuery>(ctx).query.sandbox_id);
    ctx.body = { success: true };
  });

  return r;
}
