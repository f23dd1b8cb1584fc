// GET/PATCH /api/settings, the per-server MCP routes (/api/settings/mcp/{key}) and the two settings
// forms, as OpenHands 1.58's settings_router.py serves them. What the document means and who
// applies it: ../settings-doc.ts. Secret values never reach a log line; mutation answers are always
// masked (as OpenHands': only GET honours X-Expose-Secrets). Tokens of X-Expose-Secrets: encrypted
// sent back in a PATCH are opened first (secret-tokens.ts).
import Router from '@koa/router';
import type { Context } from 'koa';
import { parseBody } from '../../api/agent-server/parse.ts';
import { EXPOSE_SECRETS_HEADER, McpServerPatch, McpServerSettings, SettingsUpdateRequest } from '../../api/agent-server/settings.ts';
import { BadRequest, Conflict, Invalid, NotFound } from '../../api/errors.ts';
import type { Logger } from '../../util/log.ts';
import { agentSettingsForm, checkSettings, conversationSettingsForm, deepMerge, settingsView, type SettingsDoc } from '../settings-doc.ts';
import type { SettingsDocStore } from '../store/settings-store.ts';
import type { Fernet } from '../fernet.ts';
import { openAgentSettingsDiff, openMcpServer, withSecretsEncrypted } from '../secret-tokens.ts';

/** OpenHands' answer to a PATCH that changes nothing. */
const EMPTY_UPDATE =
  'At least one of agent_settings_diff, conversation_settings_diff, misc_settings_diff, active_profile, active_agent_profile_id, or active_meta_profile must be provided';

/**
 * The X-Expose-Secrets mode, as 1.58's parse_expose_secrets_header: absent = masked; `true` is its
 * legacy alias of `encrypted` (never plaintext); anything else 400.
 */
function exposeMode(ctx: Context): 'plaintext' | 'encrypted' | undefined {
  const raw = ctx.get(EXPOSE_SECRETS_HEADER).trim().toLowerCase();
  if (raw === '') return undefined;
  if (raw === 'plaintext') return 'plaintext';
  if (raw === 'encrypted' || raw === 'true') return 'encrypted';
  throw new BadRequest(`Invalid X-Expose-Secrets header value: '${raw}'. Valid values are: 'encrypted', 'plaintext'.`);
}

type Json = Record<string, unknown>;
const json = (v: unknown) => v as Json;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The profile pointers, kept by the profile stores (/api/profiles, /api/agent-profiles) and shown here. */
export interface SettingsPointers {
  activeProfile(): string | null;
  setActiveProfile(name: string | null): void;
  /** The named LLM profile as it runs (its key, a provider connection's key and URL); undefined: no such profile. */
  profileLlm(name: string): { llm: Record<string, unknown>; apiKey: string | undefined } | undefined;
  activeAgentProfileId(): string | null;
  /** False: no agent profile has that id. */
  activateAgentProfile(id: string): boolean;
  /** False: no meta-profile has that name. */
  metaProfileExists(name: string): boolean;
}

/** `fernet`: the server's secret key as OpenHands' cipher (undefined: none), read at each request (a hand-over changes it). */
export function settingsDocRoutes(store: SettingsDocStore, log: Logger, pointers: SettingsPointers, fernet: () => Fernet | undefined): Router {
  const router = new Router();
  const view = (doc: SettingsDoc, plaintext: boolean) => ({ ...settingsView(doc, plaintext), active_profile: pointers.activeProfile(), active_agent_profile_id: pointers.activeAgentProfileId() });
  const answer = (doc: SettingsDoc) => view(doc, false);

  router.get('/settings/agent-schema', (ctx) => {
    ctx.body = agentSettingsForm();
  });
  router.get('/settings/conversation-schema', (ctx) => {
    ctx.body = conversationSettingsForm();
  });

  router.get('/settings', (ctx) => {
    const mode = exposeMode(ctx);
    // As OpenHands: every read is logged, a plaintext one as a warning (never a value).
    if (mode === 'plaintext') log.warn({ exposeMode: mode }, 'settings read with plaintext secrets');
    else log.debug({ exposeMode: mode ?? 'redacted' }, 'settings read');
    const doc = store.load();
    // Encrypted: every secret field as a token of the secret key (503 without one, as 1.58).
    ctx.body = mode === 'encrypted' ? view(withSecretsEncrypted(doc, fernet()), true) : view(doc, mode === 'plaintext');
  });

  router.patch('/settings', (ctx) => {
    const raw = json(ctx.request.body ?? {});
    // Secrets sent back as GET (encrypted) showed them: opened first, so the merge and the checks see values.
    if (isObject(raw['agent_settings_diff'])) openAgentSettingsDiff(raw['agent_settings_diff'], fernet(), ['body', 'agent_settings_diff']);
    const req = parseBody(SettingsUpdateRequest, raw);
    const given = ['agent_settings_diff', 'conversation_settings_diff', 'misc_settings_diff', 'active_profile', 'active_agent_profile_id', 'active_meta_profile'].filter((k) => raw[k] !== undefined);
    if (!given.some((k) => raw[k] !== null || k.startsWith('active_'))) throw new BadRequest(EMPTY_UPDATE);
    // The pointers must name a stored profile (404, as their /activate routes). An agent profile is
    // always active here (the store seeds `default`), so that pointer cannot be cleared. The active
    // meta-profile is the one a seeded `default` agent profile routes with (store/agent-profile-store.ts).
    if (req.active_profile != null && !pointers.profileLlm(req.active_profile)) throw new NotFound(`Profile '${req.active_profile}' not found`);
    if (req.active_agent_profile_id === null) throw new Invalid([{ loc: ['body', 'active_agent_profile_id'], msg: 'An agent profile is always active on this agent server: activate another one instead', type: 'value_error' }]);
    if (req.active_meta_profile != null && !pointers.metaProfileExists(req.active_meta_profile)) throw new NotFound(`Meta-profile '${req.active_meta_profile}' not found`);
    // Setting active_profile loads that profile's LLM, unless the diff gives one (OpenHands' _with_profile_llm).
    const profile = req.active_profile != null && !json(raw['agent_settings_diff'] ?? {})['llm'] ? pointers.profileLlm(req.active_profile) : undefined;
    // Merged from the raw diffs: the parsed ones are cleaned, and a null must still reach the merge to remove an entry.
    const doc = store.update((doc) => {
      if (profile) doc.agent_settings.llm = { ...profile.llm, ...(profile.apiKey !== undefined ? { api_key: profile.apiKey } : {}) };
      if (req.agent_settings_diff) deepMerge(json(doc.agent_settings), json(raw['agent_settings_diff']));
      if (req.conversation_settings_diff) deepMerge(json(doc.conversation_settings), json(raw['conversation_settings_diff']));
      if (req.misc_settings_diff) deepMerge(json(doc.misc_settings), json(raw['misc_settings_diff']), 1);
      checkSettings(doc, ['body', 'agent_settings_diff']);
      // In the same transaction as the document (one SQLite file): a refused diff moves no pointer.
      if (req.active_agent_profile_id != null && !pointers.activateAgentProfile(req.active_agent_profile_id)) throw new NotFound(`Agent profile with id '${req.active_agent_profile_id}' not found`);
      if (raw['active_profile'] !== undefined) pointers.setActiveProfile(req.active_profile ?? null);
      if (raw['active_meta_profile'] !== undefined) doc.active_meta_profile = req.active_meta_profile ?? null;
    });
    log.info({ agentSettings: 'agent_settings_diff' in raw, conversationSettings: 'conversation_settings_diff' in raw, miscSettings: 'misc_settings_diff' in raw }, 'settings updated');
    ctx.body = answer(doc);
  });

  const server = (doc: SettingsDoc, key: string) => doc.agent_settings.mcp_config[key];

  router.post('/settings/mcp/:settings_key', (ctx) => {
    const key = ctx.params['settings_key']!;
    openMcpServer(ctx.request.body, fernet(), ['body']);
    const body = parseBody(McpServerSettings, ctx.request.body);
    const doc = store.update((doc) => {
      if (server(doc, key)) throw new Conflict(`MCP server '${key}' already exists`);
      doc.agent_settings.mcp_config[key] = body;
      checkSettings(doc, ['body'], (k) => (k === key ? ['body'] : ['mcp_config', k]));
    });
    log.info({ mcpServer: key }, 'MCP server added to the settings');
    ctx.status = 201;
    ctx.body = answer(doc);
  });

  router.patch('/settings/mcp/:settings_key', (ctx) => {
    const key = ctx.params['settings_key']!;
    openMcpServer(ctx.request.body, fernet(), ['body']);
    parseBody(McpServerPatch, ctx.request.body);
    const doc = store.update((doc) => {
      const current = server(doc, key);
      if (!current) throw new NotFound(`MCP server '${key}' was not found`);
      deepMerge(json(current), json(ctx.request.body), 1);
      checkSettings(doc, ['body'], (k) => (k === key ? ['body'] : ['mcp_config', k]));
    });
    log.info({ mcpServer: key }, 'MCP server changed in the settings');
    ctx.body = answer(doc);
  });

  router.delete('/settings/mcp/:settings_key', (ctx) => {
    const key = ctx.params['settings_key']!;
    const doc = store.update((doc) => {
      if (!server(doc, key)) throw new NotFound(`MCP server '${key}' was not found`);
      delete doc.agent_settings.mcp_config[key];
    });
    log.info({ mcpServer: key }, 'MCP server removed from the settings');
    ctx.body = answer(doc);
  });

  return router;
}
