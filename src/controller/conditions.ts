// metav1.Condition bookkeeping: lastTransitionTime moves only when the status flips.
import type { Condition } from '../api/meta.ts';

export type ConditionInput = Omit<Condition, 'lastTransitionTime' | 'observedGeneration'>;

export function setCondition(conditions: Condition[], input: ConditionInput, now: string, observedGeneration?: number): Condition[] {
  const existing = conditions.find((c) => c.type === input.type);
  const next: Condition = {
    ...input,
    lastTransitionTime: existing && existing.status === input.status ? existing.lastTransitionTime : now,
    ...(observedGeneration !== undefined ? { observedGeneration } : {}),
  };
  return [...conditions.filter((c) => c.type !== input.type), next].sort((a, b) => a.type.localeCompare(b.type));
}

export function findCondition(conditions: readonly Condition[] | undefined, type: string): Condition | undefined {
  return conditions?.find((c) => c.type === type);
}
