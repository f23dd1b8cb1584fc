// Agent profiles (OpenHands 1.58 `/api/agent-profiles`): named launch specs (which LLM profile,
// tools, persona, system prompt suffix, skills, condenser) a conversation starts from by
// `agent_profile_id`. Secret-free: the LLM is a reference to an LLM profile (`llm_profile_ref`).
// Two kinds, as in 1.58: `openhands` (the built-in agent) and `acp` (an ACP server: which one, its
// model, mode, timeouts and command; no LLM reference: the ACP server calls its own model, with
// credentials that ride the conversation's secrets, never the profile).
import Type, { type Static } from 'typebox';
import { Nullable } from '../events/common.ts';
import { AcpServerKind } from './acp.ts';
import { ToolSpec } from './agent.ts';

export const AGENT_PROFILE_SCHEMA_VERSION = 4;
export const MAX_AGENT_PROFILES = 50;
/** The profile activated (and seeded) when no valid one is. */
export const SEED_AGENT_PROFILE = 'default';

/** OpenHands' defaults of LLMSummarizingCondenserSettings, as its profiles dump them. */
export const DEFAULT_CONDENSER = { condenser_kind: 'llm_summarizing' as const, enabled: true, max_size: 240, max_tokens: null, keep_first: 2, minimum_progress: 0.1, hard_context_reset_max_retries: 5, hard_context_reset_context_scaling: 0.8 };
export const DEFAULT_VERIFICATION = { critic_enabled: false, critic_mode: 'finish_and_message' as const, enable_iterative_refinement: false, critic_threshold: 0.6, max_refinement_iterations: 3, critic_server_url: null, critic_model_name: null };

const Names = Type.Union([Type.Array(Type.String()), Type.Null()]);
const Fraction = Type.Number({ exclusiveMinimum: 0, exclusiveMaximum: 1 });

/** OpenHands' CondenserSettingsConfig (the summarizing condenser's or no_op's fields); a launch applies it as the agent's condenser. */
export const ProfileCondenserSettings = Type.Object({
  condenser_kind: Type.Optional(Type.Union([Type.Literal('llm_summarizing'), Type.Literal('no_op')])),
  enabled: Type.Optional(Type.Boolean()),
  max_size: Type.Optional(Type.Integer({ minimum: 20 })),
  max_tokens: Type.Optional(Type.Union([Type.Integer({ exclusiveMinimum: 0 }), Type.Null()])),
  keep_first: Type.Optional(Type.Integer({ minimum: 0 })),
  minimum_progress: Type.Optional(Fraction),
  hard_context_reset_max_retries: Type.Optional(Type.Integer({ exclusiveMinimum: 0 })),
  hard_context_reset_context_scaling: Type.Optional(Fraction),
});

/** OpenHands' ProfileVerificationSettings (the critic's, secret-free); a launch refuses critic_enabled (not built here). */
export const ProfileVerificationSettings = Type.Object({
  critic_enabled: Type.Optional(Type.Boolean()),
  critic_mode: Type.Optional(Type.Union([Type.Literal('finish_and_message'), Type.Literal('all_actions')])),
  enable_iterative_refinement: Type.Optional(Type.Boolean()),
  critic_threshold: Type.Optional(Type.Number({ minimum: 0, maximum: 1 })),
  max_refinement_iterations: Type.Optional(Type.Integer({ minimum: 1 })),
  critic_server_url: Type.Optional(Type.Union([Type.String(), Type.Null()])),
  critic_model_name: Type.Optional(Type.Union([Type.String(), Type.Null()])),
});

/** The body of `POST /api/agent-profiles/{name}` (the path names it; `id` and `revision` are the server's). */
export const AgentProfileInput = Type.Object(
  {
    schema_version: Type.Optional(Type.Integer({ minimum: 1 })),
    agent_kind: Type.Optional(Type.Literal('openhands')),
    id: Type.Optional(Type.String()),
    name: Type.Optional(Type.String()),
    revision: Type.Optional(Type.Integer({ minimum: 0 })),
    mcp_server_refs: Type.Optional(Names),
    secret_refs: Type.Optional(Names),
    llm_profile_ref: Type.String({ minLength: 1 }),
    agent: Type.Optional(Type.String()),
    tools: Type.Optional(Type.Union([Type.Array(ToolSpec), Type.Null()])),
    persona: Nullable(Type.String({ minLength: 1, maxLength: 65536 })),
    system_message_suffix: Nullable(Type.String()),
    disabled_skills: Type.Optional(Type.Array(Type.String())),
    public_skills: Type.Optional(Names),
    condenser: Type.Optional(ProfileCondenserSettings),
    verification: Type.Optional(ProfileVerificationSettings),
    enable_classify_and_switch_llm_tool: Type.Optional(Type.Boolean()),
    meta_profile_ref: Nullable(Type.String({ minLength: 1 })),
    tool_concurrency_limit: Type.Optional(Type.Integer({ minimum: 1 })),
  },
  { additionalProperties: false },
);
export type AgentProfileInput = Static<typeof AgentProfileInput>;

/** The body of `POST /api/agent-profiles/{name}` for an ACP profile (`agent_kind: "acp"`). */
export const AcpAgentProfileInput = Type.Object(
  {
    schema_version: Type.Optional(Type.Integer({ minimum: 1 })),
    agent_kind: Type.Literal('acp'),
    id: Type.Optional(Type.String()),
    name: Type.Optional(Type.String()),
    revision: Type.Optional(Type.Integer({ minimum: 0 })),
    mcp_server_refs: Type.Optional(Names),
    secret_refs: Type.Optional(Names),
    acp_server: Type.Optional(AcpServerKind),
    acp_model: Nullable(Type.String()),
    acp_session_mode: Nullable(Type.String()),
    acp_prompt_timeout: Type.Optional(Type.Number({ exclusiveMinimum: 0 })),
    acp_startup_timeout: Type.Optional(Type.Number({ exclusiveMinimum: 0 })),
    /** A shell-quoted command line (split at launch); null: the default of `acp_server`. */
    acp_command: Nullable(Type.String()),
    acp_args: Type.Optional(Type.Union([Type.Array(Type.String()), Type.Null()])),
  },
  { additionalProperties: false },
);
export type AcpAgentProfileInput = Static<typeof AcpAgentProfileInput>;

/** A stored ACP profile, every field present. */
export type AcpAgentProfile = Required<Omit<AcpAgentProfileInput, 'acp_model' | 'acp_session_mode' | 'acp_command'>> & {
  acp_model: string | null;
  acp_session_mode: string | null;
  acp_command: string | null;
};

/** An ACP profile filled with 1.58's defaults. */
export function completeAcpAgentProfile(input: AcpAgentProfileInput, o: { id: string; name: string; revision: number }): AcpAgentProfile {
  return {
    schema_version: AGENT_PROFILE_SCHEMA_VERSION,
    agent_kind: 'acp',
    id: o.id,
    name: o.name,
    revision: o.revision,
    mcp_server_refs: input.mcp_server_refs ?? null,
    secret_refs: input.secret_refs ?? null,
    acp_server: input.acp_server ?? 'claude-code',
    acp_model: input.acp_model ?? null,
    acp_session_mode: input.acp_session_mode ?? null,
    acp_prompt_timeout: input.acp_prompt_timeout ?? 1800,
    acp_startup_timeout: input.acp_startup_timeout ?? 90,
    acp_command: input.acp_command ?? null,
    acp_args: input.acp_args ?? null,
  };
}

/** A stored profile of either kind. */
export type AnyAgentProfile = AgentProfile | AcpAgentProfile;
export type AnyAgentProfileInput = AgentProfileInput | AcpAgentProfileInput;

export function completeAnyAgentProfile(input: AnyAgentProfileInput, o: { id: string; name: string; revision: number }): AnyAgentProfile {
  return input.agent_kind === 'acp' ? completeAcpAgentProfile(input, o) : completeAgentProfile(input, o);
}

/** A stored profile, every field present (as OpenHands dumps it). */
export type AgentProfile = Required<Omit<AgentProfileInput, 'persona' | 'system_message_suffix' | 'meta_profile_ref'>> & {
  persona: string | null;
  system_message_suffix: string | null;
  meta_profile_ref: string | null;
};

export const AgentProfileInfo = Type.Object({
  id: Nullable(Type.String()),
  name: Type.String(),
  agent_kind: Type.String({ default: 'openhands' }),
  revision: Nullable(Type.Integer()),
  llm_profile_ref: Nullable(Type.String()),
  mcp_server_refs: Nullable(Type.Array(Type.String())),
});
export const AgentProfileListResponse = Type.Object({ profiles: Type.Array(AgentProfileInfo), active_agent_profile_id: Nullable(Type.String()) });
export type AgentProfileListResponse = Static<typeof AgentProfileListResponse>;
export const AgentProfileDetailResponse = Type.Object({ name: Type.String(), profile: Type.Record(Type.String(), Type.Unknown()) });
export const AgentProfileMutationResponse = Type.Object({ name: Type.String(), message: Type.String() });
export const ActivateAgentProfileResponse = Type.Object({ id: Type.String(), message: Type.String(), agent_settings_applied: Type.Boolean({ default: false }) });

/** A stored profile filled with OpenHands' defaults. */
export function completeAgentProfile(input: AgentProfileInput, o: { id: string; name: string; revision: number }): AgentProfile {
  return {
    schema_version: AGENT_PROFILE_SCHEMA_VERSION,
    agent_kind: 'openhands',
    id: o.id,
    name: o.name,
    revision: o.revision,
    mcp_server_refs: input.mcp_server_refs ?? null,
    secret_refs: input.secret_refs ?? null,
    llm_profile_ref: input.llm_profile_ref,
    agent: input.agent ?? 'CodeActAgent',
    tools: input.tools ?? null,
    persona: input.persona ?? null,
    system_message_suffix: input.system_message_suffix ?? null,
    disabled_skills: input.disabled_skills ?? [],
    public_skills: input.public_skills ?? null,
    condenser: { ...DEFAULT_CONDENSER, ...input.condenser },
    verification: { ...DEFAULT_VERIFICATION, ...input.verification },
    enable_classify_and_switch_llm_tool: input.enable_classify_and_switch_llm_tool ?? false,
    meta_profile_ref: input.meta_profile_ref ?? null,
    tool_concurrency_limit: input.tool_concurrency_limit ?? 1,
  };
}

/**
 * The body of `POST /api/agent-profiles/{name}/materialize`: a draft profile to preview instead of
 * the stored one (its name is the path's). Kept loose here: the draft is checked as a save checks it
 * (AgentProfileInput, located under ["openhands", <field>]).
 */
export const MaterializeAgentProfileRequest = Type.Object(
  { profile: Nullable(Type.Record(Type.String(), Type.Unknown(), { description: "Draft profile to evaluate instead of the stored one. The path name overrides the draft's name." })) },
  { additionalProperties: false },
);
export type MaterializeAgentProfileRequest = Static<typeof MaterializeAgentProfileRequest>;

/**
 * OpenHands 1.58's AgentProfileDiagnostics: what launching a profile would build, dangling references
 * reported rather than raised. The ACP credential channels name the environment variables an ACP
 * server reads its key and endpoint from; `resolved_settings` (present iff `valid`) is the agent a
 * launch starts with, its key masked.
 */
export const AgentProfileDiagnostics = Type.Object({
  agent_kind: Type.String(),
  valid: Type.Boolean({ default: false }),
  errors: Type.Array(Type.String()),
  unusable_tools: Type.Array(Type.String(), { description: 'Selected tools this server cannot run.' }),
  llm_profile_ref: Type.Union([Type.String(), Type.Null()]),
  llm_profile_resolved: Type.Boolean({ default: false }),
  llm_api_key_set: Type.Boolean({ default: false }),
  mcp_server_refs: Type.Union([Type.Array(Type.String()), Type.Null()]),
  resolved_mcp_config_keys: Type.Array(Type.String()),
  dangling_mcp_server_refs: Type.Array(Type.String()),
  disabled_skills: Type.Array(Type.String()),
  public_skills: Type.Union([Type.Array(Type.String()), Type.Null()]),
  resolved_skills: Type.Array(Type.String()),
  secret_refs: Type.Union([Type.Array(Type.String()), Type.Null()]),
  acp_api_key_secret_name: Type.Union([Type.String(), Type.Null()]),
  acp_base_url_secret_name: Type.Union([Type.String(), Type.Null()]),
  acp_file_secret_names: Type.Array(Type.String()),
  meta_profile_ref: Type.Union([Type.String(), Type.Null()]),
  dangling_meta_profile_ref: Type.Union([Type.String(), Type.Null()]),
  dangling_meta_profile_llm_refs: Type.Array(Type.String()),
  resolved_settings: Type.Union([Type.Record(Type.String(), Type.Unknown()), Type.Null()]),
});
export type AgentProfileDiagnostics = Static<typeof AgentProfileDiagnostics>;
