// Event kind names and how a `kind` filter may be spelled (reference §1.4 and §2.1).
// On the wire `kind` is the short class name. OpenHands' search filter wants the fully-qualified
// Python class path, and its OpenAPI discriminator mapping uses namespaced keys such as
// `openhands__sdk__event__llm_convertible__message__MessageEvent-Output__1`. We accept all three.
import type { EventKind } from './events.ts';

/** Short kind name → OpenHands fully-qualified Python class path. */
export const EVENT_KIND_FQCN = {
  Condensation: 'openhands.sdk.event.condenser.Condensation',
  CondensationRequest: 'openhands.sdk.event.condenser.CondensationRequest',
  CondensationSummaryEvent: 'openhands.sdk.event.condenser.CondensationSummaryEvent',
  ConversationErrorEvent: 'openhands.sdk.event.conversation_error.ConversationErrorEvent',
  ConversationStateUpdateEvent: 'openhands.sdk.event.conversation_state.ConversationStateUpdateEvent',
  LLMCompletionLogEvent: 'openhands.sdk.event.llm_completion_log.LLMCompletionLogEvent',
  ActionEvent: 'openhands.sdk.event.llm_convertible.action.ActionEvent',
  MessageEvent: 'openhands.sdk.event.llm_convertible.message.MessageEvent',
  AgentErrorEvent: 'openhands.sdk.event.llm_convertible.observation.AgentErrorEvent',
  ObservationEvent: 'openhands.sdk.event.llm_convertible.observation.ObservationEvent',
  UserRejectObservation: 'openhands.sdk.event.llm_convertible.observation.UserRejectObservation',
  SystemPromptEvent: 'openhands.sdk.event.llm_convertible.system.SystemPromptEvent',
  TokenEvent: 'openhands.sdk.event.token.TokenEvent',
  SecurityAnalysisEvent: 'openhands.sdk.event.security.SecurityAnalysisEvent',
  PauseEvent: 'openhands.sdk.event.user_action.PauseEvent',
  InterruptEvent: 'openhands.sdk.event.user_action.InterruptEvent',
  HookExecutionEvent: 'openhands.sdk.event.hook_execution.HookExecutionEvent',
  ACPToolCallEvent: 'openhands.sdk.event.acp_tool_call.ACPToolCallEvent',
} as const satisfies Record<EventKind, string>;

/** Every persisted event kind (the `Event` union), spec order first. */
export const EVENT_KINDS = Object.keys(EVENT_KIND_FQCN) as EventKind[];

const KIND_SET: ReadonlySet<string> = new Set(EVENT_KINDS);

export function isEventKind(kind: unknown): kind is EventKind {
  return typeof kind === 'string' && KIND_SET.has(kind);
}

/** The schema version in the discriminator mapping keys (spec part 9 rule 3); bumped when a kind's wire shape breaks. */
export const KIND_SCHEMA_VERSION = 1;

/** The versioned OpenAPI discriminator key of a class path, as OpenHands spells it. */
export function namespacedClass(classPath: string): string {
  return `${classPath.replaceAll('.', '__')}-Output__${KIND_SCHEMA_VERSION}`;
}

/** The OpenAPI discriminator key OpenHands uses for a kind. */
export function namespacedKind(kind: EventKind): string {
  return namespacedClass(EVENT_KIND_FQCN[kind]);
}

/**
 * The short kind a filter names, or undefined when the filter names no kind we know.
 * Accepts `MessageEvent`, `openhands.sdk.event.llm_convertible.message.MessageEvent`, and
 * `openhands__sdk__event__llm_convertible__message__MessageEvent-Output__1` (or `-Input__1`).
 * A dotted path must be the kind's real module path; a wrong module names nothing.
 */
export function normalizeEventKind(filter: string): EventKind | undefined {
  const f = filter.trim();
  if (isEventKind(f)) return f;
  const dotted = f.replace(/-(Input|Output)__\d+$/, '').replaceAll('__', '.');
  const short = dotted.slice(dotted.lastIndexOf('.') + 1);
  if (!isEventKind(short)) return undefined;
  return EVENT_KIND_FQCN[short] === dotted ? short : undefined;
}

/** Whether an event of `kind` matches a `kind` filter written in any of the three spellings. */
export function eventKindMatches(filter: string, kind: string): boolean {
  if (filter === kind) return true;
  return normalizeEventKind(filter) === kind;
}
