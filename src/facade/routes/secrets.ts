// /api/v1/secrets: the caller's stored secrets (names and descriptions out, values only in).
import Router from '@koa/router';
import { input, userOf, type Facade } from '../context.ts';
import { PageQuery, StoredSecretCreate, StoredSecretParams, StoredSecretUpdate } from '../../api/app/requests.ts';
import { createStoredSecret, deleteStoredSecret, getStoredSecret, listStoredSecrets, updateStoredSecret } from '../user-secrets.ts';
import { validate } from '../validate.ts';

export function secretRoutes({ d }: Facade): Router {
  const r = new Router({ prefix: '/secrets' });

  r.get('/search', validate({ query: PageQuery }), async (ctx) => {
    const { page_id, limit = 100 } = input<PageQuery>(ctx).query;
    const all = await listStoredSecrets(d, userOf(ctx));
    const start = page_id ? all.findIndex((s) => s.name > page_id) : 0;
    const items = start < 0 ? [] : all.slice(start, start + limit);
    const more = start >= 0 && start + limit < all.length;
    ctx.body = { items, next_page_id: more ? items[items.length - 1]!.name : null };
  });

  r.post('/', validate({ body: StoredSecretCreate }), async (ctx) => {
    ctx.body = await createStoredSecret(d, userOf(ctx), input<unknown, StoredSecretCreate>(ctx).body);
    ctx.status = 201;
  });

  r.get('/:name', validate({ params: StoredSecretParams }), async (ctx) => {
    ctx.body = await getStoredSecret(d, userOf(ctx), (ctx.state.params as StoredSecretParams).name);
  });

  r.patch('/:name', validate({ params: StoredSecretParams, body: StoredSecretUpdate }), async (ctx) => {
    ctx.body = await updateStoredSecret(d, userOf(ctx), (ctx.state.params as StoredSecretParams).name, input<unknown, StoredSecretUpdate>(ctx).body);
  });

  r.delete('/:name', validate({ params: StoredSecretParams }), async (ctx) => {
    await deleteStoredSecret(d, userOf(ctx), (ctx.state.params as StoredSecretParams).name);
    ctx.body = { success: true };
  });

  return r;
}
