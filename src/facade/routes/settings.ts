// /api/v1/settings (the caller's Sandbox Grouping Strategy, Git login, agent and conversation
// settings) and /api/v1/users/me.
import Router from '@koa/router';
import { input, userOf, type Facade } from '../context.ts';
import { SettingsUpdate } from '../../api/app/requests.ts';
import type { AppUser } from '../db/types.ts';
import type { FacadeDeps } from '../deps.ts';
import { applySettingsDiff, llmSettingsView } from '../llm-settings.ts';
import { providerTokensSet } from '../git-providers/tokens.ts';
import { validate } from '../validate.ts';

async function settingsOf(d: FacadeDeps, user: AppUser) {
  return { ...(await d.db.getSettings(user.id)), ...(await llmSettingsView(d, user)), provider_tokens_set: await providerTokensSet(d, user) };
}

export function settingsRoutes({ d }: Facade): Router {
  const r = new Router();

  r.get('/settings', async (ctx) => {
    ctx.body = await settingsOf(d, userOf(ctx));
  });

  r.post('/settings', validate({ body: SettingsUpdate }), async (ctx) => {
    const { agent_settings_diff, conversation_settings_diff, ...own } = input<unknown, SettingsUpdate>(ctx).body;
    const user = userOf(ctx);
    await applySettingsDiff(d, user, agent_settings_diff, conversation_settings_diff);
    if (Object.keys(own).length > 0) await d.db.setSettings(user.id, own);
    ctx.body = await settingsOf(d, user);
  });

  r.get('/users/me', async (ctx) => {
    const user = userOf(ctx);
    // The role too, so the web app shows the admin console only to those it serves.
    ctx.body = { id: user.id, name: user.name, admin: (await d.db.getUserInfo(user.id))?.admin === true };
  });

  return r;
}
