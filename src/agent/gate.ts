// The point between recording a model response's actions and running them. Confirmation policies
// (wait for the user) and pre-tool hooks (block an action) plug in here; agentyard ships none yet,
// so without a gate every action runs.
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
