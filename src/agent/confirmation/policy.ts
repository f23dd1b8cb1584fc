// Confirmation policies (OpenHands `security/confirmation_policy.py`, `agent.py::_requires_user_confirmation`)
// as an ActionGate. The risk of an action is the `security_risk` the model predicted for it (recorded
// on the ActionEvent); without a prediction it is UNKNOWN.
//
// Confirming and rejecting (OpenHands semantics, kept here on purpose):
// - a batch that needs confirmation is recorded but not run; the status becomes waiting_for_confirmation;
// - the next run() executes the pending actions: `respond_to_confirmation {accept:true}` runs, and so does
//   a new user message sent with run:true (implicit confirmation; a message with run:false only waits);
// - `respond_to_confirmation {accept:false}` answers each pending action with a UserRejectObservation
//   (rejection_source `user`) and the status becomes idle: the agent does not continue until the user
//   sends a message or runs again, and the model then reads the rejections.
import type { ConfirmationPolicy } from '../../api/agent-server/index.ts';
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
