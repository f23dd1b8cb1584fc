// The agent server's stored settings document (GET/PATCH /api/settings), as OpenHands 1.58's
// PersistedSettings behaves: diffs deep-merged (a null inside a map removes that entry; lists are
// replaced), secret fields (the LLM's keys, MCP servers' env and header values) masked in every
// answer unless the caller asks for plaintext, and never written to disk unsealed (store/settings-store.ts).
//
// Who applies it, as in OpenHands: the agent settings are read by clients, which build each new
// conversation's agent from them (the Python SDK's RemoteWorkspace.get_llm() and get_mcp_config()
// read GET /api/settings with X-Expose-Secrets: plaintext); the conversation settings are the
// defaults of the conversations the server starts itself, the OpenAI-compatible gateway's
// (OpenHands' ConversationSettings.create_request: max_iterations, confirmation policy, analyzer).
import type { TSchema } from 'typebox';
import { LLM } from '../api/agent-server/agent.ts';
import type { ConfirmationPolicy } from '../api/agent-server/policy.ts';
import type { SecurityAnalyzer } from '../api/agent-server/security-analyzer.ts';
import { AgentSettingsDiff, ConversationSettingsDiff, FORM, McpServerSettings, MetaProfileLlm, type SettingFormMeta, type SettingsResponse } from '../api/agent-server/settings.ts';
import type { SettingsForm, SettingsField } from '../api/app/llm-settings.ts';
import { Invalid, type ValidationIssue } from '../api/errors.ts';
import { parseValue } from '../api/events/validate.ts';
import { MASK } from './secrets.ts';
import { DEFAULT_CONDENSER, DEFAULT_VERIFICATION } from '../api/agent-server/agent-profiles.ts';

/** What is stored: the response without its derived field. */
export type SettingsDoc = Omit<SettingsResponse, 'llm_api_key_is_set'>;
type Json = Record<string, unknown>;

/** OpenHands' AgentSettings schema version of 1.58.2. */
const AGENT_SCHEMA_VERSION = 9;
export const LLM_SECRET_FIELDS = ['api_key', 'aws_access_key_id', 'aws_secret_access_key', 'aws_session_token'];

/** The document before any write. The LLM's model is the server's configured one (its only model until a client stores another). */
export function defaultSettings(model: string | undefined): SettingsDoc {
  return {
    agent_settings: { schema_version: AGENT_SCHEMA_VERSION, agent_kind: 'openhands', llm: model ? { model } : {}, tools: null, mcp_config: {}, ...agentDefaults() },
    conversation_settings: { schema_version: 1, max_iterations: 500, confirmation_mode: false, security_analyzer: 'llm' },
    active_profile: null,
    active_agent_profile_id: null,
    active_meta_profile: null,
    misc_settings: {},
  };
}

/** 1.58's defaults of the routing, condenser and critic fields (also what a field removed by a diff's null comes back as). */
function agentDefaults() {
  return { enable_classify_and_switch_llm_tool: false, meta_profile: null, meta_profile_llms: {}, condenser: { ...DEFAULT_CONDENSER }, verification: { ...DEFAULT_VERIFICATION, critic_api_key: null } };
}

/** The document with the routing, condenser and critic fields complete (a document stored before them, or a field a diff removed). */
export function withAgentDefaults(doc: SettingsDoc): SettingsDoc {
  const d = agentDefaults();
  const a = doc.agent_settings as Partial<SettingsDoc['agent_settings']> & SettingsDoc['agent_settings'];
  a.enable_classify_and_switch_llm_tool ??= d.enable_classify_and_switch_llm_tool;
  if (a.meta_profile === undefined) a.meta_profile = null;
  a.meta_profile_llms ??= {};
  a.condenser = { ...d.condenser, ...a.condenser };
  a.verification = { ...d.verification, ...a.verification };
  return doc;
}

/** Every secret field set in the document: its path and value. */
export function secretPaths(doc: SettingsDoc): { path: string[]; value: string }[] {
  const out: { path: string[]; value: string }[] = [];
  const llm = doc.agent_settings.llm;
  for (const f of LLM_SECRET_FIELDS) if (typeof llm[f] === 'string') out.push({ path: ['agent_settings', 'llm', f], value: llm[f] as string });
  for (const [name, inline] of Object.entries(doc.agent_settings.meta_profile_llms ?? {})) {
    for (const f of LLM_SECRET_FIELDS) if (typeof inline[f] === 'string') out.push({ path: ['agent_settings', 'meta_profile_llms', name, f], value: inline[f] as string });
  }
  const critic = doc.agent_settings.verification?.critic_api_key;
  if (typeof critic === 'string') out.push({ path: ['agent_settings', 'verification', 'critic_api_key'], value: critic });
  for (const [key, server] of Object.entries(doc.agent_settings.mcp_config)) {
    for (const map of ['env', 'headers'] as const) {
      for (const [name, value] of Object.entries(server[map] ?? {})) out.push({ path: ['agent_settings', 'mcp_config', key, map, name], value });
    }
  }
  return out;
}

function setAt(doc: unknown, path: string[], value: unknown): void {
  let node = doc as Json;
  for (const p of path.slice(0, -1)) node = node[p] as Json;
  node[path.at(-1)!] = value;
}

function getAt(doc: unknown, path: string[]): unknown {
  let node = doc as Json | undefined;
  for (const p of path) node = node?.[p] as Json | undefined;
  return node;
}

/** The document with every secret value replaced (the mask for answers, null for the unsealed part on disk). */
export function withSecretsReplaced(doc: SettingsDoc, by: string | null): SettingsDoc {
  const copy = structuredClone(doc);
  for (const { path } of secretPaths(doc)) setAt(copy, path, by);
  return copy;
}

/** The answer: masked unless `plaintext`; llm_api_key_is_set as OpenHands derives it. */
export function settingsView(doc: SettingsDoc, plaintext: boolean): SettingsResponse {
  const key = doc.agent_settings.llm['api_key'];
  const shown = plaintext ? structuredClone(doc) : withSecretsReplaced(doc, MASK);
  return { ...shown, llm_api_key_is_set: typeof key === 'string' && key !== '' };
}

/**
 * OpenHands' _deep_merge: objects merge key by key, anything else (lists too) replaces, and a null
 * below the top level removes that entry. A secret given back as the mask keeps the stored value, so
 * a client that saves what GET showed it does not wipe its key (OpenHands stores the mask's absence:
 * a deliberate difference).
 */
export function deepMerge(target: Json, diff: Json, depth = 0): Json {
  for (const [k, v] of Object.entries(diff)) {
    if (v === null && depth > 0) delete target[k];
    else if (v === MASK && typeof target[k] === 'string') continue;
    else if (isObject(v) && isObject(target[k])) deepMerge(target[k] as Json, v, depth + 1);
    else target[k] = structuredClone(v);
  }
  return target;
}

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * Checks a merged document: the LLM as a conversation's agent takes it, and every MCP server a
 * command or a URL (OpenHands stores a server with neither, which no client can run). Issues are
 * located under `where` (the diff that produced them); an MCP server's at `serverLoc` (the body of
 * the one-server routes).
 */
export function checkSettings(doc: SettingsDoc, where: (string | number)[], serverLoc = (key: string): (string | number)[] => [...where, 'mcp_config', key]): void {
  withAgentDefaults(doc);
  parseValue(LLM, doc.agent_settings.llm, { prefix: [...where, 'llm'] });
  const issues: ValidationIssue[] = [];
  // Each inline LLM as a start's agent_settings takes it (a model required; fields the LLM lacks dropped, as 1.58 drops them).
  for (const [name, inline] of Object.entries(doc.agent_settings.meta_profile_llms)) {
    try {
      doc.agent_settings.meta_profile_llms[name] = parseValue(MetaProfileLlm, inline, { prefix: [...where, 'meta_profile_llms', name], clean: true });
    } catch (err) {
      if (!(err instanceof Invalid)) throw err;
      issues.push(...err.detail);
    }
  }
  for (const [key, server] of Object.entries(doc.agent_settings.mcp_config)) {
    const loc = serverLoc(key);
    // Stored with its defaults (enabled), as OpenHands' MCPServer model stores it.
    doc.agent_settings.mcp_config[key] = parseValue(McpServerSettings, server, { prefix: loc });
    if ((server.command === undefined) === (server.url === undefined)) {
      issues.push({ loc, msg: 'An MCP server needs either `command` (stdio) or `url` (http, sse), not both', type: 'value_error' });
    }
  }
  if (issues.length) throw new Invalid(issues);
  for (const { path, value } of secretPaths(doc)) {
    if (value === MASK) throw new Invalid([{ loc: [...where, ...path.slice(1)], msg: 'A secret cannot be set to the mask; send the value', type: 'value_error' }]);
  }
}

/** The start-request fields the stored conversation settings give (OpenHands' create_request defaults). */
export function conversationDefaults(doc: SettingsDoc): { max_iterations: number; confirmation_policy: ConfirmationPolicy; security_analyzer: SecurityAnalyzer | null } {
  const c = doc.conversation_settings;
  const llmAnalyzer = (c.security_analyzer ?? '').toLowerCase() === 'llm';
  const confirmation_policy: ConfirmationPolicy = !c.confirmation_mode ? { kind: 'NeverConfirm' } : llmAnalyzer ? { kind: 'ConfirmRisky' } : { kind: 'AlwaysConfirm' };
  return { max_iterations: c.max_iterations, confirmation_policy, security_analyzer: llmAnalyzer ? { kind: 'LLMSecurityAnalyzer' } : null };
}

// ── The settings forms (GET /api/settings/agent-schema, /conversation-schema) ──
// Derived from the schemas the diffs are validated with, so a form never offers a field the
// server refuses.

/** Unwraps Optional/Nullable: the schema of the value, and its form metadata wherever it was put. */
function inner(s: TSchema): TSchema {
  const any = (s as { anyOf?: TSchema[] }).anyOf;
  if (any) {
    const nonNull = any.filter((x) => (x as { type?: string }).type !== 'null');
    if (nonNull.length === 1) return inner(nonNull[0]!);
  }
  return s;
}

function valueType(s: TSchema): SettingsField['value_type'] {
  const x = inner(s) as { type?: string; anyOf?: TSchema[]; const?: unknown };
  if (x.anyOf) return valueType(x.anyOf[0]!);
  if (x.const !== undefined) return typeof x.const === 'number' ? 'number' : typeof x.const === 'boolean' ? 'boolean' : 'string';
  return (['string', 'integer', 'number', 'boolean', 'array', 'object'] as const).find((t) => t === x.type) ?? 'object';
}

function choices(s: TSchema): { label: string; value: unknown }[] {
  const x = inner(s) as { anyOf?: { const?: unknown }[] };
  return (x.anyOf ?? []).filter((c) => c.const !== undefined).map((c) => ({ label: String(c.const), value: c.const }));
}

function describe(s: TSchema): string | null {
  const x = s as { description?: string; anyOf?: TSchema[] };
  return x.description ?? (x.anyOf ? x.anyOf.map(describe).find((d) => d) ?? null : null);
}

function metaOf(s: TSchema): SettingFormMeta | undefined {
  const x = s as { [FORM]?: SettingFormMeta; anyOf?: TSchema[] };
  return x[FORM] ?? x.anyOf?.map(metaOf).find((m) => m);
}

function field(key: string, s: TSchema, meta: SettingFormMeta, secret: boolean): SettingsField {
  return {
    key,
    label: meta.label,
    description: describe(s),
    section: meta.section,
    section_label: meta.section_label,
    value_type: valueType(s),
    default: meta.default,
    prominence: meta.prominence,
    depends_on: meta.depends_on ?? [],
    secret,
    choices: choices(s),
    variant: null,
  };
}

function grouped(modelName: string, fields: SettingsField[]): SettingsForm {
  const sections: SettingsForm['sections'] = [];
  for (const f of fields) {
    let section = sections.find((s) => s.key === f.section);
    if (!section) sections.push((section = { key: f.section, label: f.section_label, variant: null, fields: [] }));
    section.fields.push(f);
  }
  return { model_name: modelName, sections };
}

/** The conversation settings form: every field of ConversationSettingsDiff that carries form metadata. */
export function conversationSettingsForm(): SettingsForm {
  const fields = Object.entries(ConversationSettingsDiff.properties).flatMap(([key, s]) => {
    const meta = metaOf(s as TSchema);
    return meta ? [field(key, s as TSchema, meta, false)] : [];
  });
  return grouped('ConversationSettings', fields);
}

const label = (name: string) => (name.charAt(0).toUpperCase() + name.slice(1)).replaceAll('_', ' ').replace(/\bapi\b/i, 'API').replace(/\burl\b/i, 'URL');
const PROMINENT_LLM = new Set(['model', 'api_key', 'base_url']);

/** The agent settings form: the LLM's fields (the agent's LLM schema), then tools and MCP servers. */
export function agentSettingsForm(): SettingsForm {
  const general = { section: 'general', section_label: 'General' };
  const llm = Object.entries(LLM.properties).map(([name, s]) =>
    field(`llm.${name}`, s as TSchema, { label: label(name), section: 'llm', section_label: 'LLM', prominence: PROMINENT_LLM.has(name) ? 'critical' : 'minor', default: (inner(s as TSchema) as { default?: unknown }).default ?? null }, LLM_SECRET_FIELDS.includes(name)),
  );
  const props = AgentSettingsDiff.properties;
  const rest = [
    field('tools', props.tools, { label: 'Tools', ...general, prominence: 'major', default: null }, false),
    field('mcp_config', props.mcp_config, { label: 'MCP servers', ...general, prominence: 'major', default: {} }, false),
  ];
  return grouped('AgentSettings', [...rest, ...llm]);
}
