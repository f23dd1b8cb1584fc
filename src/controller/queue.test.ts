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
