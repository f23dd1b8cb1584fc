// /api/v1/settings (the caller's Sandbox Grouping Strategy) and /api/v1/users/me.
import Router from '@koa/router';
import { input, userOf, type Facade } from '../context.ts';
import { SettingsUpdate } from '../../api/app/requests.ts';
import { validate } from '../validate.ts';

export function settingsRoutes({ d }: Facade): Router {
  const r = new Router();

  r.get('/settings', async (ctx) => {
    ctx.body = await d.db.getSettings(userOf(ctx).id);
  });

  r.post('/settings', validate({ body: SettingsUpdate }), async (ctx) => {
    ctx.body = await d.db.setSettings(userOf(ctx).id, input<unknown, SettingsUpdate>(ctx).body);
  });

  r.get('/users/me', async (ctx) => {
    const user = userOf(ctx);
    // The role too, so the web app shows the admin console only to those it serves.
    ctx.body = { id: user.id, name: user.name, admin: (await d.db.getUserInfo(user.id))?.admin === true };
  });

  return r;
}
