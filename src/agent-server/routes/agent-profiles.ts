// Agent profiles, as OpenHands 1.58's agent_profiles_router.py serves them: list (some profile is
// always active, `default` seeded), get, save, delete, rename, and activate by id (a pointer only).
// `materialize` previews a launch of a stored profile or of a draft (launch-preview.ts). An ACP
// profile answers 501: ACP agents are not built here.
import Router from '@koa/router';
import type { Context } from 'koa';
import Type from 'typebox';
import { randomUUID } from 'node:crypto';
import { AgentProfileInput, completeAgentProfile, MAX_AGENT_PROFILES, MaterializeAgentProfileRequest, type AgentProfileListResponse } from '../../api/agent-server/agent-profiles.ts';
import { ProfileName, RenameProfileRequest } from '../../api/agent-server/profiles.ts';
import { parseValue } from '../../api/events/validate.ts';
import { NotFound, NotImplemented } from '../../api/errors.ts';
import { previewLaunch } from '../conversation/launch-preview.ts';
import type { LaunchStores } from '../conversation/launch-profile.ts';
import type { AgentProfileStore } from '../store/agent-profile-store.ts';
import { validate } from '../http/validate.ts';

const ProfileId = Type.String({ minLength: 1, maxLength: 128 });
const nameOf = (ctx: Context) => parseValue(ProfileName, ctx.params['name'], { prefix: ['path', 'name'] });
const ACP_REFUSED = 'ACP agent profiles are not implemented by this agent server (ACP agents are not built); use agent_kind "openhands"';

/** A draft as a save checks it (located under ["openhands", <field>]); ACP is refused as a save refuses it. */
function parseDraft(body: unknown): AgentProfileInput {
  if ((body as { agent_kind?: unknown } | null)?.agent_kind === 'acp') throw new NotImplemented(ACP_REFUSED);
  return parseValue(AgentProfileInput, body ?? {}, { prefix: ['openhands'], clean: true });
}

/** `launch`: what a launch resolves against (the same stores the conversation start uses), and the tools this server can run. */
export function agentProfileRoutes(store: AgentProfileStore, launch: { stores: LaunchStores; usableTools: readonly string[] }): Router {
  const router = new Router({ prefix: '/agent-profiles' });

  router.get('/', async (ctx) => {
    store.ensureActive(MAX_AGENT_PROFILES);
    const body: AgentProfileListResponse = {
      profiles: store.list().map((p) => ({ id: p.id, name: p.name, agent_kind: p.agent_kind, revision: p.revision, llm_profile_ref: p.llm_profile_ref, mcp_server_refs: p.mcp_server_refs })),
      active_agent_profile_id: store.activeId(),
    };
    ctx.body = body;
  });

  router.get('/:name', async (ctx) => {
    const name = nameOf(ctx);
    const profile = store.get(name);
    if (!profile) throw new NotFound(`Agent profile '${name}' not found`);
    ctx.body = { name, profile };
  });

  router.post(
    '/:name',
    async (ctx, next) => {
      nameOf(ctx);
      if ((ctx.request.body as { agent_kind?: unknown } | undefined)?.agent_kind === 'acp') throw new NotImplemented(ACP_REFUSED);
      await next();
    },
    async (ctx) => {
      const name = nameOf(ctx);
      // Located as OpenHands locates them: under the profile kind (["openhands", <field>]), not "body".
      store.save(name, parseDraft(ctx.request.body), MAX_AGENT_PROFILES);
      ctx.status = 201;
      ctx.body = { name, message: `Agent profile '${name}' saved` };
    },
  );

  router.delete('/:name', async (ctx) => {
    const name = nameOf(ctx);
    store.delete(name);
    ctx.body = { name, message: `Agent profile '${name}' deleted` };
  });

  router.post('/:name/rename', validate({ body: RenameProfileRequest }), async (ctx) => {
    const name = nameOf(ctx);
    const { new_name } = ctx.state['body'] as RenameProfileRequest;
    store.rename(name, new_name);
    ctx.body = { name: new_name, message: name === new_name ? `Agent profile '${name}' unchanged (same name)` : `Agent profile '${name}' renamed to '${new_name}'` };
  });

  // A pointer only: nothing else changes (OpenHands' creation-time-only contract).
  router.post('/:profile_id/activate', async (ctx) => {
    const id = parseValue(ProfileId, ctx.params['profile_id'], { prefix: ['path', 'profile_id'] });
    store.activate(id);
    ctx.body = { id, message: `Agent profile '${id}' activated`, agent_settings_applied: false };
  });

  // A dry run: dangling references are in the report (valid false), never an error status. The
  // stored profile, or the body's draft under the path's name.
  router.post('/:name/materialize', validate({ body: MaterializeAgentProfileRequest }), async (ctx) => {
    const name = nameOf(ctx);
    const draft = (ctx.state['body'] as MaterializeAgentProfileRequest).profile;
    let profile = store.get(name);
    if (draft) profile = completeAgentProfile(parseDraft({ ...draft, name }), { id: profile?.id ?? randomUUID(), name, revision: profile?.revision ?? 0 });
    if (!profile) throw new NotFound(`Agent profile '${name}' not found`);
    ctx.body = previewLaunch(profile, launch.stores, launch.usableTools);
  });

  return router;
}
