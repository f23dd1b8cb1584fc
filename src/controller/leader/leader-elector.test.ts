// LeaderElector against an in-memory Lease with the API server's concurrency rules, on virtual
// time: every instant below is exact, so the tests assert when things happen, not just that they do.
import { afterEach, describe, expect, it } from 'vitest';
import { Invalid } from '../../api/errors.ts';
import { LeaderElector, type LeaderElectorOptions } from './leader-elector.ts';
import { MemoryLease, type MemoryLeaseLock } from './memory-lease-lock.ts';
import { VirtualTime } from './virtual-time.ts';

const LEASE = 15_000;
const RENEW = 10_000;
const RETRY = 2_000;

interface Candidate {
  id: string;
  elector: LeaderElector;
  lock: MemoryLeaseLock;
  cancel: AbortController;
  /** Virtual instants of the callbacks. */
  startedAt?: number;
  workAbortedAt?: number;
  stoppedAt?: number;
  leaders: string[];
  done: Promise<void>;
  result: { error?: unknown; settled: boolean };
}

describe('LeaderElector', () => {
  let vt: VirtualTime;
  let lease: MemoryLease;
  const running: Candidate[] = [];

  function candidate(id: string, opts: Partial<LeaderElectorOptions> & { work?: (signal: AbortSignal) => Promise<void> } = {}): Candidate {
    const lock = lease.lock();
    const elector = new LeaderElector({ lock, identity: id, clock: vt.clock, sleep: vt.sleep, ...opts } as LeaderElectorOptions);
    const c: Candidate = { id, elector, lock, cancel: new AbortController(), leaders: [], done: Promise.resolve(), result: { settled: false } };
    c.done = elector
      .run(
        {
          onStartedLeading: async (signal) => {
            c.startedAt = vt.now;
            signal.addEventListener('abort', () => (c.workAbortedAt = vt.now), { once: true });
            await opts.work?.(signal);
          },
          onStoppedLeading: () => (c.stoppedAt = vt.now),
          onNewLeader: (leader) => c.leaders.push(leader),
        },
        c.cancel.signal,
      )
      .then(
        () => void (c.result.settled = true),
        (error: unknown) => void Object.assign(c.result, { settled: true, error }),
      );
    running.push(c);
    return c;
  }

  const leaders = (): string[] => running.filter((c) => c.startedAt !== undefined && c.stoppedAt === undefined).map((c) => c.id);

  afterEach(async () => {
    for (const c of running) c.cancel.abort();
    for (const c of running) c.lock.fault = undefined;
    await vt.advance(LEASE * 2);
    await Promise.all(running.map((c) => c.done));
    running.length = 0;
    expect(vt.pending).toBe(0); // every loop ended: no parked timers
  });

  function fresh(): void {
    vt = new VirtualTime();
    lease = new MemoryLease();
  }

  it('refuses durations that cannot keep one leader', () => {
    fresh();
    const lock = new MemoryLease().lock();
    expect(() => new LeaderElector({ lock, identity: 'a', leaseDurationMs: 10_000, renewDeadlineMs: 10_000 })).toThrow(Invalid);
    expect(() => new LeaderElector({ lock, identity: 'a', renewDeadlineMs: 2_000, retryPeriodMs: 2_000 })).toThrow(Invalid);
    expect(() => new LeaderElector({ lock, identity: '' })).toThrow(Invalid);
  });

  it('creates the Lease, leads at once and renews it every retry period', async () => {
    fresh();
    const t0 = vt.now;
    const a = candidate('a');
    await vt.settle();
    expect(a.startedAt).toBe(t0);
    expect(lease.current?.record).toEqual({ holderIdentity: 'a', leaseDurationSeconds: 15, acquireTime: new Date(t0), renewTime: new Date(t0), leaseTransitions: 0 });
    expect(a.elector.isLeading()).toBe(true);
    await vt.advance(3 * RETRY);
    expect(lease.current?.record).toMatchObject({ holderIdentity: 'a', acquireTime: new Date(t0), renewTime: new Date(t0 + 3 * RETRY), leaseTransitions: 0 });
    expect(lease.writes).toHaveLength(4);
    expect(a.leaders).toEqual(['a']);
  });

  it('lets exactly one of two candidates lead while the leader renews', async () => {
    fresh();
    const a = candidate('a');
    const b = candidate('b');
    await vt.advance(10 * LEASE);
    expect(leaders()).toEqual(['a']);
    expect(b.startedAt).toBeUndefined();
    expect(b.leaders).toEqual(['a']);
    expect(b.elector.observedLeader).toBe('a');
    expect(lease.current?.record.leaseTransitions).toBe(0);
    expect(a.elector.isLeading() && !b.elector.isLeading()).toBe(true);
  });

  it('four candidates racing for a missing Lease: one create wins, one leader', async () => {
    fresh();
    const all = ['a', 'b', 'c', 'd'].map((id) => candidate(id));
    await vt.advance(5 * LEASE);
    expect(leaders()).toHaveLength(1);
    expect(all.filter((c) => c.startedAt !== undefined)).toHaveLength(1);
  });

  for (const fault of ['hang', 'fail'] as const) {
    it(`replaces a leader whose API calls ${fault === 'hang' ? 'hang' : 'fail'}: the old one stops at its renew deadline, the new one starts after the lease expired`, async () => {
      fresh();
      const a = candidate('a');
      const b = candidate('b');
      await vt.advance(5 * RETRY + 500); // a renewed at +10 s; b has seen that renewal
      const lastRenew = lease.current!.record.renewTime!.getTime();
      a.lock.fault = fault; // a is cut off from the API server but keeps running
      await vt.until(() => b.startedAt !== undefined, 3 * LEASE);

      expect(a.workAbortedAt).toBe(lastRenew + RENEW); // exactly at the deadline, request or not
      expect(a.stoppedAt).toBe(lastRenew + RENEW);
      expect(a.result.settled).toBe(true);
      const takeover = b.startedAt! - lastRenew;
      expect(takeover).toBeGreaterThan(LEASE);
      expect(takeover).toBeLessThanOrEqual(LEASE + 2 * RETRY);
      expect(a.stoppedAt!).toBeLessThan(b.startedAt!); // never two leaders
      expect(lease.current?.record).toMatchObject({ holderIdentity: 'b', leaseTransitions: 1, acquireTime: new Date(b.startedAt!) });
      expect(b.leaders).toEqual(['a', 'b']);
    });
  }

  it('keeps leading through API failures shorter than the renew deadline', async () => {
    fresh();
    const a = candidate('a');
    const b = candidate('b');
    await vt.advance(RETRY);
    a.lock.fault = 'fail';
    await vt.advance(RENEW - RETRY - 1);
    a.lock.fault = undefined;
    await vt.advance(3 * LEASE);
    expect(leaders()).toEqual(['a']);
    expect(a.stoppedAt).toBeUndefined();
    expect(b.startedAt).toBeUndefined();
  });

  it('stops at once when it sees someone else holding the Lease', async () => {
    fresh();
    const a = candidate('a');
    await vt.advance(RETRY);
    const intruder = lease.lock();
    await intruder.get();
    await intruder.update({ holderIdentity: 'intruder', leaseDurationSeconds: 15, leaseTransitions: 1, renewTime: new Date(vt.now) });
    const seenAt = vt.now;
    await vt.advance(RETRY);
    expect(a.stoppedAt).toBe(seenAt + RETRY); // at its next renewal, not at its deadline
    expect(a.leaders).toEqual(['a', 'intruder']);
  });

  it('on cancel stops the work, keeps the Lease until the work is done, then releases it for an immediate takeover', async () => {
    fresh();
    let workDoneAt: number | undefined;
    const a = candidate('a', {
      // Winding down takes 30 s (well past the lease duration): the Lease must stay renewed meanwhile.
      work: async (signal) => {
        await new Promise<void>((r) => signal.addEventListener('abort', () => r(), { once: true }));
        await vt.sleep(30_000);
        workDoneAt = vt.now;
      },
    });
    const b = candidate('b');
    await vt.advance(RETRY + 100);
    const cancelledAt = vt.now;
    a.cancel.abort();
    await vt.until(() => b.startedAt !== undefined, 60_000);

    expect(a.workAbortedAt).toBe(cancelledAt);
    expect(workDoneAt).toBe(cancelledAt + 30_000);
    expect(a.stoppedAt).toBe(workDoneAt);
    expect(b.startedAt! - workDoneAt!).toBeLessThanOrEqual(RETRY); // released: no wait for expiry
    expect(lease.writes.some((w) => w.holderIdentity === '' && w.leaseDurationSeconds === 1)).toBe(true);
    expect(lease.current?.record).toMatchObject({ holderIdentity: 'b', leaseTransitions: 1 });
    expect(b.leaders).toEqual(['a', '', 'b']);
  });

  it('without releaseOnCancel leaves the Lease to expire', async () => {
    fresh();
    const a = candidate('a', { releaseOnCancel: false });
    const b = candidate('b');
    await vt.advance(RETRY);
    const lastRenew = lease.current!.record.renewTime!.getTime();
    a.cancel.abort();
    await vt.until(() => b.startedAt !== undefined, 3 * LEASE);
    expect(a.stoppedAt).toBe(lastRenew);
    expect(b.startedAt! - lastRenew).toBeGreaterThan(LEASE);
  });

  it('gives the Lease up and rejects when the work fails', async () => {
    fresh();
    const boom = new Error('controller failed to start');
    const a = candidate('a', { work: async () => Promise.reject(boom) });
    const b = candidate('b');
    await vt.until(() => b.startedAt !== undefined, 2 * RETRY);
    expect(a.result).toMatchObject({ settled: true, error: boom });
    expect(a.stoppedAt).toBeDefined();
  });

  it('judges expiry by its own clock: a newcomer waits one lease duration after first seeing a dead holder', async () => {
    fresh();
    const dead = lease.lock();
    await dead.create({ holderIdentity: 'dead', leaseDurationSeconds: 15, leaseTransitions: 3, renewTime: new Date(vt.now - 3_600_000) });
    const firstSeen = vt.now;
    const b = candidate('b');
    await vt.until(() => b.startedAt !== undefined, 3 * LEASE);
    expect(b.startedAt! - firstSeen).toBeGreaterThan(LEASE);
    expect(b.startedAt! - firstSeen).toBeLessThanOrEqual(LEASE + RETRY);
    expect(lease.current?.record.leaseTransitions).toBe(4);
  });

  it('takes a released Lease at once', async () => {
    fresh();
    const prior = lease.lock();
    await prior.create({ holderIdentity: '', leaseDurationSeconds: 1, leaseTransitions: 2, renewTime: new Date(vt.now) });
    const b = candidate('b');
    await vt.settle();
    expect(b.startedAt).toBe(vt.now);
    expect(lease.current?.record.leaseTransitions).toBe(3);
  });

  it('isLeading() turns false at the deadline even before the timers fire', async () => {
    fresh();
    const a = candidate('a');
    await vt.settle();
    vt.clock.advance(RENEW - 1);
    expect(a.elector.isLeading()).toBe(true);
    vt.clock.advance(1);
    expect(a.elector.isLeading()).toBe(false);
  });

  it('cancelled before winning: returns without leading, stopping or writing', async () => {
    fresh();
    candidate('a');
    const b = candidate('b');
    await vt.advance(RETRY);
    const writes = lease.writes.length;
    b.cancel.abort();
    await vt.advance(RETRY);
    expect(b.result.settled).toBe(true);
    expect(b.startedAt).toBeUndefined();
    expect(b.stoppedAt).toBeUndefined();
    expect(lease.writes.slice(writes).every((w) => w.holderIdentity === 'a')).toBe(true);
  });

  it('refuses a second concurrent run', async () => {
    fresh();
    const a = candidate('a');
    await expect(a.elector.run({ onStartedLeading: () => {}, onStoppedLeading: () => {} }, new AbortController().signal)).rejects.toThrow(/already in progress/);
  });
});
