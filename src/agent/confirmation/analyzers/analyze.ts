// One batch of pending actions through the conversation's security analyzer (OpenHands 1.58
// `SecurityAnalyzerBase.analyze_actions`): a risk per action, and the error behind a failed one.
// An analyzer that throws makes its action HIGH (fail closed); inside an ensemble, the failing child
// contributes HIGH and the others still count. Remote analyzers (GraySwan, ToolShield) turn their own
// failures into UNKNOWN before that, as 1.58's do.
import type { LeafSecurityAnalyzer, SecurityAnalyzer, ToolShieldLLMSecurityAnalyzer } from '../../../api/agent-server/index.ts';
import type { ActionEvent, SecurityRisk } from '../../../api/events/index.ts';
import { conversationLlm } from '../../llm/model-name.ts';
import type { LlmConfig } from '../../types.ts';
import { grayswanRisk } from './grayswan.ts';
import { patternRisk } from './pattern.ts';
import { railRisk } from './rails.ts';
import { Guardrail } from './toolshield.ts';

export interface Analysis {
  risk: SecurityRisk;
  details?: Record<string, unknown>;
}

const LEVEL = { LOW: 1, MEDIUM: 2, HIGH: 3 } as const;

/**
 * What lives as long as the conversation's agent: ToolShield's guardrails with their action history
 * (1.58 keeps it on the analyzer instance; a new analyzer setting starts a new history).
 */
export class AnalyzerState {
  readonly #guardrails = new Map<string, Guardrail>();

  guardrail(s: ToolShieldLLMSecurityAnalyzer): Guardrail {
    // Keyed by the settings (key left out): the same settings keep their history, new ones start afresh.
    const key = JSON.stringify({ ...s, llm: { ...s.llm, api_key: undefined } });
    let g = this.#guardrails.get(key);
    if (!g) {
      const llm: LlmConfig | undefined = conversationLlm(s.llm, undefined);
      if (!llm) throw new Error('ToolShieldLLMSecurityAnalyzer: llm.model is required');
      g = new Guardrail(llm, { ...(s.history_window !== undefined ? { historyWindow: s.history_window } : {}), ...(s.safety_experiences !== undefined ? { safetyExperiences: s.safety_experiences } : {}) });
      this.#guardrails.set(key, g);
    }
    return g;
  }
}

async function leafRisk(a: LeafSecurityAnalyzer, action: ActionEvent, state: AnalyzerState, signal?: AbortSignal): Promise<SecurityRisk> {
  switch (a.kind) {
    case 'LLMSecurityAnalyzer':
      return action.security_risk ?? 'UNKNOWN';
    case 'PatternSecurityAnalyzer':
      return (await patternRisk(a, action)).risk;
    case 'PolicyRailSecurityAnalyzer':
      return (await railRisk(action)).risk;
    case 'GraySwanAnalyzer':
      return grayswanRisk(a, action, signal);
    case 'ToolShieldLLMSecurityAnalyzer':
      return state.guardrail(a).risk(action, signal);
  }
}

/** Worst concrete risk of the children; UNKNOWN only when all are (or, with propagate_unknown, when any is). */
export function fuse(risks: readonly SecurityRisk[], propagateUnknown: boolean): SecurityRisk {
  if (propagateUnknown && risks.includes('UNKNOWN')) return 'UNKNOWN';
  const concrete = risks.filter((r): r is keyof typeof LEVEL => r !== 'UNKNOWN');
  if (!concrete.length) return 'UNKNOWN';
  return concrete.reduce((a, b) => (LEVEL[b] > LEVEL[a] ? b : a));
}

export async function actionRisk(a: SecurityAnalyzer, action: ActionEvent, state: AnalyzerState, signal?: AbortSignal): Promise<SecurityRisk> {
  if (a.kind !== 'EnsembleSecurityAnalyzer') return leafRisk(a, action, state, signal);
  const risks: SecurityRisk[] = [];
  // In order, as 1.58 (a ToolShield child's history must see the actions in order).
  for (const child of a.analyzers) risks.push(await leafRisk(child, action, state, signal).catch((): SecurityRisk => 'HIGH'));
  return fuse(risks, a.propagate_unknown ?? false);
}

/** Each action's analysis, in order. */
export async function analyzeActions(a: SecurityAnalyzer, actions: readonly ActionEvent[], state: AnalyzerState, signal?: AbortSignal): Promise<Map<string, Analysis>> {
  const out = new Map<string, Analysis>();
  for (const action of actions) {
    try {
      out.set(action.id, { risk: await actionRisk(a, action, state, signal) });
    } catch (err) {
      out.set(action.id, { risk: 'HIGH', details: { error: err instanceof Error ? err.message : String(err) } });
    }
  }
  return out;
}
