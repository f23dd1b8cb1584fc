// Leader election through a coordination.k8s.io/v1 Lease, with client-go's semantics: acquire a
// free or expired lease, renew it every retry period, and stop leading the moment renewal has not
// succeeded within the renew deadline. Only the leader runs the controller; a replica that loses
// the lease must exit (as controller-runtime does), so two leaders never act at once.
import { CoordinationV1Api, V1MicroTime, type KubeConfig, type V1Lease } from '@kubernetes/client-node';
import { setTimeout as sleep } from 'node:timers/promises';
import { Conflict, NotFound } from '../api/errors.ts';
import { fromKube } from '../store/kube/errors.ts';
import type { Logger } from '../util/log.ts';
import { systemClock, type Clock } from './clock.ts';

export interface LeaderElectionOptions {
  kubeConfig: KubeConfig;
  namespace: string;
  name: string;
  identity: string;
  leaseDurationMs?: number;
  renewDeadlineMs?: number;
  retryPeriodMs?: number;
  clock?: Clock;
  log?: Logger;
}

export interface LeaderCallbacks {
  /** Runs while leading; `signal` aborts when leadership is lost or the election is cancelled. */
  onStartedLeading(signal: AbortSignal): void | Promise<void>;
  onStoppedLeading(): void;
}

export class LeaderElector {
  readonly #api: CoordinationV1Api;
  readonly #o: Required<Omit<LeaderElectionOptions, 'kubeConfig' | 'log'>> & { log?: Logger };

  constructor(opts: LeaderElectionOptions) {
    this.#api = opts.kubeConfig.makeApiClient(CoordinationV1Api);
    this.#o = { leaseDurationMs: 15_000, renewDeadlineMs: 10_000, retryPeriodMs: 2_000, clock: systemClock, ...opts };
  }

  /** Campaigns until `signal` aborts. Releases the lease on cancel so a successor takes over at once. */
  async run(callbacks: LeaderCallbacks, signal: AbortSignal): Promise<void> {
    while (!signal.aborted) {
      if (await this.#tryAcquireOrRenew()) break;
      await sleep(this.#o.retryPeriodMs, undefined, { signal }).catch(() => undefined);
    }
    if (signal.aborted) return;
    this.#o.log?.info({ identity: this.#o.identity, lease: this.#o.name }, 'started leading');
    const leading = new AbortController();
    const work = Promise.resolve(callbacks.onStartedLeading(leading.signal));
    let lastRenew = Date.now();
    while (!signal.aborted) {
      await sleep(this.#o.retryPeriodMs, undefined, { signal }).catch(() => undefined);
      if (signal.aborted) break;
      if (await this.#tryAcquireOrRenew().catch(() => false)) lastRenew = Date.now();
      else if (Date.now() - lastRenew >= this.#o.renewDeadlineMs) break;
    }
    leading.abort();
    await work.catch(() => undefined);
    if (signal.aborted) await this.#release().catch(() => undefined);
    this.#o.log?.warn({ identity: this.#o.identity }, 'stopped leading');
    callbacks.onStoppedLeading();
  }

  async #tryAcquireOrRenew(): Promise<boolean> {
    const { namespace, name, identity } = this.#o;
    const now = new V1MicroTime(this.#o.clock.now().toMillis());
    const durationSeconds = Math.ceil(this.#o.leaseDurationMs / 1000);
    let lease: V1Lease | undefined;
    try {
      lease = await this.#api.readNamespacedLease({ name, namespace });
    } catch (err) {
      if (!(fromKube(err, `Lease ${name}`) instanceof NotFound)) throw fromKube(err, `Lease ${name}`);
    }
    if (!lease) {
      return this.#write(() =>
        this.#api.createNamespacedLease({
          namespace,
          body: { metadata: { name, namespace }, spec: { holderIdentity: identity, leaseDurationSeconds: durationSeconds, acquireTime: now, renewTime: now, leaseTransitions: 0 } },
        }),
      );
    }
    const spec = lease.spec ?? {};
    const holder = spec.holderIdentity ?? '';
    const expiresAt = (spec.renewTime ? new Date(spec.renewTime).getTime() : 0) + (spec.leaseDurationSeconds ?? durationSeconds) * 1000;
    if (holder && holder !== identity && expiresAt > now.getTime()) return false;
    const taking = holder !== identity;
    lease.spec = {
      ...spec,
      holderIdentity: identity,
      leaseDurationSeconds: durationSeconds,
      renewTime: now,
      ...(taking ? { acquireTime: now, leaseTransitions: (spec.leaseTransitions ?? 0) + (holder ? 1 : 0) } : {}),
    };
    return this.#write(() => this.#api.replaceNamespacedLease({ name, namespace, body: lease }));
  }

  /** Optimistic concurrency: a 409 means another candidate won this round. */
  async #write(call: () => Promise<unknown>): Promise<boolean> {
    try {
      await call();
      return true;
    } catch (err) {
      const mapped = fromKube(err, `Lease ${this.#o.name}`);
      if (mapped instanceof Conflict) return false;
      throw mapped;
    }
  }

  async #release(): Promise<void> {
    const lease = await this.#api.readNamespacedLease({ name: this.#o.name, namespace: this.#o.namespace });
    if (lease.spec?.holderIdentity !== this.#o.identity) return;
    lease.spec = { ...lease.spec, holderIdentity: '', leaseDurationSeconds: 1 };
    await this.#api.replaceNamespacedLease({ name: this.#o.name, namespace: this.#o.namespace, body: lease });
  }
}
