// /api/v1/users/me/keys (a user's own keys) and /api/v1/users (administrators manage users).
// Revocation and disabling act at once: auth.ts looks every key up on every request.
import Router from '@koa/router';
import { KeyParams, UserKeyParams, UserParams } from '../../api/app/users.ts';
import { Conflict, NotFound } from '../../api/errors.ts';
import { userOf, type Facade } from '../context.ts';
import type { FacadeDeps } from '../deps.ts';
import { validate } from '../validate.ts';
import { displayPrefix } from '../db/keys.ts';
import { adminOnly as requireAdmin } from '../admin.ts';

async function revoke(d: FacadeDeps, userId: string, prefix: string): Promise<{ success: true }> {
  const result = await d.db.revokeApiKey(userId, prefix);
  if (result === 'not-found') throw new NotFound(`No working API key ${prefix}`);
  if (result === 'ambiguous') throw new Conflict(`Several working API keys start with ${prefix}; revoke with the CLI by a longer prefix`);
  return { success: true };
}

export function userRoutes({ d }: Facade): Router {
  const r = new Router({ prefix: '/users' });

  r.get('/me/keys', async (ctx) => {
    ctx.body = { items: await d.db.listApiKeys(userOf(ctx).id) };
  });

  // A new key for the caller: the plaintext is in this answer only (the store keeps its hash).
  r.post('/me/keys', async (ctx) => {
    const userId = userOf(ctx).id;
    const key = await d.db.createApiKey(userId);
    const prefix = displayPrefix(key);
    const info = (await d.db.listApiKeys(userId)).find((k) => k.revoked_at === null && k.prefix === prefix);
    ctx.body = { key, prefix, created_at: info?.created_at ?? null };
    ctx.status = 201;
  });

  r.delete('/me/keys/:prefix', validate({ params: KeyParams }), async (ctx) => {
    ctx.body = await revoke(d, userOf(ctx).id, (ctx.state.params as KeyParams).prefix);
  });

  // Everything below is for administrators only.
  const adminOnly = requireAdmin(d, 'Only administrators manage users');

  r.get('/', adminOnly, async (ctx) => {
    ctx.body = { items: await d.db.listUsers() };
  });

  for (const action of ['disable', 'enable'] as const) {
    r.post(`/:user_id/${action}`, adminOnly, validate({ params: UserParams }), async (ctx) => {
      const { user_id } = ctx.state.params as UserParams;
      // An administrator cannot lock themselves out through the API (the CLI can still do it).
      if (action === 'disable' && user_id === userOf(ctx).id) throw new Conflict('You cannot disable yourself');
      if (!(await d.db.setUserDisabled(user_id, action === 'disable'))) throw new NotFound(`User ${user_id} not found`);
      ctx.body = await d.db.getUserInfo(user_id);
    });
  }

  // The admin role. Granting and revoking act on the next request (auth reads the flag each time).
  r.post('/:user_id/admin', adminOnly, validate({ params: UserParams }), async (ctx) => {
    const { user_id } = ctx.state.params as UserParams;
    if (!(await d.db.setUserAdmin(user_id, true))) throw new NotFound(`User ${user_id} not found`);
    ctx.body = await d.db.getUserInfo(user_id);
  });

  r.delete('/:user_id/admin', adminOnly, validate({ params: UserParams }), async (ctx) => {
    const { user_id } = ctx.state.params as UserParams;
    // As with disabling: an administrator cannot take their own role away through the API.
    if (user_id === userOf(ctx).id) throw new Conflict('You cannot revoke your own administrator role');
    if (!(await d.db.setUserAdmin(user_id, false))) throw new NotFound(`User ${user_id} not found`);
    ctx.body = await d.db.getUserInfo(user_id);
  });

  r.get('/:user_id/keys', adminOnly, validate({ params: UserParams }), async (ctx) => {
    const { user_id } = ctx.state.params as UserParams;
    if (!(await d.db.getUser(user_id))) throw new NotFound(`User ${user_id} not found`);
    ctx.body = { items: await d.db.listApiKeys(user_id) };
  });

  r.delete('/:user_id/keys/:prefix', adminOnly, validate({ params: UserKeyParams }), async (ctx) => {
    const { user_id, prefix } = ctx.state.params as UserKeyParams;
    if (!(await d.db.getUser(user_id))) throw new NotFound(`User ${user_id} not found`);
    ctx.body = await revoke(d, user_id, prefix);
  });

  return r;
}
