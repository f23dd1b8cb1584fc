// OpenHands app-API routes beyond spec part 2: sandbox specs, model and provider listings, pending
// messages; and 501 with the reason for those not built.
import Router from '@koa/router';
import { input, userOf, type Facade } from '../context.ts';
import { NotImplemented } from '../../api/errors.ts';
import { IdQuery, PageQuery } from '../../api/app/requests.ts';
import { ListQuery, NOT_BUILT_ROUTES, PendingMessageRequest } from '../../api/app/compat.ts';
import { batchSandboxSpecs, searchSandboxSpecs } from '../sandbox-specs.ts';
import { queuePendingMessage } from '../pending-messages.ts';
import { searchModels, searchProviders } from '../model-config.ts';
import { validate } from '../validate.ts';

export const koaPath = (openApiPath: string) => openApiPath.replace(/^\/api\/v1/, '').replace(/\{(\w+)\}/g, ':$1');

export function openHandsRoutes({ d }: Facade): Router {
  const r = new Router();

  r.get('/sandbox-specs/search', validate({ query: PageQuery }), (ctx) => {
    ctx.body = searchSandboxSpecs(d, input<PageQuery>(ctx).query);
  });
  r.get('/sandbox-specs', validate({ query: IdQuery }), (ctx) => {
    ctx.body = batchSandboxSpecs(d, input<IdQuery>(ctx).query.id);
  });

  r.get('/config/models/search', validate({ query: ListQuery }), (ctx) => {
    ctx.body = searchModels(d, input<ListQuery>(ctx).query);
  });
  r.get('/config/providers/search', validate({ query: ListQuery }), (ctx) => {
    ctx.body = searchProviders(d, input<ListQuery>(ctx).query);
  });

  r.post('/conversations/:conversation_id/pending-messages', validate({ body: PendingMessageRequest }), async (ctx) => {
    const res = await queuePendingMessage(d, userOf(ctx), ctx.params['conversation_id']!, input<unknown, PendingMessageRequest>(ctx).body);
    ctx.status = res.queued ? 201 : 200;
    ctx.body = res;
  });

  for (const route of NOT_BUILT_ROUTES) {
    r[route.method](koaPath(route.path), () => {
      throw new NotImplemented(route.reason);
    });
  }
  return r;
}
