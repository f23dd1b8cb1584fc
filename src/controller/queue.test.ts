import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { TerminalError, WorkQueue } from './queue.ts';

describe('WorkQueue', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it('keeps a key queued at most once', async () => {
    const q = new WorkQueue();
    q.add('a');
    q.add('a');
    q.add('b');
    expect(q.length).toBe(2);
    expect(await q.get()).toBe('a');
    expect(await q.get()).toBe('b');
    q.shutdown();
  });

  it('hands out low-priority keys only when no other key waits; a plain add promotes one', async () => {
    const q = new WorkQueue();
    q.add('listed-1', { lowPriority: true });
    q.add('listed-2', { lowPriority: true });
    q.add('listed-3', { lowPriority: true });
    q.add('changed');
    q.add('listed-3'); // a change to a listed key: it moves to the front lane
    q.add('listed-1', { lowPriority: true }); // already queued: nothing changes
    expect([q.length, q.lowPriority]).toEqual([4, 2]);
    const order: string[] = [];
    for (let i = 0; i < 4; i++) order.push((await q.get())!);
    expect(order).toEqual(['changed', 'listed-3', 'listed-1', 'listed-2']);
    expect([q.length, q.lowPriority]).toEqual([0, 0]);
    q.shutdown();
  });

  it('serves a deadline that falls due while listed keys wait before those keys', async () => {
    const q = new WorkQueue();
    for (let i = 0; i < 1000; i++) q.add(`listed-${i}`, { lowPriority: true });
    q.addAfter('due', 50);
    expect(await q.get()).toBe('listed-0');
    await vi.advanceTimersByTimeAsync(50);
    expect(await q.get()).toBe('due');
    expect(await q.get()).toBe('listed-1');
    q.shutdown();
  });

  it('never hands a key to two workers, and re-runs a key dirtied while it was processed', async () => {
    const q = new WorkQueue();
    q.add('a');
    const key = await q.get();
    q.add('a'); // arrives while 'a' is processed
    expect(q.length).toBe(0);
    q.done(key!);
    expect(q.length).toBe(1);
    expect(await q.get()).toBe('a');
    q.shutdown();
  });

  it('backs off exponentially per key on errors and resets on success', async () => {
    const q = new WorkQueue({ baseDelayMs: 10 });
    const runs: number[] = [];
    let fail = 3;
    const worker = q.work(async () => {
      runs.push(Date.now());
      if (fail-- > 0) throw new Error('boom');
      return {};
    });
    q.add('a');
    await vi.advanceTimersByTimeAsync(1_000);
    expect(runs.length).toBe(4);
    const gaps = runs.slice(1).map((t, i) => t - runs[i]!);
    expect(gaps).toEqual([10, 20, 40]);
    expect(q.failures('a')).toBe(0);
    q.shutdown();
    await worker;
  });

  it('does not retry a TerminalError', async () => {
    const errors: boolean[] = [];
    const q = new WorkQueue({ baseDelayMs: 1, onError: (_k, _e, terminal) => errors.push(terminal) });
    let runs = 0;
    const worker = q.work(async () => {
      runs++;
      throw new TerminalError('no');
    });
    q.add('a');
    await vi.advanceTimersByTimeAsync(1_000);
    expect(runs).toBe(1);
    expect(errors).toEqual([true]);
    q.shutdown();
    await worker;
  });

  it('serves requeueAfter deadlines from one timer, the earliest first', async () => {
    const q = new WorkQueue();
    const seen: string[] = [];
    const worker = q.work(async (key) => {
      seen.push(`${key}@${Date.now()}`);
      return {};
    });
    const t0 = Date.now();
    q.addAfter('late', 300);
    q.addAfter('early', 100);
    q.addAfter('early', 200); // a later duplicate does not push the earlier deadline back
    await vi.advanceTimersByTimeAsync(500);
    expect(seen).toEqual([`early@${t0 + 100}`, `late@${t0 + 300}`]);
    q.shutdown();
    await worker;
  });

  it('requeues after the requested delay on success', async () => {
    const q = new WorkQueue();
    let runs = 0;
    const worker = q.work(async () => (++runs < 3 ? { requeueAfterMs: 1_000 } : {}));
    q.add('a');
    await vi.advanceTimersByTimeAsync(999);
    expect(runs).toBe(1);
    await vi.advanceTimersByTimeAsync(5_000);
    expect(runs).toBe(3);
    q.shutdown();
    await worker;
  });
});

describe('WorkQueue failure handling and shutdown', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it('turns a synchronous throw and a thrown non-Error into retried errors', async () => {
    const seen: string[] = [];
    const q = new WorkQueue({ baseDelayMs: 10, onError: (key, err) => seen.push(`${key}:${err instanceof Error}:${err.message}`) });
    let runs = 0;
    const worker = q.work(((key: string) => {
      runs++;
      if (key === 'sync') throw new Error('panic');
      return Promise.reject('a string');
    }) as never);
    q.add('sync');
    q.add('str');
    await vi.advanceTimersByTimeAsync(0);
    expect(seen).toEqual(['sync:true:panic', 'str:true:reconcile of str threw a string']);
    expect(q.failures('sync')).toBe(1);
    await vi.advanceTimersByTimeAsync(10);
    expect(runs).toBe(4); // both retried after the first backoff step
    q.shutdown();
    await worker;
  });

  it('caps the backoff at maxDelayMs', async () => {
    const q = new WorkQueue({ baseDelayMs: 5, maxDelayMs: 1_000_000 });
    const runs: number[] = [];
    const worker = q.work(async () => {
      runs.push(Date.now());
      throw new Error('always');
    });
    q.add('a');
    await vi.advanceTimersByTimeAsync(10_000_000);
    const gaps = runs.slice(1).map((t, i) => t - runs[i]!);
    expect(gaps.slice(0, 3)).toEqual([5, 10, 20]);
    expect(Math.max(...gaps)).toBe(1_000_000);
    q.shutdown();
    await worker;
  });

  it('aborts the pass signal after passTimeoutMs and retries the key', async () => {
    const q = new WorkQueue({ passTimeoutMs: 1_000, baseDelayMs: 50 });
    const reasons: unknown[] = [];
    let runs = 0;
    const worker = q.work(
      (_key, signal) =>
        new Promise((_resolve, reject) => {
          runs++;
          signal.addEventListener('abort', () => {
            reasons.push(signal.reason);
            reject(signal.reason as Error);
          });
        }),
    );
    q.add('slow');
    await vi.advanceTimersByTimeAsync(999);
    expect(reasons).toHaveLength(0);
    await vi.advanceTimersByTimeAsync(1);
    expect(String(reasons[0])).toMatch(/reconcile of slow timed out after 1000 ms/);
    await vi.advanceTimersByTimeAsync(50);
    expect(runs).toBe(2);
    await vi.advanceTimersByTimeAsync(1_000); // let the second pass time out too
    q.shutdown();
    await worker;
  });

  it('arms one timer however many keys wait, re-armed for the next deadline', async () => {
    const q = new WorkQueue();
    for (let i = 0; i < 1_000; i++) q.addAfter(`k${i}`, 1_000 + i);
    expect(vi.getTimerCount()).toBe(1);
    expect(q.delayed).toBe(1_000);
    await vi.advanceTimersByTimeAsync(1_000);
    expect(q.length).toBe(1);
    expect(vi.getTimerCount()).toBe(1);
    await vi.advanceTimersByTimeAsync(999);
    expect(q.length).toBe(1_000);
    expect(vi.getTimerCount()).toBe(0);
    q.shutdown();
  });

  it('waits out setTimeout limits for deadlines weeks away', async () => {
    const q = new WorkQueue();
    const thirtyDays = 30 * 24 * 3_600_000;
    q.addAfter('far', thirtyDays);
    await vi.advanceTimersByTimeAsync(thirtyDays - 1);
    expect(q.length).toBe(0);
    await vi.advanceTimersByTimeAsync(1);
    expect(q.length).toBe(1);
    q.shutdown();
  });

  it('shutdownAndDrain lets the in-flight pass and queued keys finish, then stops the workers; later adds are ignored', async () => {
    const q = new WorkQueue();
    const done: string[] = [];
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const worker = q.work(async (key) => {
      if (key === 'a') await gate;
      done.push(key);
      return { requeueAfterMs: 10 };
    });
    q.add('a');
    q.add('b');
    await vi.advanceTimersByTimeAsync(0);
    let drained = false;
    const drain = q.shutdownAndDrain().then(() => (drained = true));
    q.add('c');
    q.addAfter('d', 5);
    await vi.advanceTimersByTimeAsync(0);
    expect(drained).toBe(false);
    release();
    await drain;
    await worker;
    expect(done).toEqual(['a', 'b']);
    expect(vi.getTimerCount()).toBe(0); // the requeueAfter of the drained passes armed nothing
  });
});
