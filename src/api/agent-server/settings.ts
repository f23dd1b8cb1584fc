// The agent server's own stored settings, as OpenHands 1.58 serves them: named secrets
// (`/api/settings/secrets`), the GUI's saved workspaces (`/api/workspaces`), the workspace session
// cookie (`/api/auth/workspace-session`) and deferred initialization (`/api/init`). Field names,
// aliases and limits are OpenHands' (its persistence models and settings API models).
import Type, { type Static } from 'typebox';
import { JsonObject, Nullable } from '../events/common.ts';
import { AgentContext, LLM, ToolSpec } from './agent.ts';
import { ProfileCondenserSettings, ProfileVerificationSettings } from './agent-profiles.ts';
import { MetaProfile } from './meta-profiles.ts';

/** OpenHands' SECRET_NAME_PATTERN: a letter, then letters, digits and underscores, 1-64 in all. */
export const SECRET_NAME_PATTERN = /^[a-zA-Z][a-zA-Z0-9_]{0,63}$/;
export const SECRET_NAME_MESSAGE =
  'Invalid secret name format. Must start with a letter, contain only letters, numbers, and underscores, and be 1-64 characters long.';

/** PUT /api/settings/secrets: create or replace one secret. The name is checked by the route (OpenHands' message, not a located issue). */
export const SecretCreateRequest = Type.Object({
  name: Type.String(),
  value: Type.String(),
  description: Nullable(Type.String()),
});
export type SecretCreateRequest = Static<typeof SecretCreateRequest>;

/** A secret as lists and writes show it: never its value. */
export const SecretItemResponse = Type.Object({
  name: Type.String(),
  description: Type.Union([Type.String(), Type.Null()]),
});
export type SecretItemResponse = Static<typeof SecretItemResponse>;

export const SecretsListResponse = Type.Object({ secrets: Type.Array(SecretItemResponse) });

export const SecretDeleted = Type.Object({ deleted: Type.Boolean() });

// Workspaces: ids are opaque (the GUI sets id == path); both are capped alike so a long path is never refused by its id.
const WorkspaceText = Type.String({ minLength: 1, maxLength: 4096 });
const WorkspaceName = Type.String({ minLength: 1, maxLength: 256 });

/**
 * A saved workspace. `parentPath` is the wire name (OpenHands' alias); `parent_path` is accepted on
 * input too, as pydantic's populate_by_name does.
 */
export const WorkspaceItem = Type.Object({
  id: WorkspaceText,
  name: WorkspaceName,
  path: WorkspaceText,
  parentPath: Nullable(Type.String({ maxLength: 4096 })),
  parent_path: Nullable(Type.String({ maxLength: 4096 })),
});
export type WorkspaceItem = Static<typeof WorkspaceItem>;

export const WorkspaceParentItem = Type.Object({ id: WorkspaceText, name: WorkspaceName, path: WorkspaceText });
export type WorkspaceParentItem = Static<typeof WorkspaceParentItem>;

export const AddWorkspacesRequest = Type.Object({ workspaces: Type.Array(WorkspaceItem) });
export const AddWorkspaceParentsRequest = Type.Object({ parents: Type.Array(WorkspaceParentItem) });

/** What the workspace routes answer: `parentPath` only where set. */
export const WorkspacesListResponse = Type.Object({
  workspaces: Type.Array(Type.Object({ id: Type.String(), name: Type.String(), path: Type.String(), parentPath: Type.Optional(Type.String()) })),
  workspaceParents: Type.Array(WorkspaceParentItem),
});
export type WorkspacesListResponse = Static<typeof WorkspacesListResponse>;

/** The absolute path a DELETE removes (`?path=`). */
export const WorkspacePathQuery = Type.Object({ path: Type.String() });

export const WORKSPACE_SESSION_COOKIE = 'oh_workspace_session_key';

// ── Stored agent and conversation settings (GET/PATCH /api/settings, /api/settings/mcp/{key}) ──
// OpenHands 1.58's PersistedSettings, as far as this agent server keeps them: the agent's LLM, tools
// and MCP servers (its clients build every new conversation's agent from them, as the Python SDK's
// RemoteWorkspace.get_llm()/get_mcp_config() do), the conversation defaults (applied by this server
// to the conversations it starts itself: the OpenAI-compatible gateway's), and the frontend's opaque
// misc_settings. The condenser, critic (verification) and routing fields are kept as 1.58 keeps
// them, for the same readers: clients put them in a start request's `agent_settings`, which this
// server applies (1.58 applies no stored agent setting to a start by itself, nor does this server).
// Fields OpenHands keeps for features not built here (ACP agents, memory, Docker and worktree
// runtimes) are refused with 422, not stored unapplied.

/** Request header choosing how secret fields are answered: absent = masked, `plaintext` = raw, `encrypted` (or `true`) = OpenHands Fernet tokens of the server's secret key (503 without one). */
export const EXPOSE_SECRETS_HEADER = 'X-Expose-Secrets';

const StringMap = Type.Record(Type.String(), Type.String());
/** In a diff or patch, a null value removes that entry of a map (OpenHands' deep-merge unset). */
const StringMapDiff = Type.Record(Type.String(), Type.Union([Type.String(), Type.Null()]));

/** One MCP server as the settings keep it (OpenHands' MCPServer): a command to run (stdio) or a URL. `env` values and `headers` values are secrets. */
export const McpServerSettings = Type.Object(
  {
    command: Type.Optional(Type.String({ minLength: 1 })),
    args: Type.Optional(Type.Array(Type.String())),
    env: Type.Optional(StringMap),
    cwd: Nullable(Type.String()),
    url: Type.Optional(Type.String({ minLength: 1 })),
    headers: Type.Optional(StringMap),
    transport: Type.Optional(Type.Union([Type.Literal('http'), Type.Literal('streamable-http'), Type.Literal('sse')])),
    enabled: Type.Optional(Type.Boolean({ default: true, description: 'false: kept, but a client building an agent leaves it out' })),
  },
  { additionalProperties: false },
);
export type McpServerSettings = Static<typeof McpServerSettings>;

/**
 * One server of a conversation's `agent.mcp_config` in 1.58's server-map form (its MCPServer, extra
 * fields refused): the settings' fields, `transport` also `stdio`, and the fields 1.58 takes that
 * the agent does not use (description, icon, timeouts, keep_alive), accepted as 1.58 accepts them.
 */
export const AgentMcpServer = Type.Object(
  {
    ...McpServerSettings.properties,
    transport: Type.Optional(Type.Union([Type.Literal('stdio'), Type.Literal('http'), Type.Literal('streamable-http'), Type.Literal('sse')])),
    description: Nullable(Type.String()),
    icon: Nullable(Type.String()),
    timeout: Nullable(Type.Number()),
    sse_read_timeout: Nullable(Type.Number()),
    keep_alive: Nullable(Type.Boolean()),
    auth: Nullable(Type.Record(Type.String(), Type.Unknown())),
  },
  { additionalProperties: false },
);
export type AgentMcpServer = Static<typeof AgentMcpServer>;

/** A server in 1.44's `{"mcpServers": {...}}` form (its clients, Claude Code's .mcp.json): also `type`, that form's name of `transport`. */
export const AgentMcpServerV144 = Type.Object({ ...AgentMcpServer.properties, type: Type.Optional(Type.String()) }, { additionalProperties: false });

/** PATCH /api/settings/mcp/{key} (OpenHands' MCPServerPatch): the fields given replace or merge; null in env/headers removes that entry. */
export const McpServerPatch = Type.Object(
  {
    command: Type.Optional(Type.String({ minLength: 1 })),
    args: Type.Optional(Type.Array(Type.String())),
    env: Type.Optional(StringMapDiff),
    cwd: Nullable(Type.String()),
    url: Type.Optional(Type.String({ minLength: 1 })),
    headers: Type.Optional(StringMapDiff),
    transport: Type.Optional(Type.Union([Type.Literal('http'), Type.Literal('streamable-http'), Type.Literal('sse')])),
    enabled: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);
export type McpServerPatch = Static<typeof McpServerPatch>;

/**
 * One of `meta_profile_llms`: an LLM as 1.58 takes it there (its LLM model: `model` required, keys
 * included). The keys are secrets: sealed with the conversation's, masked wherever the LLM is shown.
 */
export const MetaProfileLlm = Type.Object({
  ...LLM.properties,
  model: Type.String({ minLength: 1 }),
  // 1.58's Bedrock credentials: kept (as secrets) for a client reading them back, not used by this agent.
  aws_access_key_id: Nullable(Type.String()),
  aws_secret_access_key: Nullable(Type.String()),
  aws_session_token: Nullable(Type.String()),
  aws_region_name: Nullable(Type.String()),
});
export type MetaProfileLlm = Static<typeof MetaProfileLlm>;

/** The stored critic settings: 1.58's VerificationSettings (the profile's, and the key). */
const StoredVerification = Type.Object({ ...ProfileVerificationSettings.properties, critic_api_key: Nullable(Type.String()) }, { additionalProperties: false });

/** `agent_settings_diff`: deep-merged into the stored agent settings (null inside a map removes the entry). */
export const AgentSettingsDiff = Type.Object(
  {
    schema_version: Type.Optional(Type.Integer({ minimum: 1 })),
    agent_kind: Type.Optional(Type.Literal('openhands', { description: 'ACP agents are not built here' })),
    /** The agent's LLM, as a conversation's `agent.llm` takes it (api_key and the AWS keys are secrets). */
    llm: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
    tools: Nullable(Type.Array(Type.Object({ name: Type.String({ minLength: 1 }), params: Type.Optional(Type.Record(Type.String(), Type.Unknown())) }))),
    mcp_config: Type.Optional(Type.Record(Type.String(), Type.Union([McpServerPatch, Type.Null()]))),
    /** As a start request's `agent_settings`: route_task_to_model offered, routing with the active or the inline meta-profile. */
    enable_classify_and_switch_llm_tool: Type.Optional(Type.Boolean()),
    meta_profile: Nullable(MetaProfile),
    /** 1.58's inline LLMs of the routing tool by profile name (each checked as MetaProfileLlm once merged; null removes one); their keys are secrets. */
    meta_profile_llms: Type.Optional(Type.Record(Type.String(), Type.Union([Type.Record(Type.String(), Type.Unknown()), Type.Null()]))),
    condenser: Type.Optional(ProfileCondenserSettings),
    /** The critic; `critic_api_key` is a secret (sealed, masked) like the LLM's key. */
    verification: Type.Optional(StoredVerification),
  },
  { additionalProperties: false },
);
export type AgentSettingsDiff = Static<typeof AgentSettingsDiff>;

/**
 * How a settings form shows a field (OpenHands' SettingsFieldMetadata and section), kept under a
 * keyword of its own: `default` there would be applied to every diff by the body parser.
 */
export interface SettingFormMeta {
  label: string;
  section: string;
  section_label: string;
  prominence: 'critical' | 'major' | 'minor';
  default: unknown;
  depends_on?: string[];
}
export const FORM = 'x-setting-form';
const form = (m: SettingFormMeta) => ({ [FORM]: m });
const GENERAL = { section: 'general', section_label: 'General' } as const;
const VERIFICATION = { section: 'verification', section_label: 'Verification' } as const;

/** `conversation_settings_diff`: the defaults of the conversations this server starts itself. */
export const ConversationSettingsDiff = Type.Object(
  {
    schema_version: Type.Optional(Type.Literal(1)),
    max_iterations: Type.Optional(
      Type.Integer({ minimum: 1, description: 'Maximum number of iterations the conversation will run before stopping.', ...form({ label: 'Max iterations', ...GENERAL, prominence: 'major', default: 500 }) }),
    ),
    confirmation_mode: Type.Optional(
      Type.Boolean({ description: 'Require user confirmation before executing risky actions.', ...form({ label: 'Confirmation mode', ...VERIFICATION, prominence: 'critical', default: false }) }),
    ),
    security_analyzer: Nullable(
      Type.Union([Type.Literal('llm'), Type.Literal('none')], {
        description: 'Security analyzer that evaluates actions before execution.',
        ...form({ label: 'Security analyzer', ...VERIFICATION, prominence: 'major', default: 'llm', depends_on: ['confirmation_mode'] }),
      }),
    ),
  },
  { additionalProperties: false },
);
export type ConversationSettingsDiff = Static<typeof ConversationSettingsDiff>;

/** PATCH /api/settings (OpenHands' SettingsUpdateRequest). A non-null pointer must name a stored profile (404); null clears it. */
export const SettingsUpdateRequest = Type.Object({
  agent_settings_diff: Type.Optional(AgentSettingsDiff),
  conversation_settings_diff: Type.Optional(ConversationSettingsDiff),
  misc_settings_diff: Type.Optional(Type.Record(Type.String(), Type.Unknown(), { description: "The frontend's own data, deep-merged and never read by the server" })),
  active_profile: Nullable(Type.String()),
  active_agent_profile_id: Nullable(Type.String()),
  active_meta_profile: Nullable(Type.String()),
});
export type SettingsUpdateRequest = Static<typeof SettingsUpdateRequest>;

/** GET/PATCH /api/settings and the MCP routes (OpenHands' SettingsResponse). Secret fields masked unless X-Expose-Secrets asks for plaintext or tokens (GET only). */
export const SettingsResponse = Type.Object({
  agent_settings: Type.Object({
    schema_version: Type.Integer(),
    agent_kind: Type.Literal('openhands'),
    llm: Type.Record(Type.String(), Type.Unknown()),
    tools: Type.Union([Type.Array(Type.Object({ name: Type.String(), params: Type.Optional(Type.Record(Type.String(), Type.Unknown())) })), Type.Null()]),
    mcp_config: Type.Record(Type.String(), McpServerSettings),
    enable_classify_and_switch_llm_tool: Type.Boolean(),
    meta_profile: Type.Union([MetaProfile, Type.Null()]),
    meta_profile_llms: Type.Record(Type.String(), Type.Record(Type.String(), Type.Unknown())),
    condenser: ProfileCondenserSettings,
    verification: StoredVerification,
  }),
  conversation_settings: Type.Object({
    schema_version: Type.Literal(1),
    max_iterations: Type.Integer(),
    confirmation_mode: Type.Boolean(),
    security_analyzer: Type.Union([Type.Literal('llm'), Type.Literal('none'), Type.Null()]),
  }),
  llm_api_key_is_set: Type.Boolean(),
  active_profile: Type.Union([Type.String(), Type.Null()]),
  active_agent_profile_id: Type.Union([Type.String(), Type.Null()]),
  active_meta_profile: Type.Union([Type.String(), Type.Null()]),
  misc_settings: Type.Record(Type.String(), Type.Unknown()),
});
export type SettingsResponse = Static<typeof SettingsResponse>;


/**
 * A start request's `agent_settings` of kind `openhands` (1.58's OpenHandsAgentSettings, which its
 * create_agent turns into the conversation's Agent): the LLM, tools, MCP servers, context, persona,
 * condenser, critic, and the routing fields: `enable_classify_and_switch_llm_tool` adds
 * route_task_to_model, routing with `active_meta_profile` (by name, from this server's store) or the
 * inline `meta_profile`, and `meta_profile_llms`: LLMs by profile name, for a runtime without the
 * profile store (1.58's cloud form), which the tool prefers to the stored profiles of the same name.
 */
export const OpenHandsAgentSettings = Type.Object(
  {
    schema_version: Type.Optional(Type.Integer({ minimum: 1 })),
    agent_kind: Type.Optional(Type.Literal('openhands')),
    agent: Type.Optional(Type.String()),
    llm: LLM,
    tools: Nullable(Type.Array(ToolSpec)),
    enable_classify_and_switch_llm_tool: Type.Optional(Type.Boolean({ default: false })),
    active_meta_profile: Nullable(Type.String()),
    meta_profile: Nullable(MetaProfile),
    meta_profile_llms: Type.Optional(Type.Record(Type.String(), MetaProfileLlm)),
    tool_concurrency_limit: Type.Optional(Type.Integer({ minimum: 1 })),
    mcp_config: Type.Optional(JsonObject),
    persona: Nullable(Type.String({ minLength: 1, maxLength: 65536 })),
    agent_context: Nullable(AgentContext),
    condenser: Type.Optional(ProfileCondenserSettings),
    verification: Type.Optional(Type.Object({ ...ProfileVerificationSettings.properties, critic_api_key: Nullable(Type.String()) })),
  },
  { additionalProperties: false },
);
export type OpenHandsAgentSettings = Static<typeof OpenHandsAgentSettings>;
