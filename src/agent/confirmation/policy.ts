// Confirmation policies (OpenHands `security/confirmation_policy.py`, `agent.py::_requires_user_confirmation`)
// as an ActionGate. The risk of an action comes from the conversation's security analyzer and is
// recorded on its ActionEvent as `security_risk`:
// - with an analyzer set, the ActionEvent keeps the `security_risk` the model predicted with the call
//   (UNKNOWN when it sent none, and always for a read-only tool), and the analyzer's verdict on each
//   action of the batch is recorded in a SecurityAnalysisEvent (1.58), whatever the policy then does:
//   `LLMSecurityAnalyzer` takes the prediction; Pattern, PolicyRail, Ensemble, GraySwan and ToolShield
//   judge for themselves (analyzers/);
// - no analyzer: UNKNOWN for every action, as in OpenHands, whatever the model predicted, and no
//   SecurityAnalysisEvent. So ConfirmRisky without an analyzer confirms every batch (confirm_unknown,
//   the default) or none (confirm_unknown false).
//
// Confirming and rejecting (OpenHands semantics, kept here on purpose):
// - a batch that needs confirmation is recorded but not run; the status becomes waiting_for_confirmation;
// - the next run() executes the pending actions: `respond_to_confirmation {accept:true}` runs, and so does
//   a new user message sent with run:true (implicit confirmation; a message with run:false only waits);
// - `respond_to_confirmation {accept:false}` answers each pending action with a UserRejectObservation
//   (rejection_source `user`) and the status becomes idle: the agent does not continue until the user
//   sends a message or runs again, and the model then reads the rejections.
import type { ConfirmationPolicy, SecurityAnalyzer } from '../../api/agent-server/index.ts';
import type { ActionEvent, SecurityAnalysisEvent, SecurityRisk } from '../../api/events/index.ts';
import { newEventBase } from '../../api/events/index.ts';
import { Invalid } from '../../api/errors.ts';
import type { ActionGate } from '../gate.ts';
import { analyzeActions, type AnalyzerState } from './analyzers/analyze.ts';
import { grayswanCredentials } from './analyzers/grayswan.ts';

const LEVEL: Record<Exclude<SecurityRisk, 'UNKNOWN'>, number> = { LOW: 1, MEDIUM: 2, HIGH: 3 };

export const SECURITY_RISKS = ['LOW', 'MEDIUM', 'HIGH', 'UNKNOWN'] as const;

/** Whether one action's risk needs the user's confirmation under `policy`. */
export function riskNeedsConfirmation(policy: ConfirmationPolicy, risk: SecurityRisk): boolean {
  switch (policy.kind) {
    case 'NeverConfirm':
      return false;
    case 'AlwaysConfirm':
      return true;
    case 'ConfirmRisky':
      if (risk === 'UNKNOWN') return policy.confirm_unknown ?? true;
      return LEVEL[risk] >= LEVEL[policy.threshold ?? 'HIGH'];
  }
}

/** A lone finish or think never waits, and is not analyzed (nothing to approve). */
export function loneFinishOrThink(batch: readonly ActionEvent[]): boolean {
  return batch.length === 1 && (batch[0]!.action?.kind === 'FinishAction' || batch[0]!.action?.kind === 'ThinkAction');
}

/** Whether the batch waits, given each action's risk (the ActionEvent's own when `risks` is not given). */
export function batchNeedsConfirmation(policy: ConfirmationPolicy, batch: readonly ActionEvent[], risks?: ReadonlyMap<string, SecurityRisk>): boolean {
  if (loneFinishOrThink(batch)) return false;
  return batch.some((a) => riskNeedsConfirmation(policy, risks?.get(a.id) ?? a.security_risk ?? 'UNKNOWN'));
}

export interface ConfirmationInputs {
  /** Read at every batch: a policy or analyzer changed mid-conversation applies at once. */
  policy(): ConfirmationPolicy | undefined;
  analyzer(): SecurityAnalyzer | null | undefined;
  /** What the analyzers keep for the conversation (ToolShield's history). */
  state: AnalyzerState;
  /** Records the SecurityAnalysisEvent (before the actions run or wait, as 1.58 does). */
  record(event: SecurityAnalysisEvent): void;
}

/** The gate: analyze the batch when an analyzer is set, record the verdicts, then apply the policy. */
export function confirmationGate(inputs: ConfirmationInputs): ActionGate {
  return async (batch, signal) => {
    const policy = inputs.policy() ?? { kind: 'NeverConfirm' };
    if (loneFinishOrThink(batch)) return { kind: 'execute' };
    const analyzer = inputs.analyzer();
    let risks: Map<string, SecurityRisk>;
    if (!analyzer) risks = new Map(batch.map((a) => [a.id, 'UNKNOWN']));
    else {
      const analyses = await analyzeActions(analyzer, batch, inputs.state, signal);
      risks = new Map([...analyses].map(([id, x]) => [id, x.risk]));
      const details = Object.fromEntries([...analyses].filter(([, x]) => x.details).map(([id, x]) => [id, x.details!]));
      inputs.record({ ...newEventBase('environment'), kind: 'SecurityAnalysisEvent', analyzer: analyzer.kind, policy: policy.kind, risks: Object.fromEntries(risks), details });
    }
    return batchNeedsConfirmation(policy, batch, risks) ? { kind: 'wait_for_confirmation' } : { kind: 'execute' };
  };
}

/** Whether the ActionEvent keeps the model's predicted `security_risk`: under any analyzer (1.58 `_extract_security_risk`). */
export function usesPredictedRisk(analyzer: SecurityAnalyzer | null | undefined): boolean {
  return analyzer != null;
}

/**
 * What the schema cannot say about an analyzer's settings, refused with 422 at `loc` as 1.58's
 * validators refuse it: GraySwan's thresholds out of order; a ToolShield guardrail without a model;
 * a configured signature that is not a regular expression (1.58 compiles them when built).
 */
export function checkAnalyzer(analyzer: SecurityAnalyzer | null | undefined, loc: (string | number)[]): void {
  if (!analyzer) return;
  const leaves = analyzer.kind === 'EnsembleSecurityAnalyzer' ? analyzer.analyzers.map((a, i): [SecurityAnalyzer, (string | number)[]] => [a, [...loc, 'analyzers', i]]) : [[analyzer, loc] as [SecurityAnalyzer, (string | number)[]]];
  for (const [a, at] of leaves) {
    if (a.kind === 'GraySwanAnalyzer' && (a.low_threshold ?? 0.3) >= (a.medium_threshold ?? 0.7)) {
      throw new Invalid([{ loc: at, msg: `Value error, low_threshold (${a.low_threshold ?? 0.3}) must be less than medium_threshold (${a.medium_threshold ?? 0.7})`, type: 'value_error' }]);
    }
    if (a.kind === 'ToolShieldLLMSecurityAnalyzer' && !a.llm.model) {
      throw new Invalid([{ loc: [...at, 'llm', 'model'], msg: 'Field required', type: 'missing' }]);
    }
    if (a.kind === 'PatternSecurityAnalyzer') {
      for (const field of ['high_patterns', 'medium_patterns', 'injection_high_patterns', 'injection_medium_patterns'] as const) {
        (a[field] ?? []).forEach(([re], i) => {
          try {
            new RegExp(re, 'i');
          } catch (err) {
            throw new Invalid([{ loc: [...at, field, i, 0], msg: `Value error, not a regular expression: ${(err as Error).message}`, type: 'value_error' }]);
          }
        });
      }
    }
  }
}


/** How every secret shows in a response (the agent server's MASK). */
const MASK = '**********';

/** The analyzer as responses and events show it: its keys masked (GraySwan's, the guardrail model's). */
export function maskedAnalyzer(analyzer: SecurityAnalyzer | null | undefined): SecurityAnalyzer | null {
  if (!analyzer) return null;
  const leaf = <T extends SecurityAnalyzer>(a: T): T => {
    // 1.58 copies GRAYSWAN_API_KEY onto the analyzer, so it shows a key (masked) whenever one is in effect.
    if (a.kind === 'GraySwanAnalyzer' && grayswanCredentials(a).apiKey) return { ...a, api_key: MASK };
    if (a.kind === 'ToolShieldLLMSecurityAnalyzer' && a.llm.api_key) return { ...a, llm: { ...a.llm, api_key: MASK } };
    return a;
  };
  if (analyzer.kind === 'EnsembleSecurityAnalyzer') return { ...analyzer, analyzers: analyzer.analyzers.map(leaf) };
  return leaf(analyzer);
}

/**
 * The analyzer without its keys (what is stored with the request) and the keys by place
 * (`api_key`, `llm.api_key`, `<child index>.api_key`…), which are sealed with the conversation's
 * secrets: secret values never reach the database in plain text (src/agent-server/secrets.ts).
 */
export function splitAnalyzerKeys(analyzer: SecurityAnalyzer | null | undefined): { stored: SecurityAnalyzer | null; keys: Record<string, string> } {
  if (!analyzer) return { stored: null, keys: {} };
  const keys: Record<string, string> = {};
  const leaf = <T extends SecurityAnalyzer>(a: T, at: string): T => {
    if (a.kind === 'GraySwanAnalyzer' && a.api_key) {
      keys[`${at}api_key`] = a.api_key;
      return { ...a, api_key: null };
    }
    if (a.kind === 'ToolShieldLLMSecurityAnalyzer' && a.llm.api_key) {
      keys[`${at}llm.api_key`] = a.llm.api_key;
      return { ...a, llm: { ...a.llm, api_key: null } };
    }
    return a;
  };
  const stored = analyzer.kind === 'EnsembleSecurityAnalyzer' ? { ...analyzer, analyzers: analyzer.analyzers.map((a, i) => leaf(a, `${i}.`)) } : leaf(analyzer, '');
  return { stored, keys };
}

/** The stored analyzer with its keys put back (what the agent uses). */
export function joinAnalyzerKeys(stored: SecurityAnalyzer | null | undefined, keys: Readonly<Record<string, string>>): SecurityAnalyzer | null {
  if (!stored) return null;
  const leaf = <T extends SecurityAnalyzer>(a: T, at: string): T => {
    if (a.kind === 'GraySwanAnalyzer' && keys[`${at}api_key`]) return { ...a, api_key: keys[`${at}api_key`] };
    if (a.kind === 'ToolShieldLLMSecurityAnalyzer' && keys[`${at}llm.api_key`]) return { ...a, llm: { ...a.llm, api_key: keys[`${at}llm.api_key`] } };
    return a;
  };
  return stored.kind === 'EnsembleSecurityAnalyzer' ? { ...stored, analyzers: stored.analyzers.map((a, i) => leaf(a, `${i}.`)) } : leaf(stored, '');
}
