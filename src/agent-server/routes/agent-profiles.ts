// Agent profiles, as OpenHands 1.58's agent_profiles_router.py serves them: list (some profile is
// always active, `default` seeded), get, save, delete, rename, and activate by id (a pointer only).
// `materialize` previews a launch of a stored profile or of a draft (launch-preview.ts). Both kinds:
// `openhands` and `acp` (an ACP server, src/agent-server/acp).
import Router from '@koa/router';
import type { Context } from 'koa';
import Type from 'typebox';
import { randomUUID } from 'node:crypto';
import { AcpAgentProfileInput, AgentProfileInput, completeAnyAgentProfile, MAX_AGENT_PROFILES, MaterializeAgentProfileRequest, type AgentProfileListResponse, type AnyAgentProfileInput } from '../../api/agent-server/agent-profiles.ts';
import { ProfileName, RenameProfileRequest } from '../../api/agent-server/profiles.ts';
import { parseValue } from '../../api/events/validate.ts';
import { NotFound } from '../../api/errors.ts';
import { previewLaunch } from '../conversation/launch-preview.ts';
import { withPublicSkills, type LaunchStores } from '../conversation/launch-profile.ts';
import type { AgentProfileStore } from '../store/agent-profile-store.ts';
import { validate } from '../http/validate.ts';

const ProfileId = Type.String({ minLength: 1, maxLength: 128 });
const nameOf = (ctx: Context) => parseValue(ProfileName, ctx.params['name'], { prefix: ['path', 'name'] });
/** A draft as a save checks it, located as 1.58 locates it: under the profile kind ([<kind>, <field>]). */
function parseDraft(body: unknown): AnyAgentProfileInput {
  if ((body as { agent_kind?: unknown } | null)?.agent_kind === 'acp') return parseValue(AcpAgentProfileInput, body, { prefix: ['acp'], clean: true });
  return parseValue(AgentProfileInput, body ?? {}, { prefix: ['openhands'], clean: true });
}

/** `launch`: what a launch resolves against (the same stores the conversation start uses), and the tools this server can run. */
export function agentProfileRoutes(store: AgentProfileStore, launch: { stores: LaunchStores; usableTools: readonly string[] }): Router {
  const router = new Router({ prefix: '/agent-profiles' });

  router.get('/', async (ctx) => {
    store.ensureActive(MAX_AGENT_PROFILES);
    const body: AgentProfileListResponse = {
      profiles: store.list().map((p) => ({ id: p.id, name: p.name, agent_kind: p.agent_kind, revision: p.revision, llm_profile_ref: p.agent_kind === 'acp' ? null : p.llm_profile_ref, mcp_server_refs: p.mcp_server_refs })),
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

  router.post('/:name', async (ctx) => {
    const name = nameOf(ctx);
    // Located as OpenHands locates them: under the profile kind ([<kind>, <field>]), not "body".
    store.save(name, parseDraft(ctx.request.body), MAX_AGENT_PROFILES);
    ctx.status = 201;
    ctx.body = { name, message: `Agent profile '${name}' saved` };
  });

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
    if (draft) profile = completeAnyAgentProfile(parseDraft({ ...draft, name }), { id: profile?.id ?? randomUUID(), name, revision: profile?.revision ?? 0 });
    if (!profile) throw new NotFound(`Agent profile '${name}' not found`);
    ctx.body = previewLaunch(profile, await withPublicSkills(launch.stores), launch.usableTools);
  });

  return router;
}
