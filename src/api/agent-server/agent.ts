// Agent configuration inside StartConversationRequest / ConversationInfo (OpenHands `Agent`, `LLM`).
// Lenient: OpenHands grows these models often, and the agent server ignores what it does not use.
import Type, { type Static } from 'typebox';
import { JsonObject, Nullable } from '../events/common.ts';
import { AcpAgentFields } from './acp.ts';

/** LLM settings. `api_key` is a secret: masked (`**********`) in every response. */
export const LLM = Type.Object({
  /** LiteLLM-style model name, e.g. `openai/gpt-4o`. */
  model: Type.Optional(Type.String()),
  base_url: Nullable(Type.String()),
  api_key: Nullable(Type.String()),
  /** A shared provider connection (/api/llm/provider-connections) whose key and base URL this LLM uses (LLM profiles). */
  provider_connection_id: Nullable(Type.String()),
  api_version: Nullable(Type.String()),
  /**
   * `subscription`: the model is called through the ChatGPT subscription this agent server signed in
   * with (/api/llm/subscription/openai), at the Codex Responses endpoint; `api_key` and `base_url` are
   * then not used.
   */
  auth_type: Type.Optional(Type.Union([Type.Literal('api_key'), Type.Literal('subscription')], { default: 'api_key' })),
  subscription_vendor: Nullable(Type.Literal('openai')),
  /** OpenHands serializes a subscription LLM with this flag too: true is taken as `auth_type: "subscription"`. */
  is_subscription: Type.Optional(Type.Boolean()),
  /** Which usage bucket this LLM's costs go to (e.g. `agent`, `condenser`). */
  usage_id: Type.Optional(Type.String({ default: 'default' })),
  temperature: Nullable(Type.Number()),
  top_p: Nullable(Type.Number()),
  top_k: Nullable(Type.Number()),
  max_input_tokens: Nullable(Type.Integer()),
  max_output_tokens: Nullable(Type.Integer()),
  timeout: Nullable(Type.Integer()),
  num_retries: Type.Optional(Type.Integer({ minimum: 0 })),
  retry_min_wait: Type.Optional(Type.Integer({ minimum: 0 })),
  retry_max_wait: Type.Optional(Type.Integer({ minimum: 0 })),
  retry_multiplier: Type.Optional(Type.Number()),
  stream: Type.Optional(Type.Boolean()),
  native_tool_calling: Type.Optional(Type.Boolean()),
  caching_prompt: Type.Optional(Type.Boolean()),
  reasoning_effort: Nullable(
    Type.Union([
      Type.Literal('low'),
      Type.Literal('medium'),
      Type.Literal('high'),
      Type.Literal('xhigh'),
      Type.Literal('none'),
    ]),
  ),
  api_mode: Type.Optional(Type.Union([Type.Literal('auto'), Type.Literal('chat'), Type.Literal('responses')])),
  log_completions: Type.Optional(Type.Boolean()),
  /** Sent along in every model request's body (LiteLLM's extra_body); `return_token_ids: true` asks vLLM for token ids (TokenEvent). */
  litellm_extra_body: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
  log_completions_folder: Type.Optional(Type.String()),
  extra_headers: Nullable(Type.Record(Type.String(), Type.String())),
  input_cost_per_token: Nullable(Type.Number()),
  output_cost_per_token: Nullable(Type.Number()),
  drop_params: Type.Optional(Type.Boolean()),
  seed: Nullable(Type.Integer()),
});
export type LLM = Static<typeof LLM>;

/** A tool the agent should load, by registered name (`terminal`, `file_editor`, `task_tracker`, ...). */
export const ToolSpec = Type.Object({
  name: Type.String({ minLength: 1 }),
  params: Type.Optional(Type.Record(Type.String(), Type.Unknown(), { default: {} })),
});
export type ToolSpec = Static<typeof ToolSpec>;

export const AgentContext = Type.Object({
  skills: Type.Optional(Type.Array(JsonObject)),
  system_message_suffix: Nullable(Type.String()),
  user_message_suffix: Nullable(Type.String()),
  /** The user's skills (~/.agents/skills, ~/.openhands/skills, installed ones): only when true (1.58's default is false); they yield to `skills` on a name. */
  load_user_skills: Type.Optional(Type.Boolean()),
  load_public_skills: Type.Optional(Type.Boolean()),
  /** The skills of the conversation's workspace (and its git root): only when true (1.58's default is false); they override same-named ones. */
  load_project_skills: Type.Optional(Type.Boolean()),
  /** The marketplace file of the extensions repository public skills are chosen by (default marketplaces/default.json); null: every public skill. */
  marketplace_path: Nullable(Type.String()),
  /** Skills left out whatever source loads them (user, project, the list above): an agent profile's deny-list (OpenHands 1.58). */
  disabled_skills: Type.Optional(Type.Array(Type.String())),
  secrets: Nullable(JsonObject),
  /** Marketplaces POST /load_plugin resolves plugin references in (`name` or `name@marketplace`). */
  registered_marketplaces: Type.Optional(
    Type.Array(
      Type.Object({
        name: Type.String(),
        /** `github:owner/repo`, a git URL, or a local path. */
        source: Type.String(),
        ref: Nullable(Type.String()),
        repo_path: Nullable(Type.String()),
        /** true: its plugins (loaded with the conversation, before the request's) and standalone skills; a list: those names. */
        auto_load: Type.Optional(Type.Union([Type.Boolean(), Type.Array(Type.String())])),
      }),
    ),
  ),
});
export type AgentContext = Static<typeof AgentContext>;

/** `Agent` is the built-in agent loop; `ACPAgent` delegates to an ACP subprocess. */
export const AgentKind = Type.Union([Type.Literal('Agent'), Type.Literal('ACPAgent')]);
export type AgentKind = Static<typeof AgentKind>;

export const Agent = Type.Object({
  kind: Type.Optional(Type.Union(AgentKind.anyOf, { default: 'Agent' })),
  llm: LLM,
  tools: Type.Optional(Type.Array(ToolSpec, { default: [] })),
  include_default_tools: Type.Optional(Type.Array(Type.String())),
  agent_context: Nullable(AgentContext),
  mcp_config: Type.Optional(JsonObject),
  filter_tools_regex: Nullable(Type.String()),
  system_prompt: Nullable(Type.String()),
  system_prompt_filename: Type.Optional(Type.String()),
  system_prompt_kwargs: Type.Optional(JsonObject),
  security_policy_filename: Type.Optional(Type.String()),
  condenser: Nullable(JsonObject),
  critic: Nullable(JsonObject),
  tool_concurrency_limit: Type.Optional(Type.Integer({ minimum: 1 })),
  /** Kind `ACPAgent` only: the ACP server and how it runs (src/agent-server/acp). */
  ...AcpAgentFields,
});
export type Agent = Static<typeof Agent>;

/** The LLM as responses show it: `model` always present, `api_key` masked (`**********`) or absent. */
export const LLMInfo = Type.Object({
  ...LLM.properties,
  model: Type.String(),
  api_key: Type.Optional(Type.String()),
  base_url: Type.Optional(Type.String()),
});
export type LLMInfo = Static<typeof LLMInfo>;

/** The agent as responses show it (ConversationInfo.agent): `kind` always present, secrets masked. */
export const AgentInfo = Type.Object({ ...Agent.properties, kind: AgentKind, llm: LLMInfo });
export type AgentInfo = Static<typeof AgentInfo>;
