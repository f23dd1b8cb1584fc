// Confirmation policies (OpenHands `security/confirmation_policy.py`, `agent.py::_requires_user_confirmation`)
// as an ActionGate. The risk of an action comes from the conversation's security analyzer and is
// recorded on its ActionEvent as `security_risk`:
// - `LLMSecurityAnalyzer`: the `security_risk` the model predicted with the call (UNKNOWN when it sent
//   none, and always for a read-only tool);
// - no analyzer: UNKNOWN for every action, as in OpenHands, whatever the model predicted. So ConfirmRisky
//   without an analyzer confirms every batch (confirm_unknown, the default) or none (confirm_unknown false);
// - the other OpenHands kinds are not built: setting one is refused (501), never silently ignored.
//
// Confirming and rejecting (OpenHands semantics, kept here on purpose):
// - a batch that needs confirmation is recorded but not run; the status becomes waiting_for_confirmation;
// - the next run() executes the pending actions: `respond_to_confirmation {accept:true}` runs, and so does
//   a new user message sent with run:true (implicit confirmation; a message with run:false only waits);
// - `respond_to_confirmation {accept:false}` answers each pending action with a UserRejectObservation
//   (rejection_source `user`) and the status becomes idle: the agent does not continue until the user
//   sends a message or runs again, and the model then reads the rejections.
import type { ConfirmationPolicy, SecurityAnalyzer } from '../../api/agent-server/index.ts';
import { NotImplemented } from '../../api/errors.ts';
import type { ActionEvent, SecurityRisk } from '../../api/events/index.ts';
import type { ActionGate } from '../gate.ts';

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

/** A lone finish or think never waits (nothing to approve); otherwise any action that needs it holds the batch. */
export function batchNeedsConfirmation(policy: ConfirmationPolicy, batch: readonly ActionEvent[]): boolean {
  if (batch.length === 1 && (batch[0]!.action?.kind === 'FinishAction' || batch[0]!.action?.kind === 'ThinkAction')) return false;
  return batch.some((a) => riskNeedsConfirmation(policy, a.security_risk ?? 'UNKNOWN'));
}

/** The gate; `policy` is read at every batch, so a policy changed mid-conversation applies at once. */
export function confirmationGate(policy: () => ConfirmationPolicy | undefined): ActionGate {
  return async (batch) => (batchNeedsConfirmation(policy() ?? { kind: 'NeverConfirm' }, batch) ? { kind: 'wait_for_confirmation' } : { kind: 'execute' });
}

/** Whether the model's predicted `security_risk` counts: only under an LLMSecurityAnalyzer. */
export function usesPredictedRisk(analyzer: SecurityAnalyzer | null | undefined): boolean {
  return analyzer?.kind === 'LLMSecurityAnalyzer';
}

/** NotImplemented (501) for an analyzer kind this agent cannot apply. */
export function requireBuiltAnalyzer(analyzer: SecurityAnalyzer | null | undefined): void {
  if (analyzer && !usesPredictedRisk(analyzer)) {
    throw new NotImplemented(`The security analyzer ${analyzer.kind} is not implemented by this agent server; use LLMSecurityAnalyzer (the risk the model predicts for each action) or none`);
  }
}
