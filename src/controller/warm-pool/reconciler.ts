// WarmPoolReconciler: keeps each SandboxWarmPool filled with started sandboxes of its template,
// owned by the pool and by no user. Claimed members leave the pool (claim.ts) and are replaced;
// failed, paused or outdated members are deleted and replaced; surplus members go when replicas
// drop. Members count against the installation's sandbox capacity like any sandbox: a pool never
// starts a member past it. Level-triggered: every pass recounts the members from the store.
import { isDeepStrictEqual } from 'node:util';
import { ConditionType, Reason } from '../../api/conditions.ts';
import { Conflict, NotFound } from '../../api/errors.ts';
import { SandboxKind, type Sandbox } from '../../api/sandbox.ts';
import { ANNOTATION_CLAIMED_AT, LABEL_CLAIMED_FROM, LABEL_WARM_POOL, SandboxWarmPoolKind, type SandboxWarmPool, type SandboxWarmPoolStatus } from '../../api/warm-pool.ts';
import type { KubeObject } from '../../api/meta.ts';
import type { ResourceStore } from '../../store/types.ts';
import type { Logger } from '../../util/log.ts';
import type { Clock } from '../clock.ts';
import { setCondition } from '../conditions.ts';
import type { EventRecorder } from '../events.ts';
import { objectKey, splitKey } from '../keys.ts';
import type { LifecycleSettings } from '../lifecycle.ts';
import type { Result } from '../queue.ts';
import { holdsCapacity } from '../conversation/placement.ts';
import { byAge, desiredMember, isLostMember, isReadyMember, matchesTemplate, memberName } from './members.ts';
import type { WarmPoolMetrics } from './metrics.ts';

/** Looked at again while the installation is at capacity: a slot may free up without any event of ours. */
const CAPACITY_RETRY_MS = 10_000;
/**
 * A claimed member is replaced this long after its claim, not at once: starting the replacement
 * (a process spawn, a Pod) would compete with the claiming start's own last steps, which are what
 * the user waits for. A burst of claims is replaced together once it is over.
 */
export const REFILL_DELAY_MS = 500;

export interface WarmPoolReconcilerDeps {
  store: ResourceStore;
  clock: Clock;
  settings: LifecycleSettings;
  recorder?: EventRecorder;
  metrics?: WarmPoolMetrics;
  log?: Logger;
}

export class WarmPoolReconciler {
  readonly #d: WarmPoolReconcilerDeps;

  constructor(deps: WarmPoolReconcilerDeps) {
    this.#d = deps;
  }

  async reconcile(key: string): Promise<Result> {
    const { namespace, name } = splitKey(key);
    const pool = await this.#d.store.get(SandboxWarmPoolKind, namespace, name);
    // Its unclaimed members go with it (ownerReferences); claimed ones belong to their users.
    if (!pool || pool.metadata.deletionTimestamp) {
      this.#d.metrics?.poolGone(name);
      return {};
    }
    const { items: sandboxes } = await this.#d.store.list(SandboxKind, namespace);
    const members = sandboxes.filter((sb) => sb.metadata.labels?.[LABEL_WARM_POOL] === name && !sb.metadata.deletionTimestamp).sort(byAge);

    // Lost or outdated (the template changed) members are replaced.
    const keep: Sandbox[] = [];
    for (const sb of members) {
      if (isLostMember(sb) || !matchesTemplate(pool, sb.spec)) await this.#remove(sb, isLostMember(sb) ? 'lost' : 'outdated template');
      else keep.push(sb);
    }

    const want = pool.spec.replicas;
    let requeueAfterMs: number | undefined;
    let atCapacity = false;
    if (keep.length > want) {
      // Surplus: starting members go before ready ones, the newest first.
      const surplus = [...keep].sort((a, b) => Number(isReadyMember(a)) - Number(isReadyMember(b)) || byAge(b, a)).slice(0, keep.length - want);
      for (const sb of surplus) await this.#remove(sb, 'surplus');
      keep.splice(0, keep.length, ...keep.filter((sb) => !surplus.includes(sb)));
    } else if (keep.length < want && this.#sinceLastClaim(sandboxes, name) < REFILL_DELAY_MS) {
      requeueAfterMs = REFILL_DELAY_MS - this.#sinceLastClaim(sandboxes, name);
    } else if (keep.length < want) {
      const room = this.#d.settings.capacity - sandboxes.filter(holdsCapacity).length;
      const add = Math.max(0, Math.min(want - keep.length, room));
      atCapacity = add < want - keep.length;
      if (atCapacity) requeueAfterMs = CAPACITY_RETRY_MS;
      const nowIso = this.#d.clock.now().toUTC().toISO()!;
      for (let i = 0; i < add; i++) keep.push(await this.#d.store.create(SandboxKind, desiredMember(pool, memberName(name), nowIso)));
    }

    const ready = keep.filter(isReadyMember).length;
    const claimed = sandboxes.filter((sb) => sb.metadata.labels?.[LABEL_CLAIMED_FROM] === name).length;
    const status = computeStatus(pool, { replicas: keep.length, ready, claimed, atCapacity, capacity: this.#d.settings.capacity }, this.#d.clock.now().toISO()!);
    this.#d.metrics?.pool(name, ready, want);
    if (!isDeepStrictEqual(status, pool.status)) {
      try {
        await this.#d.store.updateStatus(SandboxWarmPoolKind, { ...pool, status });
      } catch (err) {
        // A newer pool (spec change) is reconciled again anyway.
        if (!(err instanceof Conflict)) throw err;
      }
    }
    return requeueAfterMs !== undefined ? { requeueAfterMs } : {};
  }

  #sinceLastClaim(sandboxes: readonly Sandbox[], pool: string): number {
    const now = this.#d.clock.now().toMillis();
    const last = Math.max(0, ...sandboxes.filter((sb) => sb.metadata.labels?.[LABEL_CLAIMED_FROM] === pool).map((sb) => Date.parse(sb.metadata.annotations?.[ANNOTATION_CLAIMED_AT] ?? '') || 0));
    return now - last;
  }

  async #remove(sb: Sandbox, why: string): Promise<void> {
    try {
      await this.#d.store.delete(SandboxKind, sb.metadata.namespace ?? 'default', sb.metadata.name, { resourceVersion: sb.metadata.resourceVersion! });
      this.#d.log?.info({ sandbox: sb.metadata.name, pool: sb.metadata.labels?.[LABEL_WARM_POOL], why }, 'warm pool: member removed');
    } catch (err) {
      // Gone already, or changed meanwhile (claimed, most likely): the next pass sees what it is now.
      if (!(err instanceof NotFound) && !(err instanceof Conflict)) throw err;
    }
  }
}

interface Counts {
  replicas: number;
  ready: number;
  claimed: number;
  atCapacity: boolean;
  capacity: number;
}

export function computeStatus(pool: SandboxWarmPool, c: Counts, now: string): SandboxWarmPoolStatus {
  const generation = pool.metadata.generation;
  const filled = c.ready >= pool.spec.replicas;
  const message = filled
    ? `${c.ready} of ${pool.spec.replicas} members ready`
    : c.atCapacity
      ? `${c.ready} of ${pool.spec.replicas} members ready; the installation's sandbox capacity (${c.capacity}) is reached, so no more members are started`
      : `${c.ready} of ${pool.spec.replicas} members ready; starting the rest`;
  return {
    observedGeneration: generation,
    replicas: c.replicas,
    readyReplicas: c.ready,
    claimed: c.claimed,
    selector: `${LABEL_WARM_POOL}=${pool.metadata.name}`,
    conditions: setCondition(
      pool.status?.conditions ?? [],
      { type: ConditionType.Ready, status: filled ? 'True' : 'False', reason: filled ? Reason.PoolFilled : c.atCapacity ? Reason.CapacityExceeded : Reason.PoolFilling, message },
      now,
      generation,
    ),
  };
}

/** A member's change wakes its pool; so does a claimed sandbox's (the claim count). */
export function poolKeysOfSandbox(obj: KubeObject): string[] {
  const labels = obj.metadata.labels ?? {};
  const pool = labels[LABEL_WARM_POOL] ?? labels[LABEL_CLAIMED_FROM];
  return pool ? [objectKey(obj.metadata.namespace, pool)] : [];
}
