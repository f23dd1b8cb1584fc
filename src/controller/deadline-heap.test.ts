import { describe, expect, it } from 'vitest';
import { DeadlineHeap } from './deadline-heap.ts';

describe('DeadlineHeap', () => {
  it('keeps the earliest due time per key and pops due keys in order', () => {
    const h = new DeadlineHeap();
    expect(h.push('a', 30)).toBe(true);
    expect(h.push('b', 10)).toBe(true);
    expect(h.push('a', 40)).toBe(false); // later: ignored
    expect(h.push('a', 5)).toBe(true); // earlier: supersedes
    expect(h.size).toBe(2);
    expect(h.peek()).toBe(5);
    expect(h.popDue(10)).toEqual(['a', 'b']);
    expect(h.peek()).toBeUndefined(); // the superseded a@30 is dropped, not served
    expect(h.size).toBe(0);
  });

  it('agrees with a sort on random input', () => {
    const h = new DeadlineHeap();
    const want = new Map<string, number>();
    let seed = 7;
    const rand = () => (seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31;
    for (let i = 0; i < 2_000; i++) {
      const key = `k${Math.floor(rand() * 300)}`;
      const due = Math.floor(rand() * 10_000);
      h.push(key, due);
      want.set(key, Math.min(want.get(key) ?? Infinity, due));
    }
    const popped: [string, number][] = [];
    for (let now = 0; now <= 10_000; now += 250) for (const k of h.popDue(now)) popped.push([k, want.get(k)!]);
    expect(popped.map(([k]) => k).sort()).toEqual([...want.keys()].sort());
    const dues = popped.map(([, d]) => d);
    expect(dues).toEqual([...dues].sort((x, y) => x - y));
  });
});
