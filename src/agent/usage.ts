// Usage and cost accumulated per conversation, in the OpenHands `stats` shape.
import type { Event } from '../api/events/index.ts';

export interface Usage {
  promptTokens: number;
  completionTokens: number;
  cacheReadTokens: number;
  reasoningTokens: number;
  cost: number;
}

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

export function statsValue(model: string, u: Usage) {
  return {
    usage_to_metrics: {
      agent: {
        model_name: model,
        accumulated_cost: u.cost,
        accumulated_token_usage: {
          model,
          prompt_tokens: u.promptTokens,
          completion_tokens: u.completionTokens,
          cache_read_tokens: u.cacheReadTokens,
          cache_write_tokens: 0,
          reasoning_tokens: u.reasoningTokens,
        },
      },
    },
  };
}

/** Usage so far, from the last `stats` state update (the agent may be re-created after a restart). */
export function usageFromEvents(events: readonly Event[]): Usage {
  for (let i = events.length - 1; i >= 0; i--) {
    const e = events[i]!;
    if (e.kind !== 'ConversationStateUpdateEvent' || e.key !== 'stats') continue;
    const m = (e.value as ReturnType<typeof statsValue> | undefined)?.usage_to_metrics?.agent;
    if (!m) break;
    const t = m.accumulated_token_usage;
    return { promptTokens: t.prompt_tokens ?? 0, completionTokens: t.completion_tokens ?? 0, cacheReadTokens: t.cache_read_tokens ?? 0, reasoningTokens: t.reasoning_tokens ?? 0, cost: m.accumulated_cost ?? 0 };
  }
  return ZERO_USAGE;
}
