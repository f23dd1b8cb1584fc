// Lifecycle deadlines as data (spec part 3 and part 8): the idle pause, the 12-hour session cap and
// the deletion of long-paused sandboxes. Pure functions; the reconciler turns the nearest deadline
// into requeueAfterMs.
import { DateTime } from 'luxon';
import { ANNOTATION_LAST_ACTIVITY } from '../api/meta.ts';
import type { Sandbox } from '../api/sandbox.ts';
import { ANNOTATION_CLAIMED_AT, LABEL_WARM_POOL } from '../api/warm-pool.ts';

/** Fixed by the spec: a running session is force-paused after 12 hours. Not configurable. */
export const SESSION_CAP_MS = 12 * 60 * 60 * 1000;

export interface LifecycleSettings {
  /** Idle Time: no agent or user activity this long pauses the sandbox. */
  idleTimeMs: number;
  /** Deletion Time: paused this long, the sandbox and its conversations are deleted permanently. */
  deletionTimeMs: number;
  /** Sandboxes that may be STARTING or RUNNING at once (spec part 8 rule 2). */
  capacity: number;
}

/**
 * Defaults when the environment says nothing (the spec leaves them open): Idle Time 1800 s, between
 * OpenHands' 1200 s backend default and its admin console's 3600 s; Deletion Time 7 days, time to
 * come back after a week away; capacity 20 sandboxes, what one laptop or small VM holds.
 */
export const DEFAULT_LIFECYCLE: LifecycleSettings = {
  idleTimeMs: 30 * 60 * 1000,
  deletionTimeMs: 7 * 24 * 60 * 60 * 1000,
  capacity: 20,
};

function positiveNumber(env: NodeJS.ProcessEnv, name: string, fallback: number, integer = false): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value <= 0 || (integer && !Number.isInteger(value))) {
    throw new Error(`${name} must be a positive ${integer ? 'integer' : 'number'}, got '${raw}'`);
  }
  return value;
}

/** Deployment-wide settings from AGENTYARD_IDLE_TIME_SECONDS, AGENTYARD_DELETION_TIME_SECONDS, AGENTYARD_SANDBOX_CAPACITY. */
export function loadLifecycleSettings(env: NodeJS.ProcessEnv = process.env): LifecycleSettings {
  return {
    idleTimeMs: positiveNumber(env, 'AGENTYARD_IDLE_TIME_SECONDS', DEFAULT_LIFECYCLE.idleTimeMs / 1000) * 1000,
    deletionTimeMs: positiveNumber(env, 'AGENTYARD_DELETION_TIME_SECONDS', DEFAULT_LIFECYCLE.deletionTimeMs / 1000) * 1000,
    capacity: positiveNumber(env, 'AGENTYARD_SANDBOX_CAPACITY', DEFAULT_LIFECYCLE.capacity, true),
  };
}

/** The timestamps this project writes (toISO(): milliseconds and an offset), which Date.parse reads exactly. */
const WRITTEN_ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d{1,3})?(?:Z|([+-])(\d{2}):(\d{2}))$/;

function parse(iso: string | undefined): DateTime | undefined {
  if (!iso) return undefined;
  // Every sandbox reconcile parses three timestamps, and luxon's fromISO (a general parser, ~6 µs)
  // was 40 % of the sandbox reconciler's CPU during warm-pool starts (issue #16); Date.parse is
  // exact for the form above. Anything else goes through luxon as before.
  const m = WRITTEN_ISO.exec(iso);
  if (m) {
    const ms = Date.parse(iso);
    const offsetMs = m[1] ? (m[1] === '-' ? -1 : 1) * (Number(m[2]) * 60 + Number(m[3])) * 60_000 : 0;
    // Date.parse rolls 30 February over into March and takes 24:00; luxon refuses both: so only a
    // time that reads back the same is taken here.
    if (!Number.isNaN(ms) && new Date(ms + offsetMs).toISOString().slice(0, 19) === iso.slice(0, 19)) return DateTime.fromMillis(ms, { zone: 'utc' });
  }
  const t = DateTime.fromISO(iso, { zone: 'utc' });
  return t.isValid ? t : undefined;
}

/**
 * Start of the current session window: the runtime's, or the claim of a warm-pool sandbox when that
 * came later (its time waiting in the pool is nobody's session).
 */
function sessionStart(sb: Sandbox): DateTime | undefined {
  const started = parse(sb.status?.sessionStartTime);
  const claimed = parse(sb.metadata.annotations?.[ANNOTATION_CLAIMED_AT]);
  if (started && claimed) return claimed > started ? claimed : started;
  return started ?? claimed;
}

/** The last agent or user activity: the facade's coalesced annotation, never earlier than the session start. */
export function lastActivity(sb: Sandbox): DateTime | undefined {
  const annotated = parse(sb.metadata.annotations?.[ANNOTATION_LAST_ACTIVITY]);
  const session = sessionStart(sb);
  if (annotated && session) return annotated > session ? annotated : session;
  return annotated ?? session;
}

/** The three lifecycle deadlines of a sandbox; each is set only while it applies. */
export interface LifecycleDeadlines {
  /** Last activity + Idle Time (running, not already being paused). */
  idleAt?: DateTime;
  /** Session start + 12 hours (running, not already being paused). */
  capAt?: DateTime;
  /** Paused at + Deletion Time (paused and not being resumed). */
  deleteAt?: DateTime;
}

/** What the controller knows besides the Sandbox: whether an agent on it is in a run right now. */
export interface LifecycleContext {
  /**
   * Some conversation on the sandbox has execution status `running`. A run is activity all the
   * time it lasts — a tool call or a model call longer than Idle Time emits no event meanwhile —
   * so the idle clock counts from now while it does (#14 item 4). The session cap still applies.
   */
  agentRunning?: boolean;
}

export function lifecycleDeadlines(sb: Sandbox, settings: LifecycleSettings, now?: DateTime, ctx: LifecycleContext = {}): LifecycleDeadlines {
  // An unclaimed warm-pool member idles by design: its timers start when a user claims it.
  if (sb.metadata.labels?.[LABEL_WARM_POOL] !== undefined) return {};
  const phase = sb.status?.phase;
  if (phase === 'RUNNING' && !sb.spec.paused) {
    const session = sessionStart(sb);
    const activity = ctx.agentRunning && now ? now : lastActivity(sb);
    return {
      ...(activity ? { idleAt: activity.plus({ milliseconds: settings.idleTimeMs }) } : {}),
      ...(session ? { capAt: session.plus({ milliseconds: SESSION_CAP_MS }) } : {}),
    };
  }
  if (phase === 'PAUSED' && sb.spec.paused) {
    const pausedAt = parse(sb.status?.pausedAt);
    return pausedAt ? { deleteAt: pausedAt.plus({ milliseconds: settings.deletionTimeMs }) } : {};
  }
  return {};
}

export type LifecycleDecision =
  | { action: 'none'; requeueAfterMs?: number }
  | { action: 'pause'; reason: 'IdleTimeout' | 'SessionCap' }
  | { action: 'delete' };

/** What the lifecycle rules demand of a sandbox now, and when to look again. */
export function decideLifecycle(sb: Sandbox, now: DateTime, settings: LifecycleSettings, ctx: LifecycleContext = {}): LifecycleDecision {
  const { idleAt, capAt, deleteAt } = lifecycleDeadlines(sb, settings, now, ctx);
  // The cap wins over idleness when both passed: it is the reason that holds even while active.
  if (capAt && now >= capAt) return { action: 'pause', reason: 'SessionCap' };
  if (idleAt && now >= idleAt) return { action: 'pause', reason: 'IdleTimeout' };
  if (deleteAt && now >= deleteAt) return { action: 'delete' };
  const waits = [idleAt, capAt, deleteAt].filter((t): t is DateTime => t !== undefined).map((t) => t.diff(now).as('milliseconds'));
  return waits.length ? { action: 'none', requeueAfterMs: Math.max(0, Math.min(...waits)) } : { action: 'none' };
}

/** Milliseconds until the nearest lifecycle deadline (0 when one has passed); undefined when none applies. */
export function nextDeadline(sb: Sandbox, now: DateTime, settings: LifecycleSettings, ctx: LifecycleContext = {}): number | undefined {
  const decision = decideLifecycle(sb, now, settings, ctx);
  return decision.action === 'none' ? decision.requeueAfterMs : 0;
}
