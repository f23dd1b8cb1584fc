// OpenHands' agent settings routes: the settings forms, LLM profiles (saved, activated for new
// conversations, switched into a running one) and the skills the caller's marketplaces offer.
import Router from '@koa/router';
import type { Context } from 'koa';
import { input, userOf, type Facade } from '../context.ts';
import { ProfileParams, RenameProfileRequest, SaveProfileRequest, SkillSearchQuery, SwitchProfileRequest } from '../../api/app/llm-settings.ts';
import { activateProfile, deleteProfile, getProfile, listProfiles, renameProfile, saveProfile, switchConversationProfile } from '../llm-settings.ts';
import { agentSettingsForm, conversationSettingsForm } from '../settings-forms.ts';
import { searchSkills } from '../skill-search.ts';
import { validate } from '../validate.ts';

export function llmSettingsRoutes({ d }: Facade): Router {
  const r = new Router();
  const name = (ctx: Context) => input<unknown, unknown, ProfileParams>(ctx).params.name;

  r.get('/settings/agent-schema', (ctx) => {
    ctx.body = agentSettingsForm(d);
  });
  r.get('/settings/conversation-schema', (ctx) => {
    ctx.body = conversationSettingsForm();
  });

  r.get('/settings/profiles', async (ctx) => {
    ctx.body = await listProfiles(d, userOf(ctx));
  });
  r.get('/settings/profiles/:name', validate({ params: ProfileParams }), async (ctx) => {
    ctx.body = await getProfile(d, userOf(ctx), name(ctx));
  });
  // No body (or no llm): the agent's LLM is saved.
  r.post('/settings/profiles/:name', validate({ params: ProfileParams, body: SaveProfileRequest }), async (ctx) => {
    ctx.body = await saveProfile(d, userOf(ctx), name(ctx), input<unknown, SaveProfileRequest>(ctx).body);
    ctx.status = 201;
  });
  r.delete('/settings/profiles/:name', validate({ params: ProfileParams }), async (ctx) => {
    ctx.body = await deleteProfile(d, userOf(ctx), name(ctx));
  });
  r.post('/settings/profiles/:name/activate', validate({ params: ProfileParams }), async (ctx) => {
    ctx.body = await activateProfile(d, userOf(ctx), name(ctx));
  });
  r.post('/settings/profiles/:name/rename', validate({ params: ProfileParams, body: RenameProfileRequest }), async (ctx) => {
    ctx.body = await renameProfile(d, userOf(ctx), name(ctx), input<unknown, RenameProfileRequest>(ctx).body.new_name);
  });
  r.post('/app-conversations/:conversation_id/switch_profile', validate({ body: SwitchProfileRequest }), async (ctx) => {
    ctx.body = await switchConversationProfile(d, userOf(ctx), ctx.params['conversation_id']!, input<unknown, SwitchProfileRequest>(ctx).body.profile_name);
  });

  r.get('/skills/search', validate({ query: SkillSearchQuery }), async (ctx) => {
    ctx.body = await searchSkills(d, userOf(ctx), input<SkillSearchQuery>(ctx).query);
  });
  return r;
}
