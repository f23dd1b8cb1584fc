import { describe, expect, it } from 'vitest';
import { IdleCollector, IDLE_COLLECT_DELAY_MS } from './idle-collect.ts';

/** A scheduler the test fires by hand: what is pending, and for how long it was asked. */
function manual() {
  const pending: { fn: () => void; ms: number; cancelled: boolean }[] = [];
  return {
    pending,
    schedule: (fn: () => void, ms: number) => {
      const p = { fn, ms, cancelled: false };
      pending.push(p);
      return () => (p.cancelled = true);
    },
    fire: () => {
      for (const p of pending.splice(0)) if (!p.cancelled) p.fn();
    },
  };
}

describe('IdleCollector', () => {
  it('collects once when the last run has ended and the delay passed, never while a run is on', () => {
    const m = manual();
    let collections = 0;
    const c = new IdleCollector({ collect: () => collections++, schedule: m.schedule });
    c.runStarted();
    c.runStarted(); // two conversations running
    c.runEnded();
    expect(m.pending).toHaveLength(0); // one still runs
    c.runEnded();
    expect(m.pending.map((p) => p.ms)).toEqual([IDLE_COLLECT_DELAY_MS]);
    m.fire();
    expect(collections).toBe(1);
    m.fire();
    expect(collections).toBe(1);
  });

  it('a run that starts within the delay cancels the collection; its end schedules the next', () => {
    const m = manual();
    let collections = 0;
    const c = new IdleCollector({ collect: () => collections++, schedule: m.schedule });
    c.runStarted();
    c.runEnded();
    c.runStarted(); // a follow-up message
    m.fire();
    expect(collections).toBe(0);
    c.runEnded();
    m.fire();
    expect(collections).toBe(1);
  });

  it('an ended run it never saw start does not make the count negative', () => {
    const m = manual();
    let collections = 0;
    const c = new IdleCollector({ collect: () => collections++, schedule: m.schedule });
    c.runEnded();
    c.runStarted();
    m.fire(); // cancelled by the start
    expect(collections).toBe(0);
    c.runEnded();
    m.fire();
    expect(collections).toBe(1);
  });
});
