// The OpenAI-compatible gateway of the agent server (OpenHands 1.58 `openai/models.py`): the agent
// offered as a model. A chat-completions or responses request becomes a conversation whose run's
// final answer is the reply. Requests keep only what the gateway reads (other fields are ignored,
// as Pydantic's `extra="ignore"`); responses are the OpenAI shapes the official clients parse.
import Type, { type Static } from 'typebox';
import { Nullable } from '../events/common.ts';

/** Model ids are `openhands_<LLM profile name>`. */
export const GATEWAY_MODEL_PREFIX = 'openhands_';
/** Header naming the conversation behind a reply; sent back by a client to continue it (chat completions). */
export const GATEWAY_CONVERSATION_HEADER = 'x-openhands-serverconversation-id';

export const ChatContentPart = Type.Object({
  type: Type.String(),
  text: Nullable(Type.String()),
  image_url: Nullable(Type.Union([Type.Object({ url: Type.String() }), Type.String()])),
});

export const ChatMessage = Type.Object({
  role: Type.Union([Type.Literal('system'), Type.Literal('developer'), Type.Literal('user'), Type.Literal('assistant'), Type.Literal('tool')]),
  content: Nullable(Type.Union([Type.String(), Type.Array(ChatContentPart)])),
});
export type ChatMessage = Static<typeof ChatMessage>;

export const ChatCompletionRequest = Type.Object({
  model: Type.String(),
  messages: Type.Array(ChatMessage),
  stream: Type.Optional(Type.Boolean({ default: false })),
  stream_options: Nullable(Type.Object({ include_usage: Type.Optional(Type.Boolean({ default: false })) })),
});
export type ChatCompletionRequest = Static<typeof ChatCompletionRequest>;

export const ResponseInputContentPart = Type.Object({
  type: Type.String(),
  text: Nullable(Type.String()),
  image_url: Nullable(Type.String()),
});

export const ResponseInputMessage = Type.Object({
  role: Type.Union([Type.Literal('system'), Type.Literal('developer'), Type.Literal('user'), Type.Literal('assistant')]),
  content: Type.Union([Type.String(), Type.Array(ResponseInputContentPart)]),
});
export type ResponseInputMessage = Static<typeof ResponseInputMessage>;

export const ResponseRequest = Type.Object({
  model: Type.String(),
  input: Type.Union([Type.String(), Type.Array(ResponseInputMessage)]),
  instructions: Nullable(Type.String()),
  previous_response_id: Nullable(Type.String()),
  store: Type.Optional(Type.Boolean({ default: false })),
  stream: Type.Optional(Type.Boolean({ default: false })),
  metadata: Nullable(Type.Record(Type.String(), Type.String())),
});
export type ResponseRequest = Static<typeof ResponseRequest>;

export const OpenAIModel = Type.Object({
  id: Type.String(),
  created: Type.Integer(),
  object: Type.Literal('model'),
  owned_by: Type.String(),
});
export const ModelList = Type.Object({ object: Type.Literal('list'), data: Type.Array(OpenAIModel) });
export type ModelList = Static<typeof ModelList>;

export const CompletionUsage = Type.Object({ completion_tokens: Type.Integer(), prompt_tokens: Type.Integer(), total_tokens: Type.Integer() });
export type CompletionUsage = Static<typeof CompletionUsage>;

export const ChatCompletion = Type.Object({
  id: Type.String(),
  choices: Type.Array(
    Type.Object({
      finish_reason: Type.Literal('stop'),
      index: Type.Integer(),
      message: Type.Object({ content: Type.String(), role: Type.Literal('assistant') }),
    }),
  ),
  created: Type.Integer(),
  model: Type.String(),
  object: Type.Literal('chat.completion'),
  usage: CompletionUsage,
});
export type ChatCompletion = Static<typeof ChatCompletion>;

export const ResponseUsage = Type.Object({
  input_tokens: Type.Integer(),
  input_tokens_details: Type.Object({ cached_tokens: Type.Integer() }),
  output_tokens: Type.Integer(),
  output_tokens_details: Type.Object({ reasoning_tokens: Type.Integer() }),
  total_tokens: Type.Integer(),
});

export const OpenAIResponse = Type.Object({
  id: Type.String(),
  created_at: Type.Number(),
  completed_at: Type.Number(),
  instructions: Type.Optional(Type.String()),
  metadata: Type.Optional(Type.Record(Type.String(), Type.String())),
  model: Type.String(),
  object: Type.Literal('response'),
  output: Type.Array(
    Type.Object({
      id: Type.String(),
      content: Type.Array(Type.Object({ annotations: Type.Array(Type.Record(Type.String(), Type.Unknown())), text: Type.String(), type: Type.Literal('output_text') })),
      role: Type.Literal('assistant'),
      status: Type.Literal('completed'),
      type: Type.Literal('message'),
    }),
  ),
  parallel_tool_calls: Type.Boolean(),
  status: Type.Literal('completed'),
  tool_choice: Type.Literal('none'),
  tools: Type.Array(Type.Record(Type.String(), Type.String())),
  usage: ResponseUsage,
});
export type OpenAIResponse = Static<typeof OpenAIResponse>;
