// LLMSummarizingCondenser (OpenHands `context/condenser/llm_summarizing_condenser.py`): when the view
// holds more than `max_size` events, its tokens exceed the limit, or a CondensationRequest is
// unhandled, the events between the first `keep_first` and a kept tail are replaced by a summary the
// model writes.
import type { Event } from '../../api/events/index.ts';
import { newEventBase } from '../../api/events/index.ts';
import type { ChatMessage, Completion } from '../llm/client.ts';
import { contentText, observationText } from '../tools/output.ts';
import type { View } from './view.ts';

export interface CondenserConfig {
  maxSize: number;
  keepFirst: number;
  /** Condense only when at least this share of the view would go (OpenHands `minimum_progress`). */
  minimumProgress: number;
  /** Token limit of the view (`max_tokens`); the agent's `llm.max_input_tokens` applies too. */
  maxTokens?: number;
  /** Summary requests retried shorter after one does not fit (`hard_context_reset_max_retries`; default SUMMARY_RETRIES). */
  retries?: number;
  /** How much shorter each retry makes the event texts (`hard_context_reset_context_scaling`; default SUMMARY_SCALING). */
  scaling?: number;
}

/** OpenHands class defaults; also what POST /condense uses when no condenser is configured. */
export const DEFAULT_CONDENSER: CondenserConfig = { maxSize: 240, keepFirst: 2, minimumProgress: 0.1 };

/** Thrown for a condenser configuration the agent cannot use (ends the run with a ConversationErrorEvent). */
export class CondenserConfigError extends Error {}

/**
 * `agent.condenser` of the start request: undefined for none (null, NoOpCondenser). The summary is
 * written by the agent's own model (the condenser's `llm` is not used).
 */
export function condenserConfig(raw: Record<string, unknown> | null | undefined): CondenserConfig | undefined {
  if (raw == null || raw['kind'] === 'NoOpCondenser') return undefined;
  if (raw['kind'] !== 'LLMSummarizingCondenser') throw new CondenserConfigError(`Condenser kind ${JSON.stringify(raw['kind'])} is not supported; use LLMSummarizingCondenser or NoOpCondenser`);
  const int = (name: string, dflt: number) => {
    const v = raw[name] ?? dflt;
    if (typeof v !== 'number' || !Number.isInteger(v) || v < 0) throw new CondenserConfigError(`agent.condenser.${name} must be a non-negative integer`);
    return v;
  };
  const progress = raw['minimum_progress'] ?? DEFAULT_CONDENSER.minimumProgress;
  if (typeof progress !== 'number' || progress < 0 || progress >= 1) throw new CondenserConfigError('agent.condenser.minimum_progress must be a number in [0, 1)');
  const maxTokens = raw['max_tokens'] == null ? undefined : int('max_tokens', 0);
  const retries = raw['hard_context_reset_max_retries'] == null ? undefined : int('hard_context_reset_max_retries', SUMMARY_RETRIES);
  const scaling = raw['hard_context_reset_context_scaling'] ?? undefined;
  if (scaling !== undefined && (typeof scaling !== 'number' || scaling <= 0 || scaling >= 1)) throw new CondenserConfigError('agent.condenser.hard_context_reset_context_scaling must be a number in (0, 1)');
  const cfg = {
    maxSize: int('max_size', DEFAULT_CONDENSER.maxSize),
    keepFirst: int('keep_first', DEFAULT_CONDENSER.keepFirst),
    minimumProgress: progress,
    ...(maxTokens ? { maxTokens } : {}),
    ...(retries !== undefined && retries !== SUMMARY_RETRIES ? { retries } : {}),
    ...(scaling !== undefined && scaling !== SUMMARY_SCALING ? { scaling } : {}),
  };
  // OpenHands' validator: the kept tail must have room.
  if (Math.floor(cfg.maxSize / 2) - cfg.keepFirst - 1 <= 0) throw new CondenserConfigError('agent.condenser: max_size // 2 - keep_first - 1 must be positive');
  return cfg;
}

/**
 * Why the view should be condensed now. Tokens are measured without a tokenizer (arbitrary
 * endpoints): `promptTokens` is what the endpoint counted for the last agent call on this view.
 */
export interface CondensationNeed {
  request: boolean;
  events: boolean;
  tokens?: { prompt: number; limit: number };
}

export interface ViewTokens {
  /** Prompt tokens of the last agent call, if it was made on the current view. */
  promptTokens?: number;
  /** The model's `max_input_tokens`, if configured. */
  maxInputTokens?: number;
}

export function condensationNeed(view: View, cfg: CondenserConfig | undefined, measured: ViewTokens = {}): CondensationNeed | undefined {
  const limits = [cfg?.maxTokens, cfg ? measured.maxInputTokens : undefined].filter((n): n is number => typeof n === 'number' && n > 0);
  const limit = limits.length ? Math.min(...limits) : undefined;
  const prompt = measured.promptTokens;
  const need: CondensationNeed = {
    request: view.unhandledRequest,
    events: cfg !== undefined && view.events.length > cfg.maxSize,
    ...(limit !== undefined && prompt !== undefined && prompt > limit ? { tokens: { prompt, limit } } : {}),
  };
  return need.request || need.events || need.tokens ? need : undefined;
}

export interface CondensationPlan {
  forgotten: Event[];
  offset: number;
}

/**
 * Which events to forget: from `keep_first` up to a kept tail (half the target minus the head and
 * the summary; for tokens, the share of the view that brings them under half the limit; with
 * several reasons the shortest tail wins). A tool call and its answers, and the calls of one
 * response, go together; the system prompt and actions still waiting are never forgotten.
 * Undefined when less than `minimumProgress` of the view would go.
 */
export function planCondensation(view: View, cfg: CondenserConfig, need: CondensationNeed): CondensationPlan | undefined {
  const events = view.events;
  const tails: number[] = [];
  if (need.request) tails.push(Math.floor(events.length / 2) - cfg.keepFirst - 1);
  if (need.events) tails.push(Math.floor(cfg.maxSize / 2) - cfg.keepFirst - 1);
  if (need.tokens) tails.push(Math.floor(((events.length - cfg.keepFirst) * need.tokens.limit) / 2 / need.tokens.prompt));
  const tail = Math.max(0, Math.min(...tails));
  const start = Math.min(cfg.keepFirst, events.length);
  let end = Math.max(start, events.length - tail);
  // Actions still waiting (for confirmation, or left by a stopped run) stay, with their whole batch.
  const answered = new Set(events.flatMap((e) => (e.kind === 'ObservationEvent' || e.kind === 'AgentErrorEvent' || e.kind === 'UserRejectObservation' ? [e.tool_call_id] : [])));
  const waiting = events.findIndex((e, i) => i >= start && i < end && e.kind === 'ActionEvent' && !answered.has(e.tool_call_id));
  if (waiting >= 0) {
    const response = (events[waiting] as Extract<Event, { kind: 'ActionEvent' }>).llm_response_id;
    end = events.findIndex((e) => e.kind === 'ActionEvent' && e.llm_response_id === response);
  }
  const forget = new Set(events.slice(start, end).filter((e) => e.kind !== 'SystemPromptEvent').map((e) => e.id));
  // Keep tool calls atomic: grow the set until no call is split from its answers or its batch.
  for (let changed = true; changed; ) {
    changed = false;
    const calls = new Set<string>();
    const responses = new Set<string>();
    for (const e of events) {
      if (!forget.has(e.id)) continue;
      if ('tool_call_id' in e) calls.add(e.tool_call_id);
      if (e.kind === 'ActionEvent') responses.add(e.llm_response_id);
    }
    for (const e of events) {
      if (forget.has(e.id)) continue;
      if (('tool_call_id' in e && calls.has(e.tool_call_id)) || (e.kind === 'ActionEvent' && responses.has(e.llm_response_id))) {
        forget.add(e.id);
        changed = true;
      }
    }
  }
  const forgotten = events.filter((e) => forget.has(e.id));
  if (forgotten.length === 0 || forgotten.length < events.length * cfg.minimumProgress) return undefined;
  return { forgotten, offset: start };
}

/** One line per forgotten event, as the summarizer reads it. */
function describe(e: Event): string {
  switch (e.kind) {
    case 'MessageEvent':
      return `${e.source === 'user' ? 'USER' : e.source === 'agent' ? 'AGENT' : 'ENVIRONMENT'}: ${contentText(e.llm_message.content)}`;
    case 'ActionEvent':
      return `ACTION ${e.tool_name}${e.thought.length ? ` (thought: ${contentText(e.thought)})` : ''}: ${e.tool_call.arguments}`;
    case 'ObservationEvent':
      return `OBSERVATION of ${e.tool_name}: ${observationText(e.observation)}`;
    case 'AgentErrorEvent':
      return `ERROR of ${e.tool_name}: ${e.error}`;
    case 'UserRejectObservation':
      return `REJECTED ${e.tool_name}: ${e.rejection_reason ?? ''}`;
    case 'CondensationSummaryEvent':
      return `PREVIOUS SUMMARY: ${e.summary}`;
    default:
      return e.kind;
  }
}

/** How often a summary that does not fit the context is retried with shorter event texts, and by how much. */
export const SUMMARY_RETRIES = 5;
export const SUMMARY_SCALING = 0.8;

/** The per-event text limit for the next attempt after a summary request did not fit. */
export function shrinkLimit(forgotten: readonly Event[], limit: number, scaling = SUMMARY_SCALING): number {
  const longest = Math.max(0, ...forgotten.map((e) => describe(e).length));
  return Math.max(1, Math.floor(scaling * Math.min(limit, longest)));
}

/**
 * The summarizer's prompt, after OpenHands' `summarizing_prompt.j2`. `maxEventChars` shortens each
 * event's text (after a context-window error on the summary request itself).
 */
export function summaryMessages(forgotten: readonly Event[], maxEventChars = Infinity): ChatMessage[] {
  const clip = (line: string) => (line.length > maxEventChars ? `${line.slice(0, maxEventChars)} [truncated]` : line);
  const prompt = [
    'You are maintaining a context-aware state summary for an interactive software agent. The events below are about to be',
    'removed from its memory. Write a concise summary that lets the agent continue the task without them. Track:',
    'USER_CONTEXT: essential user requirements, goals and clarifications',
    'TASK_TRACKING: active tasks, with ids and statuses',
    'COMPLETED: tasks completed so far, with brief results',
    'PENDING: tasks that still need to be done',
    'CURRENT_STATE: current variables, data structures or relevant state',
    'CODE_STATE: file paths, function signatures, data structures',
    'TESTS: failing cases, error messages, outputs',
    'CHANGES: code edits, variable updates',
    'DEPS: dependencies, imports, external calls',
    'VERSION_CONTROL_STATUS: repository state, current branch, PR status, commit history',
    'Keep what a later step needs; drop chatter. A PREVIOUS SUMMARY among the events must be carried over.',
    '',
    '<EVENTS>',
    ...forgotten.map((e) => clip(describe(e))),
    '</EVENTS>',
    '',
    'Now summarize the events using the rules above.',
  ].join('\n');
  return [{ role: 'user', content: prompt }];
}

/** The Condensation event for a plan and the model's summary. */
export function condensationEvent(plan: CondensationPlan, completion: Completion): Extract<Event, { kind: 'Condensation' }> {
  return {
    ...newEventBase('environment'),
    forgotten_event_ids: plan.forgotten.map((e) => e.id),
    summary: completion.content ?? '',
    summary_offset: plan.offset,
    llm_response_id: completion.responseId,
    kind: 'Condensation',
  };
}
