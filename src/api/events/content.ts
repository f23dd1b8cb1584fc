// Content blocks and LLM message types nested inside events (spec part 2, "Nested types").
import Type, { type Static } from 'typebox';
import { JsonObject, Nullable, STRICT } from './common.ts';

export const TextContent = Type.Object(
  {
    cache_prompt: Type.Optional(Type.Boolean({ default: false })),
    type: Type.Optional(Type.Literal('text', { default: 'text' })),
    text: Type.String(),
  },
  STRICT,
);
export type TextContent = Static<typeof TextContent>;

/** Images are passed as URLs (http(s) or `data:` URLs). */
export const ImageContent = Type.Object(
  {
    cache_prompt: Type.Optional(Type.Boolean({ default: false })),
    type: Type.Optional(Type.Literal('image', { default: 'image' })),
    image_urls: Type.Array(Type.String()),
  },
  STRICT,
);
export type ImageContent = Static<typeof ImageContent>;

export const ThinkingBlock = Type.Object(
  {
    type: Type.Optional(Type.Literal('thinking', { default: 'thinking' })),
    thinking: Type.String(),
    signature: Nullable(Type.String()),
  },
  STRICT,
);
export type ThinkingBlock = Static<typeof ThinkingBlock>;

export const RedactedThinkingBlock = Type.Object(
  {
    type: Type.Optional(Type.Literal('redacted_thinking', { default: 'redacted_thinking' })),
    data: Type.String(),
  },
  STRICT,
);
export type RedactedThinkingBlock = Static<typeof RedactedThinkingBlock>;

export const AnyThinkingBlock = Type.Union([ThinkingBlock, RedactedThinkingBlock]);
export type AnyThinkingBlock = Static<typeof AnyThinkingBlock>;

/** OpenAI Responses API reasoning item. `encrypted_content` is never logged or rendered. */
export const ReasoningItemModel = Type.Object(
  {
    id: Nullable(Type.String()),
    summary: Type.Optional(Type.Array(Type.String(), { default: [] })),
    content: Nullable(Type.Array(Type.String())),
    encrypted_content: Nullable(Type.String()),
    status: Nullable(Type.String()),
  },
  STRICT,
);
export type ReasoningItemModel = Static<typeof ReasoningItemModel>;

export const MessageToolCall = Type.Object(
  {
    id: Type.String(),
    name: Type.String(),
    /** The raw JSON string the model produced. */
    arguments: Type.String(),
    origin: Type.Union([Type.Literal('completion'), Type.Literal('responses')]),
    responses_item_id: Nullable(Type.String()),
  },
  STRICT,
);
export type MessageToolCall = Static<typeof MessageToolCall>;

/** Ordered: UNKNOWN < LOW < MEDIUM < HIGH. */
export const SECURITY_RISKS = ['UNKNOWN', 'LOW', 'MEDIUM', 'HIGH'] as const;
export const SecurityRisk = Type.Union([
  Type.Literal('UNKNOWN'),
  Type.Literal('LOW'),
  Type.Literal('MEDIUM'),
  Type.Literal('HIGH'),
]);
export type SecurityRisk = Static<typeof SecurityRisk>;

export const CriticResult = Type.Object(
  {
    score: Type.Number({ minimum: 0, maximum: 1 }),
    message: Type.Union([Type.String(), Type.Null()]),
    metadata: Nullable(JsonObject),
  },
  STRICT,
);
export type CriticResult = Static<typeof CriticResult>;

export const MessageContent = Type.Union([TextContent, ImageContent]);
export type MessageContent = Static<typeof MessageContent>;

export const Message = Type.Object(
  {
    role: Type.Union([Type.Literal('user'), Type.Literal('system'), Type.Literal('assistant'), Type.Literal('tool')]),
    content: Type.Optional(Type.Array(MessageContent, { default: [] })),
    tool_calls: Nullable(Type.Array(MessageToolCall)),
    tool_call_id: Nullable(Type.String()),
    name: Nullable(Type.String()),
    reasoning_content: Nullable(Type.String()),
    thinking_blocks: Type.Optional(Type.Array(AnyThinkingBlock, { default: [] })),
    responses_reasoning_item: Nullable(ReasoningItemModel),
  },
  STRICT,
);
export type Message = Static<typeof Message>;

/** Error classification attached to error events (OpenHands `event/error_classification.py`). */
export const FailureKind = Type.Union([
  Type.Literal('auth'),
  Type.Literal('quota'),
  Type.Literal('rate_limit'),
  Type.Literal('config'),
  Type.Literal('transient'),
  Type.Literal('agent_action'),
  Type.Literal('internal'),
  Type.Literal('unknown'),
]);
export type FailureKind = Static<typeof FailureKind>;

export const ErrorClassification = Type.Object(
  {
    kind: FailureKind,
    retryable: Type.Boolean(),
    user_action: Type.Optional(
      Type.Union([Type.Literal('none'), Type.Literal('retry'), Type.Literal('settings')], { default: 'none' }),
    ),
    error_id: Nullable(Type.String()),
  },
  STRICT,
);
export type ErrorClassification = Static<typeof ErrorClassification>;
