// /api/v1/secrets: the caller's stored secrets (names and descriptions out, values only in).
import Router from '@koa/router';
import { input, userOf, type Facade } from '../context.ts';
import { PageQuery, StoredSecretCreate, StoredSecretParams, StoredSecretUpdate } from '../../api/app/requests.ts';
import { GitProvidersRequest } from '../../api/app/git.ts';
import { storeProviderTokens, unsetProviderTokens } from '../git-providers/tokens.ts';
import { createStoredSecret, deleteStoredSecret, getStoredSecret, listStoredSecrets, updateStoredSecret } from '../user-secrets.ts';
import { pageOf } from '../paging.ts';
import { validate } from '../validate.ts';

export function secretRoutes({ d }: Facade): Router {
  const r = new Router({ prefix: '/secrets' });

  r.get('/search', validate({ query: PageQuery }), async (ctx) => {
    const { page_id, limit = 100 } = input<PageQuery>(ctx).query;
    const all = await listStoredSecrets(d, userOf(ctx));
    // By name, with the same opaque cursor as every other search (a bad one is a 422).
    ctx.body = pageOf(all.map((s) => ({ key: s.name, name: s.name, item: s })), { pageId: page_id, limit, descending: false });
  });

  r.post('/', validate({ body: StoredSecretCreate }), async (ctx) => {
    ctx.body = await createStoredSecret(d, userOf(ctx), input<unknown, StoredSecretCreate>(ctx).body);
    ctx.status = 201;
  });

  // OpenHands' provider-token routes, before /:name (a secret cannot be deleted under that name here).
  r.post('/git-providers', validate({ body: GitProvidersRequest }), async (ctx) => {
    ctx.body = await storeProviderTokens(d, userOf(ctx), input<unknown, GitProvidersRequest>(ctx).body);
  });
  r.delete('/git-providers', async (ctx) => {
    ctx.body = await unsetProviderTokens(d, userOf(ctx));
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
