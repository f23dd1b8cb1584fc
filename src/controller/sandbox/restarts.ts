// When a dead agent server is restarted, and when dying has become a habit (crash loop). Pure
// functions over the Sandbox status, so the count survives a controller restart and tests move a
// clock instead of waiting.
import { DateTime } from 'luxon';
import type { SandboxStatus } from '../../api/sandbox.ts';
import type { AgentServerDeath } from '../../runtime/types.ts';

export interface RestartPolicy {
  /** Wait before the first restart after a death; doubles with each further death in the window. */
  backoffBaseMs: number;
  backoffMaxMs: number;
  /** This many deaths within `crashLoopWindowMs` end in ERROR (reason CrashLoop) instead of another restart. */
  crashLoopDeaths: number;
  crashLoopWindowMs: number;
}

/**
 * A first death is restarted after 1 s (a kill -9 or an OOM comes back at once), then 2, 4, 8 s;
 * the fifth death within 10 minutes is a crash loop: a sandbox that cannot stay up for two minutes
 * is broken in a way restarting will not mend (the kubelet's own backoff would wait 5 minutes by
 * then), and its user gets a clear ERROR rather than an endless STARTING.
 */
export const DEFAULT_RESTART_POLICY: RestartPolicy = {
  backoffBaseMs: 1_000,
  backoffMaxMs: 60_000,
  crashLoopDeaths: 5,
  crashLoopWindowMs: 10 * 60 * 1000,
};

function parse(iso: string | undefined): DateTime | undefined {
  if (!iso) return undefined;
  const t = DateTime.fromISO(iso, { zone: 'utc' });
  return t.isValid ? t : undefined;
}

/** Deaths still inside the window at `now`. */
export function recentDeaths(status: SandboxStatus, now: DateTime, policy: RestartPolicy): string[] {
  const from = now.minus({ milliseconds: policy.crashLoopWindowMs });
  return (status.recentDeaths ?? []).filter((t) => {
    const at = parse(t);
    return at !== undefined && at > from;
  });
}

/** Whether the runtime reports a death the status has not counted yet. */
export function isNewDeath(status: SandboxStatus, death: AgentServerDeath | undefined): death is AgentServerDeath {
  return death !== undefined && death.id !== status.lastDeath?.id;
}

/**
 * Counts `death` into the status, with the deaths of the same instance it did not see one by one
 * (the controller was down while a kubelet restarted the container twice); returns how many it
 * counted and whether they make a crash loop.
 */
export function recordDeath(status: SandboxStatus, death: AgentServerDeath, now: DateTime, policy: RestartPolicy): { deaths: number; crashLoop: boolean } {
  const at = now.toISO()!;
  const last = status.lastDeath;
  const sameInstance = death.instance !== undefined && death.instance === last?.instance && death.ordinal !== undefined && last.ordinal !== undefined;
  const deaths = sameInstance ? Math.max(1, death.ordinal! - last.ordinal!) : 1;
  status.lastDeath = {
    id: death.id,
    time: at,
    reason: death.reason,
    message: death.message,
    ...(death.instance !== undefined ? { instance: death.instance } : {}),
    ...(death.ordinal !== undefined ? { ordinal: death.ordinal } : {}),
  };
  status.recentDeaths = [...recentDeaths(status, now, policy), ...Array.from({ length: deaths }, () => at)].slice(-policy.crashLoopDeaths);
  return { deaths, crashLoop: status.recentDeaths.length >= policy.crashLoopDeaths };
}

export function recordRestart(status: SandboxStatus, now: DateTime, restarts = 1): void {
  status.restartCount = (status.restartCount ?? 0) + restarts;
  status.lastRestartTime = now.toISO()!;
}

/** When the agent server that died last may be started again: the last death plus the backoff its count earns. */
export function restartDueAt(status: SandboxStatus, now: DateTime, policy: RestartPolicy): DateTime {
  const died = parse(status.lastDeath?.time) ?? now;
  const deaths = Math.max(1, recentDeaths(status, now, policy).length);
  const wait = Math.min(policy.backoffBaseMs * 2 ** (deaths - 1), policy.backoffMaxMs);
  return died.plus({ milliseconds: wait });
}

export function crashLoopMessage(status: SandboxStatus, policy: RestartPolicy): string {
  const minutes = Math.round(policy.crashLoopWindowMs / 60_000);
  const last = status.lastDeath;
  return `The agent server died ${policy.crashLoopDeaths} times within ${minutes} minutes and is not restarted again${last ? `; last: ${last.reason}: ${last.message ?? ''}` : ''}`.trim();
}
