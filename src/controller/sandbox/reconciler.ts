// SandboxReconciler: turns a Sandbox into a running (or paused) agent server through the runtime,
// and enforces the lifecycle of spec part 3: idle pause, 12-hour session cap, deletion of
// long-paused sandboxes. Level-triggered: every pass recomputes from the resource and the runtime.
// A dead agent server is restarted on its intact state with backoff (restarts.ts); only a crash
// loop ends in ERROR. The runtime's watch pokes this reconciler as soon as one dies.
import { isDeepStrictEqual } from 'node:util';
import { ConditionType, Reason } from '../../api/conditions.ts';
import { ConversationKind, type Conversation } from '../../api/conversation.ts';
import { Invalid, NotFound } from '../../api/errors.ts';
import { ANNOTATION_LAST_ACTIVITY, FINALIZER_RUNTIME, GROUP, LABEL_SANDBOX } from '../../api/meta.ts';
import { SandboxKind, type Sandbox, type SandboxStatus } from '../../api/sandbox.ts';
import type { RuntimeState, SandboxRuntime } from '../../runtime/types.ts';
import type { ResourceStore } from '../../store/types.ts';
import type { Logger } from '../../util/log.ts';
import type { DateTime } from 'luxon';
import type { Clock } from '../clock.ts';
import type { EventRecorder } from '../events.ts';
import { setCondition } from '../conditions.ts';
import { splitKey } from '../keys.ts';
import { decideLifecycle, lastActivity, nextDeadline, type LifecycleSettings } from '../lifecycle.ts';
import type { Result } from '../queue.ts';
import { crashLoopMessage, DEFAULT_RESTART_POLICY, isNewDeath, recordDeath, recordRestart, restartDueAt, type RestartPolicy } from './restarts.ts';
import { ensurePoolMemberKey, ensureSandboxKeys } from './session-secret.ts';
import { isUnclaimedMember } from '../warm-pool/members.ts';

/** Set by the controller when it pauses a sandbox itself; cleared on resume. */
export const ANNOTATION_PAUSE_REASON = `${GROUP}/pause-reason`;

/** How often to look at a sandbox whose agent server is still booting. */
const STARTING_POLL_MS = 500;

export interface SandboxReconcilerDeps {
  store: ResourceStore;
  recorder?: EventRecorder;
  runtime: SandboxRuntime;
  clock: Clock;
  settings: LifecycleSettings;
  /** Restart backoff and crash-loop limits (DEFAULT_RESTART_POLICY). */
  restarts?: RestartPolicy;
  /**
   * The sandbox's conversations not being deleted, from an index the controller keeps over its
   * Conversation informer (ConversationCounts); without it, a list by label on every pass.
   */
  conversationCount?: (sb: Sandbox) => number;
  /** Of those, how many are `running` (same index); a running agent holds off the idle pause. */
  runningConversations?: (sb: Sandbox) => number;
  log?: Logger;
}

interface Converged {
  state: RuntimeState;
  requeueAfterMs?: number;
}

export class SandboxReconciler {
  readonly #d: SandboxReconcilerDeps;
  readonly #policy: RestartPolicy;

  constructor(deps: SandboxReconcilerDeps) {
    this.#d = deps;
    this.#policy = deps.restarts ?? DEFAULT_RESTART_POLICY;
  }

  async reconcile(key: string): Promise<Result> {
    const { namespace, name } = splitKey(key);
    let sb = await this.#d.store.get(SandboxKind, namespace, name);
    if (!sb) return {};
    if (sb.metadata.deletionTimestamp) return this.#finalize(sb);
    if (!sb.metadata.finalizers?.includes(FINALIZER_RUNTIME)) {
      sb = await this.#d.store.update(SandboxKind, { ...sb, metadata: { ...sb.metadata, finalizers: [...(sb.metadata.finalizers ?? []), FINALIZER_RUNTIME] } });
    }

    const now = this.#d.clock.now();
    const conversations = await this.#conversations(sb);
    const ctx = { agentRunning: conversations.running };
    if (ctx.agentRunning) sb = await this.#stampRunning(sb, now);
    const decision = decideLifecycle(sb, now, this.#d.settings, ctx);
    if (decision.action === 'delete') return this.#deletePermanently(sb);
    if (decision.action === 'pause') {
      // A spec write: the sandbox is now wanted paused, and only an explicit resume wakes it.
      const annotations = { ...sb.metadata.annotations, [ANNOTATION_PAUSE_REASON]: decision.reason };
      await this.#d.store.update(SandboxKind, { ...sb, metadata: { ...sb.metadata, annotations }, spec: { ...sb.spec, paused: true } });
      this.#d.log?.info({ sandbox: name, reason: decision.reason }, 'pausing sandbox');
      return {};
    }
    if (!sb.spec.paused && sb.metadata.annotations?.[ANNOTATION_PAUSE_REASON]) {
      const { [ANNOTATION_PAUSE_REASON]: _dropped, ...annotations } = sb.metadata.annotations;
      sb = await this.#d.store.update(SandboxKind, { ...sb, metadata: { ...sb.metadata, annotations } });
    }

    const status: SandboxStatus = structuredClone(sb.status ?? {});
    const nowIso = now.toISO()!;
    let requeueAfterMs: number | undefined;
    if (status.phase !== 'ERROR') {
      const converged: Converged = sb.spec.paused ? { state: await this.#d.runtime.pause(sb) } : await this.#converge(sb, status, now);
      applyRuntimeState(status, converged.state, sb, nowIso);
      if (status.phase === 'STARTING') requeueAfterMs = converged.requeueAfterMs ?? STARTING_POLL_MS;
    }

    // Counted again after the runtime was observed (an index read): a conversation placed on this
    // sandbox while the pass waited on the agent server's /ready is in this write, not in another
    // pass's — a warm claim's placement lands exactly then (issue #16).
    status.conversationCount = (await this.#conversations(sb)).count;
    const activity = lastActivity({ ...sb, status });
    if (activity) status.lastActivityTime = activity.toISO()!;
    status.observedGeneration = sb.metadata.generation;
    status.conditions = computeConditions(status, nowIso, sb.metadata.generation);
    if (!isDeepStrictEqual(status, sb.status)) {
      const previous = sb.status?.phase;
      sb = await this.#d.store.updateStatus(SandboxKind, { ...sb, status });
      if (status.phase !== previous) this.#recordPhase(sb, status);
    }
    return { requeueAfterMs: minDefined(requeueAfterMs, nextDeadline(sb, now, this.#d.settings, ctx)) };
  }

  #recordPhase(sb: Sandbox, status: SandboxStatus): void {
    const r = this.#d.recorder;
    if (!r) return;
    if (status.phase === 'RUNNING') r.record(sb, 'Normal', Reason.Running, `Agent server ready at ${status.url}`);
    else if (status.phase === 'STARTING') r.record(sb, 'Normal', Reason.Starting, 'Starting the agent server');
    else if (status.phase === 'PAUSED') r.record(sb, 'Normal', status.pauseReason ?? Reason.UserRequest, 'Paused: compute released, workspace kept');
    else if (status.phase === 'ERROR') r.record(sb, 'Warning', Reason.RuntimeFailed, status.message ?? 'The sandbox failed');
  }

  async #converge(sb: Sandbox, status: SandboxStatus, now: DateTime): Promise<Converged> {
    const observed = await this.#d.runtime.observe(sb);
    if (observed.phase === 'absent' && status.phase === 'RUNNING') {
      return { state: { phase: 'failed', reason: Reason.RuntimeMissing, message: 'The sandbox runtime disappeared while it was running' } };
    }
    const death = observed.phase === 'exited' || observed.phase === 'running' || observed.phase === 'starting' ? observed.death : undefined;
    if (isNewDeath(status, death)) {
      const { deaths, crashLoop } = recordDeath(status, death, now, this.#policy);
      this.#d.log?.warn({ sandbox: sb.metadata.name, reason: death.reason, message: death.message, deaths, crashLoop }, 'agent server died');
      this.#d.recorder?.record(sb, 'Warning', Reason.Restarting, `The agent server died (${death.reason}): ${death.message}`);
      if (crashLoop) {
        // Compute released (a kubelet would otherwise restart it forever); the workspace stays until deletion.
        await this.#d.runtime.pause(sb);
        return { state: { phase: 'failed', reason: Reason.CrashLoop, message: crashLoopMessage(status, this.#policy) } };
      }
      if (observed.phase !== 'exited') recordRestart(status, now, deaths); // the runtime brings it back itself
    }
    if (observed.phase === 'exited') {
      const waitMs = restartDueAt(status, now, this.#policy).diff(now).as('milliseconds');
      if (waitMs > 0) {
        const message = `The agent server died (${observed.death.reason}); restarting in ${Math.ceil(waitMs / 1000)} s`;
        return { state: { phase: 'starting', runtimeId: observed.runtimeId, message }, requeueAfterMs: waitMs };
      }
      const state = await this.#start(sb);
      recordRestart(status, now);
      return { state };
    }
    if (observed.phase === 'absent' || observed.phase === 'paused') return { state: await this.#start(sb) };
    return { state: observed };
  }

  async #start(sb: Sandbox): Promise<RuntimeState> {
    const keys = isUnclaimedMember(sb) ? await ensurePoolMemberKey(this.#d.store, sb) : await ensureSandboxKeys(this.#d.store, sb);
    try {
      return await this.#d.runtime.start(sb, keys);
    } catch (err) {
      // The runtime refused what this sandbox asks for: retrying cannot help.
      if (err instanceof Invalid) return { phase: 'failed', reason: Reason.RuntimeFailed, message: `The runtime refused this sandbox: ${err.message}` };
      throw err;
    }
  }

  /**
   * A run in progress is activity: the last-activity annotation moves to now (at most every half
   * Idle Time), so the idle clock of a sandbox starts when its last run ends, not when its last
   * event came — whether or not the run's final events reach the facade.
   */
  async #stampRunning(sb: Sandbox, now: DateTime): Promise<Sandbox> {
    if (sb.status?.phase !== 'RUNNING' || sb.spec.paused) return sb;
    const last = lastActivity(sb);
    if (last && now.diff(last).as('milliseconds') < this.#d.settings.idleTimeMs / 2) return sb;
    const annotations = { ...sb.metadata.annotations, [ANNOTATION_LAST_ACTIVITY]: now.toUTC().toISO({ suppressMilliseconds: false })! };
    return this.#d.store.update(SandboxKind, { ...sb, metadata: { ...sb.metadata, annotations } });
  }

  /** How many conversations the sandbox holds, and whether one is running: from the controller's index, else a list by label. */
  async #conversations(sb: Sandbox): Promise<{ count: number; running: boolean }> {
    if (this.#d.conversationCount && this.#d.runningConversations) return { count: this.#d.conversationCount(sb), running: this.#d.runningConversations(sb) > 0 };
    const { items } = await this.#d.store.list(ConversationKind, sb.metadata.namespace, { labelSelector: `${LABEL_SANDBOX}=${sb.metadata.name}` });
    const live = items.filter((c) => !c.metadata.deletionTimestamp);
    return { count: live.length, running: live.some((c) => c.status?.executionStatus === 'running') };
  }

  async #finalize(sb: Sandbox): Promise<Result> {
    await this.#d.runtime.delete(sb);
    if (sb.metadata.finalizers?.includes(FINALIZER_RUNTIME)) {
      const finalizers = sb.metadata.finalizers.filter((f) => f !== FINALIZER_RUNTIME);
      try {
        await this.#d.store.update(SandboxKind, { ...sb, metadata: { ...sb.metadata, finalizers } });
      } catch (err) {
        if (!(err instanceof NotFound)) throw err;
      }
    }
    return {};
  }

  /** Deletion Time elapsed: the conversations and their storage go, permanently (spec part 3). */
  async #deletePermanently(sb: Sandbox): Promise<Result> {
    const namespace = sb.metadata.namespace ?? 'default';
    const { items } = await this.#d.store.list(ConversationKind, namespace, { labelSelector: `${LABEL_SANDBOX}=${sb.metadata.name}` });
    for (const conv of items) await ignoreNotFound(this.#d.store.delete(ConversationKind, namespace, conv.metadata.name));
    await ignoreNotFound(this.#d.store.delete(SandboxKind, namespace, sb.metadata.name));
    this.#d.log?.info({ sandbox: sb.metadata.name, conversations: items.length }, 'deleted after Deletion Time');
    return {};
  }
}

function applyRuntimeState(status: SandboxStatus, state: RuntimeState, sb: Sandbox, now: string): void {
  switch (state.phase) {
    case 'paused':
    case 'absent':
      if (sb.spec.paused) {
        if (status.phase !== 'PAUSED') {
          status.pausedAt = now;
          status.pauseReason = sb.metadata.annotations?.[ANNOTATION_PAUSE_REASON] ?? Reason.UserRequest;
        }
        status.phase = 'PAUSED';
      } else {
        status.phase = 'STARTING';
      }
      delete status.url;
      delete status.internalUrl;
      break;
    case 'exited': // only while the reconciler waits out its backoff; it reports that as starting
    case 'starting':
      status.phase = 'STARTING';
      status.runtimeId = state.runtimeId;
      delete status.url;
      delete status.internalUrl;
      if ('message' in state && state.message) status.message = state.message;
      break;
    case 'running':
      // A resume opens a new 12-hour window; a restart after a death goes on with the one it had.
      if (status.phase !== 'RUNNING' && !restarting(status)) status.sessionStartTime = now;
      status.phase = 'RUNNING';
      status.runtimeId = state.runtimeId;
      status.url = state.url;
      if (state.internalUrl) status.internalUrl = state.internalUrl;
      else delete status.internalUrl;
      delete status.pausedAt;
      delete status.pauseReason;
      delete status.message;
      break;
    case 'failed':
      status.phase = 'ERROR';
      status.message = state.message;
      status.pauseReason = undefined;
      delete status.pauseReason;
      delete status.url;
      delete status.internalUrl;
      status.conditions = setCondition(status.conditions ?? [], { type: ConditionType.Ready, status: 'False', reason: state.reason, message: state.message }, now);
      break;
  }
}

function computeConditions(status: SandboxStatus, now: string, generation: number | undefined) {
  let conditions = status.conditions ?? [];
  const phase = status.phase;
  if (phase !== 'ERROR') {
    const ready = phase === 'RUNNING';
    const back = phase === 'STARTING' && restarting(status);
    conditions = setCondition(
      conditions,
      {
        type: ConditionType.Ready,
        status: ready ? 'True' : 'False',
        reason: ready ? Reason.Running : phase === 'PAUSED' ? (status.pauseReason ?? Reason.UserRequest) : back ? Reason.Restarting : Reason.Starting,
        message: ready
          ? `Agent server at ${status.url}`
          : phase === 'PAUSED'
            ? 'Compute released; workspace kept'
            : back
              ? (status.message ?? `The agent server died (${status.lastDeath?.reason}); restarting`)
              : 'Agent server is starting',
      },
      now,
      generation,
    );
  } else {
    conditions = conditions.map((c) => (c.type === ConditionType.Ready ? { ...c, observedGeneration: generation } : c)) as typeof conditions;
  }
  const paused = phase === 'PAUSED';
  return setCondition(
    conditions,
    {
      type: ConditionType.Paused,
      status: paused ? 'True' : 'False',
      reason: paused ? (status.pauseReason ?? Reason.UserRequest) : Reason.Running,
      message: paused ? `Paused: ${status.pauseReason ?? Reason.UserRequest}` : 'Not paused',
    },
    now,
    generation,
  );
}

/**
 * Coming back from a death rather than starting or resuming: the last death is newer than the
 * session window and nobody paused the sandbox since.
 */
function restarting(status: SandboxStatus): boolean {
  const died = status.lastDeath?.time;
  if (!died || status.pausedAt) return false;
  return !status.sessionStartTime || Date.parse(died) >= Date.parse(status.sessionStartTime);
}

function minDefined(...values: (number | undefined)[]): number | undefined {
  const defined = values.filter((v): v is number => v !== undefined);
  return defined.length ? Math.min(...defined) : undefined;
}

async function ignoreNotFound(p: Promise<unknown>): Promise<void> {
  try {
    await p;
  } catch (err) {
    if (!(err instanceof NotFound)) throw err;
  }
}
