// An in-process Lease with the API server's concurrency rules (resourceVersion preconditions, 409
// on a stale write), for unit tests of election logic. Each candidate gets its own lock from the
// shared MemoryLease, as each replica has its own client against one API server. Faults are
// injected per lock: 'fail' rejects like an unreachable server, 'hang' never answers until the
// request's signal aborts.
import { Unavailable } from '../../api/errors.ts';
import type { LeaderElectionRecord, LeaseLock, LeaseObservation } from './lease-lock.ts';

export type LockFault = 'fail' | 'hang' | undefined;

export class MemoryLease {
  #stored: LeaseObservation | undefined;
  #version = 0;
  readonly writes: LeaderElectionRecord[] = [];

  /** The current object, as `kubectl get lease` would show it. */
  get current(): LeaseObservation | undefined {
    return this.#stored && structuredClone(this.#stored);
  }

  lock(): MemoryLeaseLock {
    return new MemoryLeaseLock(this);
  }

  /** @internal used by MemoryLeaseLock */
  write(record: LeaderElectionRecord, expectVersion: string | undefined): LeaseObservation | undefined {
    if (expectVersion === undefined ? this.#stored !== undefined : this.#stored?.resourceVersion !== expectVersion) return undefined;
    this.#stored = { record: structuredClone(record), resourceVersion: String(++this.#version) };
    this.writes.push(structuredClone(record));
    return structuredClone(this.#stored);
  }
}

export class MemoryLeaseLock implements LeaseLock {
  readonly description = 'memory/lease';
  fault: LockFault;
  readonly #lease: MemoryLease;
  #lastVersion: string | undefined;

  constructor(lease: MemoryLease) {
    this.#lease = lease;
  }

  async get(signal?: AbortSignal): Promise<LeaseObservation | undefined> {
    await this.#maybeFault(signal);
    const current = this.#lease.current;
    this.#lastVersion = current?.resourceVersion;
    return current;
  }

  async create(record: LeaderElectionRecord, signal?: AbortSignal): Promise<LeaseObservation | undefined> {
    await this.#maybeFault(signal);
    return this.#remember(this.#lease.write(record, undefined));
  }

  async update(record: LeaderElectionRecord, signal?: AbortSignal): Promise<LeaseObservation | undefined> {
    await this.#maybeFault(signal);
    if (this.#lastVersion === undefined) throw new Error('update() before a get() or create() that returned the Lease');
    return this.#remember(this.#lease.write(record, this.#lastVersion));
  }

  #remember(written: LeaseObservation | undefined): LeaseObservation | undefined {
    if (written) this.#lastVersion = written.resourceVersion;
    return written;
  }

  async #maybeFault(signal: AbortSignal | undefined): Promise<void> {
    if (this.fault === 'fail') throw new Unavailable('Lease memory/lease: API server unreachable');
    if (this.fault === 'hang') {
      await new Promise<never>((_, reject) => {
        const abort = (): void => reject(signal?.reason ?? new Error('aborted'));
        if (signal?.aborted) abort();
        signal?.addEventListener('abort', abort, { once: true });
      });
    }
  }
}
