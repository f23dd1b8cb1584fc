// Conversation endpoints of the agent server (`/api/conversations...`), OpenHands-compatible.
// Request bodies are lenient like OpenHands (unknown fields are ignored: parse with `clean`);
// nested content blocks stay strict.
import Type, { type Static } from 'typebox';
import { JsonObject, LiteralUnion, Nullable } from '../events/common.ts';
import { ImageContent, TextContent } from '../events/content.ts';
import { SPAN_NAME } from '../conversation.ts';
import { Agent, AgentInfo, LLM } from './agent.ts';
import { AcpModelInfo } from './acp.ts';
import { ConfirmationPolicy, SecretInput, SecretSource } from './policy.ts';
import { SecurityAnalyzer } from './security-analyzer.ts';

/** Lowercase on the wire. `deleting` appears only in webhooks. */
export const EXECUTION_STATUSES = [
  'idle',
  'running',
  'paused',
  'waiting_for_confirmation',
  'finished',
  'error',
  'stuck',
  'deleting',
] as const;
export const ConversationExecutionStatus = LiteralUnion(EXECUTION_STATUSES);
export type ConversationExecutionStatus = Static<typeof ConversationExecutionStatus>;

/** Conversation ids: UUID with dashes, or 32 hex digits (OpenHands accepts both in paths). */
export const ConversationId = Type.String({
  pattern: '^([0-9a-fA-F]{8}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{12})$',
});

/** Tag keys are lowercase alphanumerics; values at most 256 characters. */
// propertyNames rather than a patterned key: TypeBox's Value.Default trips over `additionalProperties: false` records.
const TAG_KEYS = { propertyNames: { pattern: '^[a-z0-9]+$' } };
const TagValue = Type.String({ maxLength: 256 });
export const Tags = Type.Record(Type.String(), TagValue, TAG_KEYS);
export type Tags = Static<typeof Tags>;

export const LocalWorkspace = Type.Object({
  kind: Type.Optional(Type.Literal('LocalWorkspace', { default: 'LocalWorkspace' })),
  working_dir: Type.String({ minLength: 1 }),
});
export type LocalWorkspace = Static<typeof LocalWorkspace>;

export const PluginSource = Type.Object({
  /** Repository reference, e.g. `github:owner/repo` or a git URL. */
  source: Type.String({ minLength: 1 }),
  ref: Nullable(Type.String()),
  repo_path: Nullable(Type.String()),
  /** Values for the plugin's parameters, by name (agentyard; from the app's launch link). */
  parameters: Nullable(Type.Record(Type.String(), Type.Union([Type.String(), Type.Number(), Type.Boolean()]))),
});
export type PluginSource = Static<typeof PluginSource>;

/** Trace metadata values: scalars or homogeneous scalar arrays (spec part 8). */
export const TraceMetadataValue = Type.Union([
  Type.String(),
  Type.Number(),
  Type.Boolean(),
  Type.Array(Type.String()),
  Type.Array(Type.Number()),
  Type.Array(Type.Boolean()),
]);
export type TraceMetadataValue = Static<typeof TraceMetadataValue>;

/** `POST /api/conversations/{id}/events` and `initial_message`. Only user messages may be sent. */
export const SendMessageRequest = Type.Object({
  role: Type.Optional(Type.Literal('user', { default: 'user' })),
  content: Type.Optional(Type.Array(Type.Union([TextContent, ImageContent]), { default: [] })),
  /** Start the agent after appending. OpenHands ignores it for `initial_message` (always runs). */
  run: Type.Optional(Type.Boolean({ default: false })),
});
export type SendMessageRequest = Static<typeof SendMessageRequest>;

/**
 * Headers that set a start request's observability fields (POST /api/conversations and the OpenAI-
 * compatible gateway): span name, comma-separated tags, JSON metadata, and a parent span context.
 */
export const OBSERVABILITY_HEADERS = ['X-OpenHands-Observability-Span-Name', 'X-OpenHands-Observability-Tags', 'X-OpenHands-Observability-Metadata', 'X-OpenHands-Observability-Parent-Span-Context'] as const;

/** How a conversation's git worktree is made (`worktree: true`; OpenHands ConversationWorktreeOptions). */
export const ConversationWorktreeOptions = Type.Object(
  {
    /** What the worktree branches from: the default branch (origin's when there is one), the checkout's HEAD, or `ref`. */
    base: Type.Optional(Type.Union([Type.Literal('default_branch'), Type.Literal('head'), Type.Literal('ref')], { default: 'default_branch' })),
    /** Never starts with `-`, so git cannot read it as an option. */
    ref: Nullable(Type.String({ pattern: '^[A-Za-z0-9][A-Za-z0-9._/-]*$' })),
    /** The branch is `<branch_prefix><conversation id>`. */
    branch_prefix: Type.Optional(Type.String({ pattern: '^([A-Za-z0-9][A-Za-z0-9._/-]*)?$', default: 'openhands/' })),
  },
  { additionalProperties: false },
);
export type ConversationWorktreeOptions = Static<typeof ConversationWorktreeOptions>;

/** `POST /api/conversations`. Exactly one of `agent`, `agent_settings`, `agent_profile_id`. */
export const StartConversationRequest = Type.Object({
  workspace: LocalWorkspace,
  /** In a git repository: a worktree of its own at `<workspace root>/.conversation-worktrees/<id>/<repository name>`. */
  worktree: Type.Optional(Type.Boolean({ default: false })),
  worktree_options: Nullable(ConversationWorktreeOptions),
  /** Idempotency: an existing id returns that conversation with 200 instead of 201. */
  conversation_id: Nullable(ConversationId),
  parent_conversation_id: Nullable(ConversationId),
  agent: Type.Optional(Agent),
  agent_settings: Nullable(JsonObject),
  agent_profile_id: Nullable(Type.String()),
  confirmation_policy: Type.Optional(Type.Union(ConfirmationPolicy.anyOf, { default: { kind: 'NeverConfirm' } })),
  security_analyzer: Nullable(SecurityAnalyzer),
  initial_message: Nullable(SendMessageRequest),
  max_iterations: Type.Optional(Type.Integer({ minimum: 1, default: 500 })),
  /** Model spend (USD, as the endpoint reports in usage.cost) allowed per run; then error MaxBudgetReached. */
  max_budget_per_run: Nullable(Type.Number({ exclusiveMinimum: 0 })),
  stuck_detection: Type.Optional(Type.Boolean({ default: true })),
  /** As 1.58 (and 1.44): SecretSource objects only; a plain string or a bare `{value}` is a 422 (only the /secrets update coerces them). */
  secrets: Type.Optional(Type.Record(Type.String(), SecretSource, { default: {} })),
  /**
   * True: secret values in `agent`, `agent_settings` and `secrets` may be OpenHands Fernet tokens of
   * this server's secret key (as GET /api/settings with X-Expose-Secrets: encrypted answers them);
   * they are decrypted before use. A token another key made is refused (422); no secret key: 503.
   */
  secrets_encrypted: Type.Optional(Type.Boolean({ default: false })),
  tool_module_qualnames: Type.Optional(Type.Record(Type.String(), Type.String(), { default: {} })),
  client_tools: Type.Optional(Type.Array(JsonObject, { default: [] })),
  agent_launch_additions: Nullable(JsonObject),
  agent_definitions: Type.Optional(Type.Array(JsonObject, { default: [] })),
  plugins: Nullable(Type.Array(PluginSource)),
  hook_config: Nullable(JsonObject),
  tags: Type.Optional(Type.Record(Type.String(), TagValue, { ...TAG_KEYS, default: {} })),
  user_id: Nullable(Type.String()),
  observability_metadata: Type.Optional(Type.Record(Type.String(), TraceMetadataValue, { default: {} })),
  observability_tags: Type.Optional(Type.Array(Type.String(), { default: [] })),
  /** Child span name under the root `conversation` span; stable, low-cardinality. */
  observability_span_name: Type.Optional(Type.String({ ...SPAN_NAME, default: 'conversation' })),
  autotitle: Type.Optional(Type.Boolean({ default: true })),
  title_llm_profile: Nullable(Type.String()),
});
export type StartConversationRequest = Static<typeof StartConversationRequest>;

/** Usage and cost of one LLM (`usage_id`), as in `stats.usage_to_metrics`. Open for extra fields. */
export const TokenUsage = Type.Object({
  model: Type.Optional(Type.String()),
  prompt_tokens: Type.Optional(Type.Integer({ minimum: 0 })),
  completion_tokens: Type.Optional(Type.Integer({ minimum: 0 })),
  cache_read_tokens: Type.Optional(Type.Integer({ minimum: 0 })),
  cache_write_tokens: Type.Optional(Type.Integer({ minimum: 0 })),
  reasoning_tokens: Type.Optional(Type.Integer({ minimum: 0 })),
  context_window: Type.Optional(Type.Integer({ minimum: 0 })),
  per_turn_token: Type.Optional(Type.Integer({ minimum: 0 })),
  response_id: Type.Optional(Type.String()),
});
export type TokenUsage = Static<typeof TokenUsage>;

export const MetricsSnapshot = Type.Object({
  model_name: Type.Optional(Type.String()),
  accumulated_cost: Type.Optional(Type.Number({ minimum: 0 })),
  max_budget_per_task: Nullable(Type.Number()),
  accumulated_token_usage: Nullable(TokenUsage),
});
export type MetricsSnapshot = Static<typeof MetricsSnapshot>;

export const ConversationStats = Type.Object({
  usage_to_metrics: Type.Optional(Type.Record(Type.String(), MetricsSnapshot)),
});
export type ConversationStats = Static<typeof ConversationStats>;

/**
 * A conversation as the agent server reports it. Fields the unmodified OpenHands client reads
 * unconditionally are required. `agent` has secrets masked; `created_at`/`updated_at` are UTC ISO.
 */
export const ConversationInfo = Type.Object({
  id: Type.String(),
  agent: AgentInfo,
  workspace: Type.Object({ kind: Type.String(), working_dir: Type.String() }),
  persistence_dir: Type.String(),
  execution_status: ConversationExecutionStatus,
  confirmation_policy: ConfirmationPolicy,
  activated_knowledge_skills: Type.Array(Type.String()),
  /** OpenHands 1.58, full_state snapshot only: path-scoped rules (nested AGENTS.md, `paths:` skills) already added to an observation. */
  activated_path_rules: Type.Optional(Type.Array(Type.String())),
  max_iterations: Type.Optional(Type.Integer({ minimum: 1 })),
  stuck_detection: Type.Optional(Type.Boolean()),
  security_analyzer: Nullable(SecurityAnalyzer),
  invoked_skills: Type.Optional(Type.Array(Type.String())),
  blocked_actions: Type.Optional(Type.Record(Type.String(), Type.String())),
  blocked_messages: Type.Optional(Type.Record(Type.String(), Type.String())),
  last_user_message_id: Nullable(Type.String()),
  leaf_event_id: Nullable(Type.String()),
  /** OpenHands 1.58, full_state snapshot only: HEAD deliberately empty (after navigating to no event); never so here. */
  head_is_empty: Type.Optional(Type.Boolean()),
  stats: Type.Optional(ConversationStats),
  secret_registry: Type.Optional(JsonObject),
  agent_state: Type.Optional(JsonObject),
  hook_config: Nullable(JsonObject),
  title: Nullable(Type.String()),
  /** Never written by OpenHands (always null); real usage is in `stats`. */
  metrics: Nullable(MetricsSnapshot),
  created_at: Type.Optional(Type.String()),
  updated_at: Type.Optional(Type.String()),
  forked_from_conversation_id: Nullable(Type.String()),
  forked_from_event_id: Nullable(Type.String()),
  parent_conversation_id: Nullable(Type.String()),
  sub_conversation_ids: Type.Optional(Type.Array(Type.String())),
  tags: Type.Optional(Type.Record(Type.String(), Type.String())),
  current_model_id: Nullable(Type.String()),
  supports_runtime_model_switch: Type.Optional(Type.Boolean()),
  /** OpenHands 1.58: an ACP agent's models (what switch_acp_model may pick; empty for other agents), client-side tools (none), the agent profile launched. */
  available_models: Type.Optional(Type.Array(AcpModelInfo)),
  client_tools: Type.Optional(Type.Array(JsonObject)),
  launched_agent_profile: Type.Optional(Nullable(JsonObject)),
  /** OpenHands 1.58: the conversation's separate runtime, if any (null: it runs in this server). */
  runtime_info: Type.Optional(Nullable(JsonObject)),
  /** OpenHands 1.58: the Python module of each tool; none here (the tools are this server's own). */
  tool_module_qualnames: Type.Optional(Type.Record(Type.String(), Type.String())),
  /**
   * agentyard: while a model call of the run waits for the provider's rate limit (a 429), when the
   * wait ends (UTC ISO); absent otherwise (null in the full_state snapshot). Also sent as the state
   * update `rate_limited_until`. Not in OpenHands 1.58, which waits without saying so.
   */
  rate_limited_until: Type.Optional(Nullable(Type.String())),
});
export type ConversationInfo = Static<typeof ConversationInfo>;

/** `next_page_id` is the id of the first item of the next page (hex, no dashes, in OpenHands). */
export const ConversationPage = Type.Object({
  items: Type.Array(ConversationInfo),
  next_page_id: Nullable(Type.String()),
});
export type ConversationPage = Static<typeof ConversationPage>;

/** `POST /api/conversations/{id}/fork`; the whole body is optional. */
export const ForkConversationRequest = Type.Object({
  /** Id for the fork; generated when absent. 409 if it already exists. */
  id: Nullable(ConversationId),
  /** Stored as `tags.title`. */
  title: Nullable(Type.String({ maxLength: 200 })),
  /** The fork's tags; the source's tags are not inherited. */
  tags: Nullable(Tags),
  reset_metrics: Type.Optional(Type.Boolean({ default: true })),
  /** Fork at this event (its path to the root) instead of the source's HEAD. */
  from_event_id: Nullable(Type.String()),
});
export type ForkConversationRequest = Static<typeof ForkConversationRequest>;

/** `PATCH /api/conversations/{id}`. `tags` replaces the whole set. */
export const UpdateConversationRequest = Type.Object({
  title: Nullable(Type.String({ minLength: 1, maxLength: 200 })),
  tags: Nullable(Tags),
});
export type UpdateConversationRequest = Static<typeof UpdateConversationRequest>;

/** `POST /api/conversations/{id}/events/respond_to_confirmation`. */
export const ConfirmationResponseRequest = Type.Object({
  accept: Type.Boolean(),
  reason: Type.Optional(Type.String({ default: 'User rejected the action.' })),
});
export type ConfirmationResponseRequest = Static<typeof ConfirmationResponseRequest>;

/** `POST /api/conversations/{id}/confirmation_policy`. */
export const SetConfirmationPolicyRequest = Type.Object({ policy: ConfirmationPolicy });
export type SetConfirmationPolicyRequest = Static<typeof SetConfirmationPolicyRequest>;

/**
 * `POST /api/conversations/{id}/switch_llm`: the LLM from the next model call on, given as in the
 * start request's `agent.llm` (and resolved by the same rules: base URL, litellm prefix, LLM_API_KEY).
 */
export const SwitchLlmRequest = Type.Object({ llm: LLM });
export type SwitchLlmRequest = Static<typeof SwitchLlmRequest>;

/** `POST /api/conversations/{id}/secrets`. Plain strings are coerced to StaticSecret (`toSecretSource`). */
export const UpdateSecretsRequest = Type.Object({ secrets: Type.Record(Type.String(), SecretInput) });
export type UpdateSecretsRequest = Static<typeof UpdateSecretsRequest>;

/** Secrets after coercion, as stored. */
export const Secrets = Type.Record(Type.String(), SecretSource);
export type Secrets = Static<typeof Secrets>;

/** `POST /api/conversations/{id}/navigate`; null selects the empty tree. */
export const NavigateConversationRequest = Type.Object({ event_id: Nullable(Type.String()) });
export type NavigateConversationRequest = Static<typeof NavigateConversationRequest>;

/** `POST /api/conversations/{id}/ask_agent`. */
export const AskAgentRequest = Type.Object({ question: Type.String() });
export type AskAgentRequest = Static<typeof AskAgentRequest>;
export const AskAgentResponse = Type.Object({ response: Type.String() });
export type AskAgentResponse = Static<typeof AskAgentResponse>;
