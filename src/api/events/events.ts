// Every event kind of the agent server (spec part 2 "Event", part 6), on the OpenHands wire.
// Each event object is strict: unknown properties are rejected.
import Type, { type Static, type TProperties, type TSchema } from 'typebox';
import { Action } from './actions.ts';
import { JsonObject, LiteralUnion, Nullable, STRICT } from './common.ts';
import {
  AnyThinkingBlock,
  CriticResult,
  ErrorClassification,
  Message,
  MessageToolCall,
  ReasoningItemModel,
  SecurityRisk,
  TextContent,
} from './content.ts';
import { Observation } from './observations.ts';
import { ToolDefinition } from './tools.ts';

export const EVENT_SOURCES = ['agent', 'user', 'environment', 'hook'] as const;
export type EventSource = (typeof EVENT_SOURCES)[number];

/** Who produced the event. `hook` is newer than the spec's three values; OpenHands emits it. */
export const EventSource = LiteralUnion(EVENT_SOURCES);

/** `source` with the kind's default (spec: "default differs per kind"). */
function sourceDefault(source: EventSource) {
  return Type.Optional(LiteralUnion(EVENT_SOURCES, { default: source }));
}

/**
 * Common fields, then the kind's own fields, then `kind` (Pydantic serializes the computed
 * `kind` last). `id` and `timestamp` are required here: agentyard always emits both
 * (UUID; UTC ISO with 'Z'), while OpenHands-produced timestamps are naive local ISO strings,
 * so the timestamp format is not enforced.
 */
function event<K extends string, S extends TSchema, P extends TProperties>(kind: K, source: S, props: P) {
  return Type.Object(
    {
      id: Type.String({ minLength: 1 }),
      timestamp: Type.String({ minLength: 1 }),
      source,
      /** Parent in the conversation tree (OpenHands >= 1.30); omitted when null. */
      parent_id: Nullable(Type.String()),
      ...props,
      kind: Type.Literal(kind),
    },
    STRICT,
  );
}

export const Condensation = event('Condensation', sourceDefault('environment'), {
  /** Ids removed from the view given to the model. */
  forgotten_event_ids: Type.Optional(Type.Array(Type.String(), { default: [] })),
  summary: Nullable(Type.String()),
  /** Position in the resulting view where the summary is inserted; absent means not inserted. */
  summary_offset: Nullable(Type.Integer({ minimum: 0 })),
  llm_response_id: Type.String(),
});
export type Condensation = Static<typeof Condensation>;

export const CondensationRequest = event('CondensationRequest', sourceDefault('environment'), {});
export type CondensationRequest = Static<typeof CondensationRequest>;

export const CondensationSummaryEvent = event('CondensationSummaryEvent', sourceDefault('environment'), {
  summary: Type.String(),
});
export type CondensationSummaryEvent = Static<typeof CondensationSummaryEvent>;

/** Conversation-level failure, not sent to the model; the run loop moves to `error`. */
export const ConversationErrorEvent = event('ConversationErrorEvent', EventSource, {
  /** Typically an error type, e.g. `MaxIterationsReached`. */
  code: Type.String(),
  detail: Type.String(),
  classification: Nullable(ErrorClassification),
});
export type ConversationErrorEvent = Static<typeof ConversationErrorEvent>;

export const ConversationStateUpdateEvent = event('ConversationStateUpdateEvent', sourceDefault('environment'), {
  /** Which state field changed (`execution_status`, `stats`, ...) or `full_state` for a snapshot. */
  key: Type.Optional(Type.String()),
  value: Type.Optional(Type.Unknown()),
});
export type ConversationStateUpdateEvent = Static<typeof ConversationStateUpdateEvent>;

export const LLMCompletionLogEvent = event('LLMCompletionLogEvent', sourceDefault('environment'), {
  /** File name relative to a log directory. */
  filename: Type.String(),
  /** JSON-encoded log content. */
  log_data: Type.String(),
  model_name: Type.Optional(Type.String({ default: 'unknown' })),
  usage_id: Type.Optional(Type.String({ default: 'default' })),
});
export type LLMCompletionLogEvent = Static<typeof LLMCompletionLogEvent>;

export const ActionEvent = event('ActionEvent', sourceDefault('agent'), {
  thought: Type.Array(TextContent),
  reasoning_content: Nullable(Type.String()),
  thinking_blocks: Type.Optional(Type.Array(AnyThinkingBlock, { default: [] })),
  responses_reasoning_item: Nullable(ReasoningItemModel),
  /** Null when the tool call could not be turned into an action. */
  action: Nullable(Action),
  tool_name: Type.String(),
  tool_call_id: Type.String(),
  /** The raw call; may carry fields (e.g. a predicted security_risk) that `action` does not. */
  tool_call: MessageToolCall,
  /** Groups the actions of one model response (parallel calls). */
  llm_response_id: Type.String(),
  security_risk: Type.Optional(Type.Union(SecurityRisk.anyOf, { default: 'UNKNOWN' })),
  critic_result: Nullable(CriticResult),
  /** About 10 words describing the action. */
  summary: Nullable(Type.String()),
});
export type ActionEvent = Static<typeof ActionEvent>;

export const MessageEvent = event('MessageEvent', EventSource, {
  llm_message: Message,
  /** Null when source is not `agent`. */
  llm_response_id: Nullable(Type.String()),
  activated_skills: Type.Optional(Type.Array(Type.String(), { default: [] })),
  /** Content added by the agent context (skills, repo instructions). */
  extended_content: Type.Optional(Type.Array(TextContent, { default: [] })),
  /** Origin in multi-agent use. */
  sender: Nullable(Type.String()),
  critic_result: Nullable(CriticResult),
});
export type MessageEvent = Static<typeof MessageEvent>;

/** A scaffold error (not model output); the conversation can continue. */
export const AgentErrorEvent = event('AgentErrorEvent', sourceDefault('agent'), {
  tool_name: Type.String(),
  tool_call_id: Type.String(),
  error: Type.String(),
  classification: Nullable(ErrorClassification),
});
export type AgentErrorEvent = Static<typeof AgentErrorEvent>;

export const ObservationEvent = event('ObservationEvent', sourceDefault('environment'), {
  tool_name: Type.String(),
  tool_call_id: Type.String(),
  observation: Observation,
  /** Id of the ActionEvent this observes. */
  action_id: Type.String(),
  extended_content: Type.Optional(Type.Array(TextContent, { default: [] })),
});
export type ObservationEvent = Static<typeof ObservationEvent>;

export const UserRejectObservation = event('UserRejectObservation', sourceDefault('environment'), {
  tool_name: Type.String(),
  tool_call_id: Type.String(),
  action_id: Type.String(),
  rejection_reason: Type.Optional(Type.String({ default: 'User rejected the action' })),
  /** `user` in confirmation mode, `hook` when a pre-tool hook blocked the action. */
  rejection_source: Type.Optional(Type.Union([Type.Literal('user'), Type.Literal('hook')], { default: 'user' })),
});
export type UserRejectObservation = Static<typeof UserRejectObservation>;

export const SystemPromptEvent = event('SystemPromptEvent', sourceDefault('agent'), {
  system_prompt: TextContent,
  tools: Type.Array(ToolDefinition),
  /** Per-conversation context (runtime info, repo context, secret names); second system content block. */
  dynamic_context: Nullable(TextContent),
});
export type SystemPromptEvent = Static<typeof SystemPromptEvent>;

export const TokenEvent = event('TokenEvent', EventSource, {
  prompt_token_ids: Type.Array(Type.Integer()),
  response_token_ids: Type.Array(Type.Integer()),
});
export type TokenEvent = Static<typeof TokenEvent>;

/**
 * The risks the conversation's security analyzer gave one batch of pending actions (OpenHands 1.58
 * `event/security.py`): recorded whenever an analyzer is set, whatever the confirmation policy then
 * decides. Not sent to the model.
 */
export const SecurityAnalysisEvent = event('SecurityAnalysisEvent', sourceDefault('environment'), {
  /** The analyzer's kind, e.g. `PatternSecurityAnalyzer`. */
  analyzer: Type.String(),
  /** The confirmation policy's kind in force when the actions were analyzed. */
  policy: Type.String(),
  /** Risk per analyzed ActionEvent id. */
  risks: Type.Record(Type.String(), Type.Union(SecurityRisk.anyOf)),
  /** Analyzer-specific detail per ActionEvent id (an analyzer error's message). */
  details: Type.Optional(Type.Record(Type.String(), JsonObject, { default: {} })),
});
export type SecurityAnalysisEvent = Static<typeof SecurityAnalysisEvent>;

/** A user paused agent execution. */
export const PauseEvent = event('PauseEvent', sourceDefault('user'), {});
export type PauseEvent = Static<typeof PauseEvent>;

/** A user interrupted the in-flight LLM call (OpenHands `/interrupt`). */
export const InterruptEvent = event('InterruptEvent', sourceDefault('user'), {});
export type InterruptEvent = Static<typeof InterruptEvent>;

export const HookEventType = Type.Union([
  Type.Literal('PreToolUse'),
  Type.Literal('PostToolUse'),
  Type.Literal('UserPromptSubmit'),
  Type.Literal('SessionStart'),
  Type.Literal('SessionEnd'),
  Type.Literal('Stop'),
]);
export type HookEventType = Static<typeof HookEventType>;

/** One hook command ran. */
export const HookExecutionEvent = event('HookExecutionEvent', sourceDefault('hook'), {
  hook_event_type: HookEventType,
  hook_command: Type.String(),
  tool_name: Nullable(Type.String()),
  success: Type.Boolean(),
  blocked: Type.Optional(Type.Boolean({ default: false })),
  exit_code: Type.Integer(),
  stdout: Type.Optional(Type.String({ default: '' })),
  stderr: Type.Optional(Type.String({ default: '' })),
  reason: Nullable(Type.String()),
  additional_context: Nullable(Type.String()),
  error: Nullable(Type.String()),
  action_id: Nullable(Type.String()),
  message_id: Nullable(Type.String()),
  hook_input: Nullable(JsonObject),
});
export type HookExecutionEvent = Static<typeof HookExecutionEvent>;

/**
 * A tool call an ACP server ran (OpenHands 1.58): one when it starts, one when it reaches a final
 * status (completed/failed), same `tool_call_id`; the last one seen is authoritative.
 */
export const ACPToolCallEvent = event('ACPToolCallEvent', sourceDefault('agent'), {
  tool_call_id: Type.String(),
  title: Type.String(),
  status: Nullable(Type.String()),
  tool_kind: Nullable(Type.String()),
  raw_input: Type.Optional(Type.Unknown()),
  raw_output: Type.Optional(Type.Unknown()),
  content: Nullable(Type.Array(Type.Unknown())),
  is_error: Type.Optional(Type.Boolean({ default: false })),
});
export type ACPToolCallEvent = Static<typeof ACPToolCallEvent>;

/** Persisted event kinds, in spec order, then the newer OpenHands kinds. */
export const EVENT_SCHEMAS = {
  Condensation,
  CondensationRequest,
  CondensationSummaryEvent,
  ConversationErrorEvent,
  ConversationStateUpdateEvent,
  LLMCompletionLogEvent,
  ActionEvent,
  MessageEvent,
  AgentErrorEvent,
  ObservationEvent,
  UserRejectObservation,
  SystemPromptEvent,
  TokenEvent,
  SecurityAnalysisEvent,
  PauseEvent,
  InterruptEvent,
  HookExecutionEvent,
  ACPToolCallEvent,
} as const;

export const Event = Type.Union([
  Condensation,
  CondensationRequest,
  CondensationSummaryEvent,
  ConversationErrorEvent,
  ConversationStateUpdateEvent,
  LLMCompletionLogEvent,
  ActionEvent,
  MessageEvent,
  AgentErrorEvent,
  ObservationEvent,
  UserRejectObservation,
  SystemPromptEvent,
  TokenEvent,
  SecurityAnalysisEvent,
  PauseEvent,
  InterruptEvent,
  HookExecutionEvent,
  ACPToolCallEvent,
]);
export type Event = Static<typeof Event>;
export type EventKind = Event['kind'];

// WebSocket-only events: never persisted, not in the REST `Event` union.

/** Server-side failure handling a client frame on the events socket. */
export const ServerErrorEvent = event('ServerErrorEvent', EventSource, {
  code: Type.String(),
  detail: Type.String(),
});
export type ServerErrorEvent = Static<typeof ServerErrorEvent>;

/** Token deltas, sent only when an LLM streams. */
export const StreamingDeltaEvent = event('StreamingDeltaEvent', sourceDefault('agent'), {
  content: Nullable(Type.String()),
  reasoning_content: Nullable(Type.String()),
});
export type StreamingDeltaEvent = Static<typeof StreamingDeltaEvent>;

/** Anything a client can receive on `/sockets/events/{id}`. */
export const SocketEvent = Type.Union([Event, ServerErrorEvent, StreamingDeltaEvent]);
export type SocketEvent = Static<typeof SocketEvent>;
