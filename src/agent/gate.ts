// The point between recording a model response's actions and running them: the confirmation policy
// (wait for the user) plugs in here. Pre-tool hooks run earlier, as each action is recorded (agent.ts).
import type { ActionEvent } from '../api/events/index.ts';

export interface Rejection {
  reason: string;
  /** `user` in confirmation mode, `hook` when a pre-tool hook blocked the action. */
  source: 'user' | 'hook';
}

export type GateVerdict =
  /** Run every action of the batch. */
  | { kind: 'execute' }
  /** Run none now: the status becomes waiting_for_confirmation; the next run() executes them (OpenHands' implicit confirmation). */
  | { kind: 'wait_for_confirmation' }
  /** Answer these actions (by ActionEvent id) with a UserRejectObservation; run the others. */
  | { kind: 'reject'; rejected: ReadonlyMap<string, Rejection> };

/** Decides about the executable actions of one model response (never called with an empty batch). */
export type ActionGate = (batch: readonly ActionEvent[], signal: AbortSignal) => Promise<GateVerdict>;

/** What a chain of gates decided: rejections to record, and whether the rest waits for the user. */
export interface ChainVerdict {
  rejected: Map<string, Rejection>;
  /** The actions left (not rejected) wait for confirmation instead of running. */
  wait: boolean;
}

/**
 * Runs gates in order over one batch. The first gate that rejects an action wins for it: later
 * gates see only the actions still standing. A gate that asks for confirmation ends the chain: what
 * no gate rejected waits; rejections so far stand.
 */
export async function runGates(gates: readonly ActionGate[], batch: readonly ActionEvent[], signal: AbortSignal): Promise<ChainVerdict> {
  const rejected = new Map<string, Rejection>();
  let standing = [...batch];
  for (const gate of gates) {
    if (standing.length === 0 || signal.aborted) break;
    const verdict = await gate(standing, signal);
    if (verdict.kind === 'wait_for_confirmation') return { rejected, wait: true };
    if (verdict.kind === 'reject') {
      for (const a of standing) {
        const r = verdict.rejected.get(a.id);
        if (r) rejected.set(a.id, r);
      }
      standing = standing.filter((a) => !rejected.has(a.id));
    }
  }
  return { rejected, wait: false };
}
