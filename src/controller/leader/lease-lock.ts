// The lock a LeaderElector campaigns for: one coordination.k8s.io/v1 Lease, read and written with
// optimistic concurrency. An update carries the resourceVersion of the last object this lock saw,
// so of two candidates that read the same version only one write succeeds; the other gets 409 and
// learns that someone else won this round (client-go's resourcelock.LeaseLock does the same).
import {
  CoordinationV1Api,
  V1MicroTime,
  Observable,
  type ConfigurationOptions,
  type KubeConfig,
  type ObservableMiddleware,
  type V1Lease,
} from '@kubernetes/client-node';
import { Conflict, NotFound } from '../../api/errors.ts';
import { apiClient } from '../../store/kube/api-client.ts';
import { fromKube } from '../../store/kube/errors.ts';

/** The election state a Lease carries (client-go's LeaderElectionRecord). */
export interface LeaderElectionRecord {
  /** '' when nobody holds the lease (never acquired, or released). */
  holderIdentity: string;
  leaseDurationSeconds: number;
  acquireTime?: Date;
  renewTime?: Date;
  leaseTransitions: number;
}

export interface LeaseObservation {
  record: LeaderElectionRecord;
  resourceVersion: string;
}

export interface LeaseLock {
  /** "namespace/name", for logs. */
  readonly description: string;
  /** The Lease as it is now, or undefined when it does not exist. */
  get(signal?: AbortSignal): Promise<LeaseObservation | undefined>;
  /** Creates the Lease; undefined when another candidate created it first (409 AlreadyExists). */
  create(record: LeaderElectionRecord, signal?: AbortSignal): Promise<LeaseObservation | undefined>;
  /**
   * Replaces the record on the version this lock last read or wrote; undefined when the Lease has
   * changed since (409 Conflict). Must follow a get() or create() that returned a Lease.
   */
  update(record: LeaderElectionRecord, signal?: AbortSignal): Promise<LeaseObservation | undefined>;
}

/** A Lease in the cluster, through CoordinationV1Api. Errors other than 409 throw AgentyardErrors. */
export class KubeLeaseLock implements LeaseLock {
  readonly description: string;
  readonly #api: CoordinationV1Api;
  readonly #namespace: string;
  readonly #name: string;
  /** The object of the last successful get/create/update: its resourceVersion is the precondition. */
  #lease: V1Lease | undefined;

  constructor(kubeConfig: KubeConfig, namespace: string, name: string) {
    this.#api = apiClient(kubeConfig, CoordinationV1Api);
    this.#namespace = namespace;
    this.#name = name;
    this.description = `${namespace}/${name}`;
  }

  async get(signal?: AbortSignal): Promise<LeaseObservation | undefined> {
    try {
      this.#lease = await this.#api.readNamespacedLease({ name: this.#name, namespace: this.#namespace }, withSignal(signal));
    } catch (err) {
      const mapped = fromKube(err, `Lease ${this.description}`);
      if (mapped instanceof NotFound) {
        this.#lease = undefined;
        return undefined;
      }
      throw mapped;
    }
    return observe(this.#lease);
  }

  async create(record: LeaderElectionRecord, signal?: AbortSignal): Promise<LeaseObservation | undefined> {
    const body: V1Lease = { metadata: { name: this.#name, namespace: this.#namespace }, spec: toSpec(record) };
    return this.#write(() => this.#api.createNamespacedLease({ namespace: this.#namespace, body }, withSignal(signal)));
  }

  async update(record: LeaderElectionRecord, signal?: AbortSignal): Promise<LeaseObservation | undefined> {
    const last = this.#lease;
    if (!last) throw new Error(`Lease ${this.description}: update() before a get() or create() that returned the Lease`);
    // Keeps every other field (labels, spec.strategy, preferredHolder) as read.
    const body: V1Lease = { ...last, spec: { ...last.spec, ...toSpec(record) } };
    return this.#write(() => this.#api.replaceNamespacedLease({ name: this.#name, namespace: this.#namespace, body }, withSignal(signal)));
  }

  async #write(call: () => Promise<V1Lease>): Promise<LeaseObservation | undefined> {
    try {
      this.#lease = await call();
      return observe(this.#lease);
    } catch (err) {
      const mapped = fromKube(err, `Lease ${this.description}`);
      if (mapped instanceof Conflict) return undefined;
      throw mapped;
    }
  }
}

function toSpec(record: LeaderElectionRecord): NonNullable<V1Lease['spec']> {
  return {
    holderIdentity: record.holderIdentity,
    leaseDurationSeconds: record.leaseDurationSeconds,
    leaseTransitions: record.leaseTransitions,
    // MicroTime: V1MicroTime serialises with six fractional digits, as the API server expects.
    ...(record.acquireTime ? { acquireTime: new V1MicroTime(record.acquireTime.getTime()) } : {}),
    ...(record.renewTime ? { renewTime: new V1MicroTime(record.renewTime.getTime()) } : {}),
  };
}

function observe(lease: V1Lease): LeaseObservation {
  const spec = lease.spec ?? {};
  return {
    resourceVersion: lease.metadata?.resourceVersion ?? '',
    record: {
      holderIdentity: spec.holderIdentity ?? '',
      leaseDurationSeconds: spec.leaseDurationSeconds ?? 0,
      leaseTransitions: spec.leaseTransitions ?? 0,
      // client-node 2.x leaves MicroTime fields as the strings it received; make them Dates.
      ...(spec.acquireTime ? { acquireTime: new Date(spec.acquireTime) } : {}),
      ...(spec.renewTime ? { renewTime: new Date(spec.renewTime) } : {}),
    },
  };
}

/** Per-request options that let `signal` abort the HTTP request (client-node has no signal parameter). */
function withSignal(signal: AbortSignal | undefined): ConfigurationOptions | undefined {
  if (!signal) return undefined;
  // The object-parameter API hands per-call options straight to the Observable API, so the
  // middleware is the Observable kind (client-node's own stub, a thin wrapper around a promise).
  const abortable: ObservableMiddleware = {
    pre: (ctx) => {
      ctx.setSignal(signal);
      return new Observable(Promise.resolve(ctx));
    },
    post: (res) => new Observable(Promise.resolve(res)),
  };
  return { middleware: [abortable], middlewareMergeStrategy: 'append' };
}
