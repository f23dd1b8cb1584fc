// Condensation as the agent runs it: the condenser the start request configures, and one
// condensation (the model summarizes the forgotten events, not streamed, then a Condensation is recorded).
import type { ErrorClassification, Event } from '../../api/events/index.ts';
import type { ModelClient } from '../llm/client.ts';
import type { ModelCalls } from '../model-calls.ts';
import type { AgentHost } from '../types.ts';
import { condensationEvent, condenserConfig, CondenserConfigError, planCondensation, shrinkLimit, SUMMARY_RETRIES, summaryMessages, type CondensationNeed, type CondenserConfig } from './summarizing.ts';
import type { View } from './view.ts';

/** The configured condenser; false once an unusable configuration ended the run with an error (`fail`). */
export function configuredCondenser(host: AgentHost, fail: (code: string, detail: string, classification?: ErrorClassification) => void): CondenserConfig | undefined | false {
  try {
    return condenserConfig(host.request.agent?.condenser);
  } catch (err) {
    if (!(err instanceof CondenserConfigError)) throw err;
    fail('CondenserConfigError', err.message, { kind: 'config', retryable: false, user_action: 'settings' });
    return false;
  }
}

/** One condensation; 'stop' when the summary call ended the run. */
export async function condenseOnce(calls: ModelCalls, model: ModelClient, view: View, cfg: CondenserConfig, need: CondensationNeed, signal: AbortSignal, emit: (e: Event) => void): Promise<'condensed' | 'nothing' | 'stop'> {
  const forget = planCondensation(view, cfg, need);
  if (!forget) return 'nothing';
  // A summary request that does not fit is retried with shorter event texts (OpenHands' hard reset scaling).
  for (let attempt = 0, limit = Infinity; ; attempt++) {
    const summary = await calls.call(model, summaryMessages(forget.forgotten, limit), [], signal, { stream: false, condensable: attempt < (cfg.retries ?? SUMMARY_RETRIES), bucket: 'condenser' });
    if (summary === 'condense') {
      limit = shrinkLimit(forget.forgotten, limit, cfg.scaling);
      continue;
    }
    if (!summary) return 'stop';
    emit(condensationEvent(forget, summary));
    calls.viewTokens = undefined;
    return 'condensed';
  }
}
