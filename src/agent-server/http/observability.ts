// The X-OpenHands-Observability-* request headers (OpenHands 1.58): a start request's observability
// fields given as headers, by POST /api/conversations and the OpenAI-compatible gateway. Validated as
// those fields are, with 422 issues located at the header.
import Type from 'typebox';
import { OBSERVABILITY_HEADERS, StartConversationRequest, TraceMetadataValue } from '../../api/agent-server/conversation.ts';
import { Invalid } from '../../api/errors.ts';
import { parseValue } from '../../api/events/validate.ts';

// The fourth, the parent span context (a trace to join), is accepted and unused: the agent server exports no traces.
const [SPAN, TAGS, METADATA] = OBSERVABILITY_HEADERS;

export type ObservabilityOverrides = Pick<StartConversationRequest, 'observability_span_name' | 'observability_tags' | 'observability_metadata'>;

/** The fields the headers set (absent headers set nothing). `get` reads a header ('' when absent). */
export function observabilityHeaders(get: (name: string) => string): ObservabilityOverrides {
  const out: ObservabilityOverrides = {};
  const span = get(SPAN);
  if (span) out.observability_span_name = parseValue(StartConversationRequest.properties.observability_span_name, span, { prefix: ['header', SPAN] });
  const tags = get(TAGS);
  if (tags) out.observability_tags = tags.split(',').map((t) => t.trim()).filter(Boolean);
  const metadata = get(METADATA);
  if (metadata) {
    let value: unknown;
    try {
      value = JSON.parse(metadata);
    } catch {
      throw new Invalid([{ loc: ['header', METADATA], msg: `${METADATA} must be a JSON object`, type: 'json_invalid' }]);
    }
    out.observability_metadata = parseValue(Type.Record(Type.String(), TraceMetadataValue), value, { prefix: ['header', METADATA] });
  }
  return out;
}

/**
 * A start request with the headers' fields, as OpenHands merges them: a span name or tags only where
 * the body gave none, metadata merged key by key with the body's winning.
 */
export function withObservabilityHeaders(req: StartConversationRequest, body: unknown, headers: ObservabilityOverrides): StartConversationRequest {
  const given = (k: string) => typeof body === 'object' && body !== null && k in body;
  return {
    ...req,
    ...(headers.observability_span_name && !given('observability_span_name') ? { observability_span_name: headers.observability_span_name } : {}),
    ...(headers.observability_tags && !given('observability_tags') ? { observability_tags: headers.observability_tags } : {}),
    ...(headers.observability_metadata ? { observability_metadata: { ...headers.observability_metadata, ...req.observability_metadata } } : {}),
  };
}
