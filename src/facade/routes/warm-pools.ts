// /api/v1/warm-pools: administrators list, create, change and delete warm pools (the same
// SandboxWarmPool resources `kubectl get sandboxwarmpools` shows in a cluster).
import Router from '@koa/router';
import { WarmPoolCreate, WarmPoolParams, WarmPoolUpdate } from '../../api/app/warm-pools.ts';
import { adminOnly } from '../admin.ts';
import type { Facade } from '../context.ts';
import { validate } from '../validate.ts';
import { createWarmPool, deleteWarmPool, getWarmPool, listWarmPools, updateWarmPool } from '../warm-pools.ts';

export function warmPoolRoutes({ d }: Facade): Router {
  const r = new Router({ prefix: '/warm-pools' });
  const admin = adminOnly(d, 'Only administrators manage warm pools');

  r.get('/', admin, async (ctx) => {
    ctx.body = { items: await listWarmPools(d) };
  });
  r.post('/', admin, validate({ body: WarmPoolCreate }), async (ctx) => {
    ctx.status = 201;
    ctx.body = await createWarmPool(d, ctx.state.body as WarmPoolCreate);
  });
  r.get('/:name', admin, validate({ params: WarmPoolParams }), async (ctx) => {
    ctx.body = await getWarmPool(d, (ctx.state.params as WarmPoolParams).name);
  });
  r.patch('/:name', admin, validate({ params: WarmPoolParams, body: WarmPoolUpdate }), async (ctx) => {
    ctx.body = await updateWarmPool(d, (ctx.state.params as WarmPoolParams).name, ctx.state.body as WarmPoolUpdate);
  });
  r.delete('/:name', admin, validate({ params: WarmPoolParams }), async (ctx) => {
    await deleteWarmPool(d, (ctx.state.params as WarmPoolParams).name);
    ctx.body = { success: true };
  });
  return r;
}
