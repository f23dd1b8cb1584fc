// Leader election on a coordination.k8s.io/v1 Lease with client-go's semantics, so that of several
// controller replicas exactly one acts:
// - a candidate takes the Lease when it is free (holderIdentity '') or expired, and a leader renews
//   it every retry period;
// - "expired" is judged as client-go does, by the candidate's own clock: the record (holder,
//   renewTime, ...) has not changed for leaseDurationSeconds since this candidate first saw it.
//   Comparing another node's renewTime with the local clock would let clock skew make two leaders;
//   the price is that a freshly started candidate facing a dead holder's Lease waits one full lease
//   duration;
// - a leader that has not renewed within renewDeadline of the renewTime it last wrote stops at once:
//   it aborts the onStartedLeading signal and calls onStoppedLeading, even while a request hangs.
//   Others cannot take over before leaseDuration has passed since they saw that renewal, so the
//   gap leaseDuration - renewDeadline is the margin for clock rates and event-loop stalls;
// - on cancel it stops the work, keeps renewing until the work has finished, then releases the
//   Lease (holderIdentity '', leaseDurationSeconds 1), so a successor takes over at its next retry.
//
// Callers should exit the process from onStoppedLeading when leadership was lost (not cancelled),
// as controller-runtime does: in-process demotion cannot prove that every piece of work stopped.
import type { KubeConfig } from '@kubernetes/client-node';
import { setTimeout as delay } from 'node:timers/promises';
import { Invalid, type ValidationIssue } from '../../api/errors.ts';
import { createLogger, type Logger } from '../../util/log.ts';
import { systemClock, type Clock } from '../clock.ts';
import { KubeLeaseLock, type LeaderElectionRecord, type LeaseLock } from './lease-lock.ts';

/** Waits `ms`, or less when `signal` aborts first. Never rejects. */
export type Sleep = (ms: number, signal?: AbortSignal) => Promise<void>;

export const realSleep: Sleep = (ms, signal) => delay(ms, undefined, signal ? { signal } : {}).catch(() => undefined);

export type LeaseTarget =
  | { kubeConfig: KubeConfig; namespace: string; name: string }
  /** Any LeaseLock, e.g. MemoryLease's in unit tests. */
  | { lock: LeaseLock };

export type LeaderElectorOptions = LeaseTarget & {
  /** Unique per replica (e.g. hostname plus a random suffix); written as holderIdentity. */
  identity: string;
  /** How long others wait after the last renewal they saw; recorded in whole seconds (rounded up). */
  leaseDurationMs?: number;
  /** The leader gives up when it has not renewed for this long. Must be < leaseDurationMs. */
  renewDeadlineMs?: number;
  /** Pause between attempts, both to acquire and to renew. Must be < renewDeadlineMs. */
  retryPeriodMs?: number;
  /** Wall time written into the Lease and used to judge expiry. */
  clock?: Clock;
  /** How the elector waits; tests pass one driven by a ManualClock. */
  sleep?: Sleep;
  /** Release the Lease on cancel so a successor takes over at once. Default true. */
  releaseOnCancel?: boolean;
  log?: Logger;
};

export interface LeaderCallbacks {
  /**
   * Called once the Lease is ours. Act only while `signal` is not aborted: it aborts the moment
   * leadership is lost or the election is cancelled. Returning early does not give up the Lease;
   * throwing (or rejecting) does: the elector releases it and run() rejects with that error.
   */
  onStartedLeading(signal: AbortSignal): Promise<void> | void;
  /**
   * Called once after leading ended: at once when leadership is lost (exit the process there), or
   * after the work finished and the Lease was released when the election was cancelled.
   * Not called when this replica never led.
   */
  onStoppedLeading(): void;
  /** Every change of holder seen, this replica included; '' when the Lease was released. */
  onNewLeader?(identity: string): void;
}

type Attempt = 'ok' | 'held' | 'failed';

export class LeaderElector {
  readonly identity: string;
  readonly description: string;
  readonly #lock: LeaseLock;
  readonly #leaseDurationMs: number;
  readonly #renewDeadlineMs: number;
  readonly #retryPeriodMs: number;
  readonly #clock: Clock;
  readonly #sleep: Sleep;
  readonly #releaseOnCancel: boolean;
  readonly #log: Logger;
  #observed: LeaderElectionRecord | undefined;
  #observedKey = '';
  #observedAt = 0;
  /** The renewTime of our last successful write while leading (ms); the renew deadline counts from it. */
  #renewedAt: number | undefined;
  #reported: string | undefined;
  #callbacks: LeaderCallbacks | undefined;

  constructor(opts: LeaderElectorOptions) {
    this.identity = opts.identity;
    this.#lock = 'lock' in opts ? opts.lock : new KubeLeaseLock(opts.kubeConfig, opts.namespace, opts.name);
    this.description = this.#lock.description;
    this.#leaseDurationMs = opts.leaseDurationMs ?? 15_000;
    this.#renewDeadlineMs = opts.renewDeadlineMs ?? 10_000;
    this.#retryPeriodMs = opts.retryPeriodMs ?? 2_000;
    this.#clock = opts.clock ?? systemClock;
    this.#sleep = opts.sleep ?? realSleep;
    this.#releaseOnCancel = opts.releaseOnCancel ?? true;
    this.#log = (opts.log ?? createLogger('leader-election')).child({ lease: this.description, identity: this.identity });
    const issues = validate(this.identity, this.#leaseDurationMs, this.#renewDeadlineMs, this.#retryPeriodMs);
    if (issues.length > 0) throw new Invalid(issues);
  }

  /**
   * True while this replica holds the Lease and is within the renew deadline, by the clock right
   * now. Work may check it before an irreversible step: it stays correct even when the event loop
   * was stalled and the signal's timer has not fired yet.
   */
  isLeading(): boolean {
    return this.#renewedAt !== undefined && this.#now() < this.#renewedAt + this.#renewDeadlineMs;
  }

  /** The holder last seen in the Lease ('' if released, undefined before the first read). */
  get observedLeader(): string | undefined {
    return this.#observed?.holderIdentity;
  }

  /**
   * Campaigns until `signal` aborts, leads when elected, and resolves when leading has ended (lost
   * or cancelled) or when cancelled before winning. One run at a time per elector.
   */
  async run(callbacks: LeaderCallbacks, signal: AbortSignal): Promise<void> {
    if (this.#callbacks) throw new Error(`LeaderElector ${this.identity}: run() is already in progress`);
    this.#callbacks = callbacks;
    try {
      if (!(await this.#acquire(signal))) return;
      if (signal.aborted) {
        await this.#release(); // won while being cancelled: never started, hand the Lease on
        return;
      }
      await this.#lead(callbacks, signal);
    } finally {
      this.#renewedAt = undefined;
      this.#callbacks = undefined;
    }
  }

  async #acquire(signal: AbortSignal): Promise<boolean> {
    this.#log.info('campaigning for leadership');
    while (!signal.aborted) {
      const attempt = await this.#attemptWithin(this.#renewDeadlineMs, signal);
      if (attempt === 'ok') return true;
      await this.#sleep(this.#retryPeriodMs, signal);
    }
    return false;
  }

  async #lead(callbacks: LeaderCallbacks, signal: AbortSignal): Promise<void> {
    this.#log.info('started leading');
    const leading = new AbortController();
    const ended = new AbortController(); // cancel, or the work failed
    const onCancel = (): void => ended.abort();
    signal.addEventListener('abort', onCancel, { once: true });
    let failure: { error: unknown } | undefined;
    const work = (async () => callbacks.onStartedLeading(leading.signal))().then(
      () => undefined,
      (error: unknown) => {
        failure = { error };
        ended.abort();
      },
    );
    let lost = (await this.#renewUntil(ended.signal)) === 'lost';
    signal.removeEventListener('abort', onCancel);
    leading.abort();
    if (lost) {
      this.#stopped('lost the lease: could not renew it within the renew deadline');
      await work;
      return;
    }
    // Cancelled or failed: keep the Lease while the work winds down, so nobody else starts early.
    const drained = new AbortController();
    void work.then(() => drained.abort());
    lost = (await this.#renewUntil(drained.signal)) === 'lost';
    if (lost) this.#stopped('lost the lease while stopping');
    await work;
    if (!lost) {
      if (this.#releaseOnCancel || failure) await this.#release();
      this.#stopped(failure ? 'stopped leading: the work failed' : 'stopped leading: cancelled');
    }
    if (failure) throw failure.error;
  }

  #stopped(why: string): void {
    this.#renewedAt = undefined;
    this.#log.warn(why);
    this.#callbacks?.onStoppedLeading();
  }

  /** Renews every retry period until `until` aborts ('ended') or the renew deadline passes ('lost'). */
  async #renewUntil(until: AbortSignal): Promise<'ended' | 'lost'> {
    for (;;) {
      if (this.#renewedAt === undefined) return 'lost';
      const left = this.#renewedAt + this.#renewDeadlineMs - this.#now();
      if (left <= 0) return 'lost';
      if (until.aborted) return 'ended';
      await this.#sleep(Math.min(this.#retryPeriodMs, left), until);
      if (until.aborted) return 'ended';
      const remaining = this.#renewedAt + this.#renewDeadlineMs - this.#now();
      if (remaining <= 0) return 'lost';
      const attempt = await this.#attemptWithin(remaining);
      if (attempt === 'held') return 'lost'; // someone else holds a valid Lease: no point waiting
    }
  }

  /** One tryAcquireOrRenew, abandoned (and its request aborted) after `ms` or when `signal` aborts. */
  async #attemptWithin(ms: number, signal?: AbortSignal): Promise<Attempt> {
    const done = new AbortController();
    // Forwarded by hand rather than AbortSignal.any: a standby makes an attempt every retry period
    // for as long as it runs, and each would hang one more dependent signal on `signal`.
    const forward = (): void => done.abort();
    if (signal?.aborted) return 'failed';
    signal?.addEventListener('abort', forward, { once: true });
    const timedOut = this.#sleep(ms, done.signal).then((): Attempt => 'failed');
    try {
      return await Promise.race([this.#tryAcquireOrRenew(done.signal), timedOut]);
    } finally {
      signal?.removeEventListener('abort', forward);
      done.abort();
    }
  }

  async #tryAcquireOrRenew(signal: AbortSignal): Promise<Attempt> {
    const now = this.#now();
    const fresh: LeaderElectionRecord = {
      holderIdentity: this.identity,
      leaseDurationSeconds: Math.ceil(this.#leaseDurationMs / 1000),
      acquireTime: new Date(now),
      renewTime: new Date(now),
      leaseTransitions: 0,
    };
    try {
      // Fast path: the leader writes on the version it last wrote, without reading first.
      const mine = this.#observed;
      if (mine && mine.holderIdentity === this.identity && this.#valid(now)) {
        const written = await this.#lock.update({ ...fresh, ...kept(mine) }, signal);
        if (written) return this.#won(written.record, now, signal);
        // 409: the Lease changed under us; read it and decide like any candidate.
      }
      const got = await this.#lock.get(signal);
      if (!got) {
        const created = await this.#lock.create(fresh, signal);
        return created ? this.#won(created.record, now, signal) : 'failed';
      }
      this.#observe(got.record);
      const holder = got.record.holderIdentity;
      if (holder !== '' && holder !== this.identity && this.#valid(now)) return 'held';
      const record = holder === this.identity ? { ...fresh, ...kept(got.record) } : { ...fresh, leaseTransitions: got.record.leaseTransitions + 1 };
      const written = await this.#lock.update(record, signal);
      return written ? this.#won(written.record, now, signal) : 'failed';
    } catch (err) {
      if (!signal.aborted) this.#log.warn({ err }, 'could not read or write the Lease');
      return 'failed';
    }
  }

  #won(record: LeaderElectionRecord, at: number, signal: AbortSignal): Attempt {
    // An answer that arrives after the attempt was abandoned is not trusted: the deadline passed.
    if (signal.aborted) return 'failed';
    this.#observe(record);
    this.#renewedAt = at;
    return 'ok';
  }

  async #release(): Promise<void> {
    const mine = this.#observed;
    if (!mine || mine.holderIdentity !== this.identity) return;
    const now = new Date(this.#now());
    const record: LeaderElectionRecord = { holderIdentity: '', leaseDurationSeconds: 1, acquireTime: now, renewTime: now, leaseTransitions: mine.leaseTransitions };
    const done = new AbortController();
    const timedOut = this.#sleep(this.#renewDeadlineMs, done.signal).then(() => undefined);
    try {
      const written = await Promise.race([this.#lock.update(record, done.signal), timedOut]);
      if (written) {
        this.#observe(written.record);
        this.#log.info('released the lease');
      } else this.#log.warn('could not release the lease: it changed meanwhile, or the API server did not answer');
    } catch (err) {
      this.#log.warn({ err }, 'could not release the lease; others take over when it expires');
    } finally {
      done.abort();
    }
  }

  /** Remembers a record; the expiry clock restarts only when the record differs from the last one seen. */
  #observe(record: LeaderElectionRecord): void {
    const key = JSON.stringify([record.holderIdentity, record.leaseDurationSeconds, record.acquireTime?.getTime(), record.renewTime?.getTime(), record.leaseTransitions]);
    if (key !== this.#observedKey) {
      this.#observed = record;
      this.#observedKey = key;
      this.#observedAt = this.#now();
    }
    if (record.holderIdentity !== this.#reported) {
      this.#reported = record.holderIdentity;
      this.#log.info({ leader: record.holderIdentity }, 'new leader observed');
      try {
        this.#callbacks?.onNewLeader?.(record.holderIdentity);
      } catch (err) {
        this.#log.error({ err }, 'onNewLeader threw');
      }
    }
  }

  /** Whether the last record seen is still within its lease duration, by our own clock. */
  #valid(now: number): boolean {
    return this.#observedAt + (this.#observed?.leaseDurationSeconds ?? 0) * 1000 > now;
  }

  #now(): number {
    return this.#clock.now().toMillis();
  }
}

function kept(record: LeaderElectionRecord): Pick<LeaderElectionRecord, 'acquireTime' | 'leaseTransitions'> {
  return { ...(record.acquireTime ? { acquireTime: record.acquireTime } : {}), leaseTransitions: record.leaseTransitions };
}

function validate(identity: string, lease: number, renew: number, retry: number): ValidationIssue[] {
  const issues: ValidationIssue[] = [];
  const issue = (field: string, msg: string): number => issues.push({ loc: [field], msg, type: 'value_error' });
  if (!identity) issue('identity', 'identity must not be empty');
  for (const [field, v] of [['leaseDurationMs', lease], ['renewDeadlineMs', renew], ['retryPeriodMs', retry]] as const) {
    if (!(Number.isFinite(v) && v > 0)) issue(field, `${field} must be a positive number of milliseconds`);
  }
  if (!(lease > renew)) issue('leaseDurationMs', 'leaseDurationMs must be greater than renewDeadlineMs');
  if (!(renew > retry)) issue('renewDeadlineMs', 'renewDeadlineMs must be greater than retryPeriodMs');
  return issues;
}
