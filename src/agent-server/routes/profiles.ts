// LLM profiles, as OpenHands 1.58's profiles_router.py serves them: named LLM settings stored in the
// agent server's database (store/profile-store.ts), and `switch_profile`, which gives a conversation
// a profile's LLM from its next model call on. The API key is a secret: stored sealed, never
// returned (`api_key` null, `api_key_set` true), never logged.
//
// A profile's base_url is where the agent server sends the profile's key and the conversation's
// messages. Allowed: any http(s) URL (README, "LLM profiles"): the server runs inside the sandbox, as
// the agent does, whose tools can already reach whatever the sandbox's network allows, so a base_url
// reaches nothing new. What it must not do is carry the server's own model key (LLM_API_KEY) to a
// foreign endpoint: conversationLlm gives that key only to the configured endpoint.
import Router from '@koa/router';
import type { Context } from 'koa';
import { parseValue } from '../../api/events/validate.ts';
import { BadRequest, Conflict, Forbidden, Invalid, NotFound } from '../../api/errors.ts';
import type { LLM } from '../../api/agent-server/index.ts';
import {
  MAX_PROFILES,
  PROFILE_NAME_PATTERN,
  ProfileName,
  RenameProfileRequest,
  SaveProfileRequest,
  SwitchProfileRequest,
  ValidateProfileRequest,
  type ActivateProfileResponse,
  type ProfileDetailResponse,
  type ProfileListResponse,
  type ProfileMutationResponse,
} from '../../api/agent-server/profiles.ts';
import type { ConversationService } from '../conversation/service.ts';
import { preflight } from '../llm/preflight.ts';
import { MASK } from '../secrets.ts';
import { canonicalProfileName, type ProfileStore } from '../store/profile-store.ts';
import type { AgentProfileStore } from '../store/agent-profile-store.ts';
import { validate, withConversationIdParam } from '../http/validate.ts';
import type { Logger } from '../../util/log.ts';
import { profileLlm } from '../conversation/model-routing.ts';

const NAME = new RegExp(PROFILE_NAME_PATTERN);

/** The `{name}` path parameter, checked as OpenHands' ProfileName (422 at `path.name`). */
function nameOf(ctx: Context): string {
  return parseValue(ProfileName, ctx.params['name'], { prefix: ['path', 'name'] });
}

/** A key worth storing: not empty, not the mask a client read back. */
function keyOf(llm: LLM): string | undefined {
  const k = llm.api_key;
  return k && k.trim() !== '' && k !== MASK ? k : undefined;
}

/** base_url: an http(s) URL (see the header); anything else is refused before it is stored. */
export function checkBaseUrl(llm: LLM, loc: (string | number)[]): void {
  if (llm.base_url == null || llm.base_url === '') return;
  let url: URL | undefined;
  try {
    url = new URL(llm.base_url);
  } catch {
    url = undefined;
  }
  if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:')) {
    throw new Invalid([{ loc: [...loc, 'base_url'], msg: 'base_url must be an http or https URL', type: 'url_scheme' }]);
  }
}

export function profileRoutes(o: {
  store: ProfileStore;
  agentProfiles: AgentProfileStore;
  service: ConversationService;
  log: Logger;
  /** Makes the profile the active one and copies its LLM into the stored settings (/api/settings), in one transaction. */
  activate?: (name: string) => void;
}): Router {
  const { store, agentProfiles, service, log } = o;
  const router = withConversationIdParam(new Router());

  router.get('/profiles', async (ctx) => {
    const body: ProfileListResponse = {
      profiles: store.list().map((p) => ({ name: p.name, model: p.llm.model ?? null, base_url: p.llm.base_url ?? null, provider_connection_id: p.llm.provider_connection_id ?? null, provider_connection_broken: p.connectionBroken, api_key_set: p.apiKeySet })),
      active_profile: store.activeProfile(),
    };
    ctx.body = body;
  });

  router.get('/profiles/:name', async (ctx) => {
    const name = nameOf(ctx);
    const expose = String(ctx.get('x-expose-secrets')).trim().toLowerCase();
    if (expose !== '') {
      if (!['true', 'encrypted', 'plaintext'].includes(expose)) throw new BadRequest(`Invalid X-Expose-Secrets header value: '${expose}'. Valid values are: 'encrypted', 'plaintext'.`);
      throw new Forbidden('This agent server never returns secrets, in plain text or encrypted: X-Expose-Secrets is refused. The key stays stored (api_key_set); switch_profile and activate use it.');
    }
    const p = store.get(name);
    if (!p) throw new NotFound(`Profile '${name}' not found`);
    const body: ProfileDetailResponse = { name, config: { ...p.llm, api_key: null }, api_key_set: p.apiKeySet };
    ctx.body = body;
  });

  router.post('/profiles/:name', validate({ body: SaveProfileRequest }), async (ctx) => {
    const name = nameOf(ctx);
    const given = ctx.state['body'] as SaveProfileRequest;
    // 1.58's decrypt_incoming_llm_secrets: a key sent as X-Expose-Secrets: encrypted showed it is opened first.
    const req = { ...given, llm: service.openLlmTokens(given.llm, ['body', 'llm']) };
    checkBaseUrl(req.llm, ['body', 'llm']);
    const include = req.include_secrets !== false;
    store.save(name, req.llm, include ? keyOf(req.llm) : undefined, MAX_PROFILES);
    log.info({ profile: canonicalProfileName(name), include_secrets: include }, 'saved LLM profile');
    const body: ProfileMutationResponse = { name, message: `Profile '${name}' saved` };
    ctx.status = 201;
    ctx.body = body;
  });

  // A draft tried before it is saved: the answer says whether the model took one short call.
  router.post('/profiles/:name/validate', validate({ body: ValidateProfileRequest }), async (ctx) => {
    nameOf(ctx);
    const llm = service.openLlmTokens((ctx.state['body'] as ValidateProfileRequest).llm, ['body', 'llm']);
    checkBaseUrl(llm, ['body', 'llm']);
    ctx.body = await preflight(llm, service.llmDefaults, service.subscription);
  });

  router.delete('/profiles/:name', async (ctx) => {
    const name = nameOf(ctx);
    // Agent profiles name their LLM profile: one still named is not deleted (OpenHands' 409).
    const referrers = agentProfiles.referrers(name);
    if (referrers.length > 0) throw new Conflict(`LLM profile is referenced by ${referrers.length} agent profile(s): ${referrers.join(', ')}`);
    store.delete(name);
    log.info({ profile: canonicalProfileName(name) }, 'deleted LLM profile');
    const body: ProfileMutationResponse = { name, message: `Profile '${name}' deleted` };
    ctx.body = body;
  });

  router.post('/profiles/:name/rename', validate({ body: RenameProfileRequest }), async (ctx) => {
    const name = nameOf(ctx);
    const { new_name } = ctx.state['body'] as RenameProfileRequest;
    store.rename(name, new_name);
    agentProfiles.renameLlmRef(name, new_name);
    const message = name === new_name ? `Profile '${name}' unchanged (same name)` : `Profile '${name}' renamed to '${new_name}'`;
    const body: ProfileMutationResponse = { name: new_name, message };
    ctx.body = body;
  });

  // As OpenHands: the profile becomes the active one and its LLM (with its key) the stored agent
  // settings' LLM, which the SDK's RemoteWorkspace.get_llm() reads back.
  router.post('/profiles/:name/activate', async (ctx) => {
    const name = nameOf(ctx);
    // A key this server cannot open, or a provider connection that is gone, is refused now, not at first use.
    if (!store.runnable(name)) throw new NotFound(`Profile '${name}' not found`);
    if (o.activate) o.activate(name);
    else store.setActiveProfile(name);
    const applied = o.activate !== undefined;
    const body: ActivateProfileResponse = { name, message: applied ? `Profile '${name}' activated and applied to current settings` : `Profile '${name}' activated`, llm_applied: applied };
    ctx.body = body;
  });

  // The conversation is looked up before the profile (an unknown conversation is a 404 whatever
  // the profile), as OpenHands does.
  router.post('/conversations/:conversation_id/switch_profile', validate({ body: SwitchProfileRequest }), async (ctx) => {
    const id = ctx.params['conversation_id']!;
    service.get(id);
    const { profile_name } = ctx.state['body'] as SwitchProfileRequest;
    if (!NAME.test(canonicalProfileName(profile_name))) {
      throw new BadRequest(`Invalid profile name: '${profile_name}'. Profile names must be 1-64 characters, start with a letter or digit, and contain only letters, digits, '.', '_', or '-'.`);
    }
    const req = profileLlm(store, profile_name);
    if (!req) throw new NotFound(`Profile '${profile_name}' not found`);
    service.switchLlm(id, req);
    ctx.body = { success: true };
  });

  return router;
}
