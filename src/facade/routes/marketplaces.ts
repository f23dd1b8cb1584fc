// /api/v1/settings/marketplaces: the caller's registered skill marketplaces (personal, and the
// installation's organization ones, which only administrators change), their Auto-Load toggle and plugins.
import Router from '@koa/router';
import { input, userOf, type Facade } from '../context.ts';
import { MarketplaceParams, MarketplaceRegistrationCreate, MarketplaceRegistrationUpdate } from '../../api/app/requests.ts';
import { listMarketplacePlugins, listMarketplaces, registerMarketplace, unregisterMarketplace, updateMarketplace } from '../marketplaces.ts';
import { validate } from '../validate.ts';

export function marketplaceRoutes({ d }: Facade): Router {
  const r = new Router({ prefix: '/settings/marketplaces' });

  r.get('/', async (ctx) => {
    ctx.body = { items: await listMarketplaces(d, userOf(ctx)) };
  });

  r.post('/', validate({ body: MarketplaceRegistrationCreate }), async (ctx) => {
    ctx.body = await registerMarketplace(d, userOf(ctx), input<unknown, MarketplaceRegistrationCreate>(ctx).body);
    ctx.status = 201;
  });

  r.get('/:name/plugins', validate({ params: MarketplaceParams }), async (ctx) => {
    ctx.body = await listMarketplacePlugins(d, userOf(ctx), input<unknown, unknown, MarketplaceParams>(ctx).params.name);
  });

  r.patch('/:name', validate({ params: MarketplaceParams, body: MarketplaceRegistrationUpdate }), async (ctx) => {
    const { body, params } = input<unknown, MarketplaceRegistrationUpdate, MarketplaceParams>(ctx);
    ctx.body = await updateMarketplace(d, userOf(ctx), params.name, body);
  });

  r.delete('/:name', validate({ params: MarketplaceParams }), async (ctx) => {
    await unregisterMarketplace(d, userOf(ctx), input<unknown, unknown, MarketplaceParams>(ctx).params.name);
    ctx.body = { success: true };
  });

  return r;
}
