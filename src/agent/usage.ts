// Usage and cost accumulated per conversation, in the OpenHands `stats` shape
// (ConversationStats.usage_to_metrics, keyed by the usage id of the LLM that made the calls: the
// agent LLM's `usage_id` (`default` unless the request names one), the condenser LLM's,
// `ask-agent-llm` for side questions, `classifier:<profile>` / `profile:<name>` for routing).
import type { ConversationStats } from '../api/agent-server/index.ts';
import type { Event } from '../api/events/index.ts';
import type { CallUsage } from './llm/client.ts';

export type Usage = CallUsage;

export const ZERO_USAGE: Usage = { promptTokens: 0, completionTokens: 0, cacheReadTokens: 0, reasoningTokens: 0, cost: 0 };

export function addUsage(a: Usage, b: Usage): Usage {
  return {
    promptTokens: a.promptTokens + b.promptTokens,
    completionTokens: a.completionTokens + b.completionTokens,
    cacheReadTokens: a.cacheReadTokens + b.cacheReadTokens,
    reasoningTokens: a.reasoningTokens + b.reasoningTokens,
    cost: a.cost + b.cost,
  };
}

/**
 * The cost the endpoint reported (LiteLLM proxy, OpenRouter), else one from the per-token prices of
 * the request's LLM settings (`input_cost_per_token`, `output_cost_per_token`), else 0.
 */
export function priced(u: Usage, prices: { input_cost_per_token?: number | null; output_cost_per_token?: number | null } | undefined): Usage {
  if (u.cost > 0 || !prices) return u;
  const cost = u.promptTokens * (prices.input_cost_per_token ?? 0) + u.completionTokens * (prices.output_cost_per_token ?? 0);
  return cost > 0 ? { ...u, cost } : u;
}

/**
 * Which of the conversation's LLMs made a call: the agent's, the condenser's (summaries), ask_agent's
 * (side questions). The bucket it counts in is that LLM's usage id (ModelCalls resolves it).
 */
export type UsageBucket = 'agent' | 'condenser' | 'ask-agent-llm';

/** The usage id an LLM without one has (OpenHands' LLM.usage_id default). */
export const DEFAULT_USAGE_ID = 'default';

export interface BucketMetrics {
  model_name: string;
  accumulated_cost: number;
  max_budget_per_task: number | null;
  accumulated_token_usage: {
    model: string;
    prompt_tokens: number;
    completion_tokens: number;
    cache_read_tokens: number;
    cache_write_tokens: number;
    reasoning_tokens: number;
    context_window: number;
    per_turn_token: number;
    response_id: string;
  };
}

export interface StatsValue {
  /** Per bucket; also `task:<task id>` for what a sub-agent of the task tool used (as OpenHands keys it). */
  usage_to_metrics: Record<string, BucketMetrics>;
}

/** A sub-agent's usage over its buckets in one entry (OpenHands' get_combined_metrics). */
export function combinedMetrics(stats: StatsValue | undefined): BucketMetrics | undefined {
  const all = Object.values(stats?.usage_to_metrics ?? {}).filter((m): m is BucketMetrics => m !== undefined);
  if (!all.length) return undefined;
  const first = all[0]!;
  const sum = (f: (m: BucketMetrics) => number) => all.reduce((n, m) => n + f(m), 0);
  const t = (k: 'prompt_tokens' | 'completion_tokens' | 'cache_read_tokens' | 'cache_write_tokens' | 'reasoning_tokens') => sum((m) => m.accumulated_token_usage[k]);
  return {
    model_name: first.model_name,
    accumulated_cost: sum((m) => m.accumulated_cost),
    max_budget_per_task: first.max_budget_per_task,
    accumulated_token_usage: {
      ...first.accumulated_token_usage,
      prompt_tokens: t('prompt_tokens'),
      completion_tokens: t('completion_tokens'),
      cache_read_tokens: t('cache_read_tokens'),
      cache_write_tokens: t('cache_write_tokens'),
      reasoning_tokens: t('reasoning_tokens'),
    },
  };
}

export interface BucketState {
  total: Usage;
  /** The bucket's last call: its size and response id (unknown after a restart). */
  last?: { usage: Usage; responseId: string };
}

/** A usage id's bucket: the model its calls went to, totals so far plus its last turn. */
export interface NamedBucket {
  model: string;
  state: BucketState;
}

/** A bucket that counted nothing yet (OpenHands lists a registered LLM at zero before its first call). */
export function isEmpty(b: BucketState): boolean {
  return !b.last && Object.values(b.total).every((v) => v === 0);
}

/** The `stats` value of the given buckets (by usage id), each with its model and the run's budget. */
export function statsValue(buckets: Record<string, NamedBucket>, budget: number | null = null): StatsValue {
  const usage_to_metrics: StatsValue['usage_to_metrics'] = {};
  for (const [name, { model, state: b }] of Object.entries(buckets)) {
    usage_to_metrics[name] = {
      model_name: model,
      accumulated_cost: b.total.cost,
      max_budget_per_task: budget,
      accumulated_token_usage: {
        model,
        prompt_tokens: b.total.promptTokens,
        completion_tokens: b.total.completionTokens,
        cache_read_tokens: b.total.cacheReadTokens,
        cache_write_tokens: 0,
        reasoning_tokens: b.total.reasoningTokens,
        // Unknown for an arbitrary OpenAI-compatible endpoint.
        context_window: 0,
        per_turn_token: b.last ? b.last.usage.promptTokens + b.last.usage.completionTokens : 0,
        response_id: b.last?.responseId ?? '',
      },
    };
  }
  return { usage_to_metrics };
}

/**
 * A bucket's usage so far, from the conversation's recorded `stats` (the agent may be re-created
 * after a restart; a fork starts from zero or from its source's totals, whatever its copied events say).
 */
export function usageFromStats(stats: ConversationStats | null | undefined, bucket: string): Usage {
  const m = stats?.usage_to_metrics?.[bucket];
  if (!m) return ZERO_USAGE;
  const t = m.accumulated_token_usage ?? {};
  return {
    promptTokens: t.prompt_tokens ?? 0,
    completionTokens: t.completion_tokens ?? 0,
    cacheReadTokens: t.cache_read_tokens ?? 0,
    reasoningTokens: t.reasoning_tokens ?? 0,
    cost: m.accumulated_cost ?? 0,
  };
}

/** The value of the last `stats` state update: what a host that keeps no stats of its own records (test hosts). */
export function lastStats(events: readonly Event[]): StatsValue | null {
  for (let i = events.length - 1; i >= 0; i--) {
    const e = events[i]!;
    if (e.kind === 'ConversationStateUpdateEvent' && e.key === 'stats') return (e.value as StatsValue | undefined) ?? null;
  }
  return null;
}
