// The push contract from an agent server to the application API's event sink.
// Agent servers POST every persisted event, in sequence order, and retry from the last
// acknowledged sequence number; the sink stores by (conversation, seq) and event id, so a replay
// is harmless. This replaces OpenHands' webhook queue, which drops the oldest events on overflow.
import Type, { type Static } from 'typebox';

/**
 * `POST {AGENTYARD_EVENT_SINK_URL}/events/{conversation_id}`, header `X-Session-API-Key: <sandbox key>`.
 * `event` is validated by the sink against the Event union (src/api/events).
 */
export const SinkEventBatch = Type.Object(
  {
    items: Type.Array(
      Type.Object(
        {
          /**
           * Per-conversation sequence number, 1, 2, 3, ... without gaps. 0 is the conversation's
           * full_state snapshot as its agent server took it (ConversationStateUpdateEvent, never
           * persisted there), sent once with the first batch: the app's log opens with it, as
           * OpenHands' does.
           */
          seq: Type.Integer({ minimum: 0 }),
          event: Type.Unknown(),
        },
        { additionalProperties: false },
      ),
      { maxItems: 500 },
    ),
  },
  { additionalProperties: false },
);
export type SinkEventBatch = Static<typeof SinkEventBatch>;

/**
 * The most a sink batch may weigh as JSON. The sink refuses larger bodies (413), so the pusher
 * fills a batch up to this many bytes as well as up to `maxItems`; one event alone is always sent
 * (agent-server messages are limited far below this).
 */
export const SINK_BATCH_MAX_BYTES = 16 * 1024 * 1024;

/** The sink answers with the highest sequence number it now holds without a gap. */
export const SinkAck = Type.Object({ acknowledged_seq: Type.Integer({ minimum: 0 }) });
export type SinkAck = Static<typeof SinkAck>;

/**
 * `POST {AGENTYARD_EVENT_SINK_URL}/conversations`: the conversation's summary after each change of
 * execution status or usage, so the app record can be reconciled without polling.
 */
export const SinkConversationUpdate = Type.Object({
  id: Type.String(),
  execution_status: Type.String(),
  title: Type.Optional(Type.Union([Type.String(), Type.Null()])),
  metrics: Type.Optional(Type.Unknown()),
  updated_at: Type.String(),
  /** While the run waits for the model provider's rate limit: until when (ISO); null or absent otherwise. */
  rate_limited_until: Type.Optional(Type.Union([Type.String(), Type.Null()])),
});
export type SinkConversationUpdate = Static<typeof SinkConversationUpdate>;

/** Environment variables a runtime sets for the agent server it starts. */
export const SINK_ENV = {
  url: 'AGENTYARD_EVENT_SINK_URL',
  /** The key the agent server presents to the sink; the sandbox session key. */
  key: 'AGENTYARD_EVENT_SINK_KEY',
} as const;
