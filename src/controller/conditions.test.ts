import { describe, expect, it } from 'vitest';
import type { Condition } from '../api/meta.ts';
import { findCondition, setCondition } from './conditions.ts';

const T1 = '2026-01-01T00:00:00.000Z';
const T2 = '2026-01-01T00:05:00.000Z';
const ready = (status: Condition['status'], reason = 'Running', message = 'm') => ({ type: 'Ready', status, reason, message });

describe('setCondition', () => {
  it.each<[string, Condition[], ReturnType<typeof ready>, Partial<Condition>]>([
    ['a new condition gets now', [], ready('True'), { status: 'True', lastTransitionTime: T2, observedGeneration: 3 }],
    ['same status keeps its transition time', [{ ...ready('True'), lastTransitionTime: T1 }], ready('True'), { lastTransitionTime: T1, observedGeneration: 3 }],
    [
      'same status with a new reason and message keeps its transition time',
      [{ ...ready('False', 'Starting', 'booting'), lastTransitionTime: T1 }],
      ready('False', 'RuntimeFailed', 'oom'),
      { lastTransitionTime: T1, reason: 'RuntimeFailed', message: 'oom' },
    ],
    ['a flip moves the transition time', [{ ...ready('False'), lastTransitionTime: T1 }], ready('True'), { status: 'True', lastTransitionTime: T2 }],
    ['Unknown to False is a flip too', [{ ...ready('Unknown'), lastTransitionTime: T1 }], ready('False'), { lastTransitionTime: T2 }],
    ['observedGeneration follows every write', [{ ...ready('True'), lastTransitionTime: T1, observedGeneration: 1 }], ready('True'), { observedGeneration: 3 }],
  ])('%s', (_name, before, input, want) => {
    const after = setCondition(before, input, T2, 3);
    expect(after).toHaveLength(1);
    expect(after[0]).toMatchObject(want);
  });

  it('leaves the other conditions alone, keeps one entry per type and a stable order, and does not mutate its input', () => {
    const before: Condition[] = [
      { type: 'Ready', status: 'True', reason: 'Running', message: '', lastTransitionTime: T1 },
      { type: 'Paused', status: 'False', reason: 'Running', message: '', lastTransitionTime: T1 },
    ];
    const snapshot = structuredClone(before);
    const after = setCondition(before, { type: 'Paused', status: 'True', reason: 'IdleTimeout', message: 'idle' }, T2, 2);
    expect(before).toEqual(snapshot);
    expect(after.map((c) => c.type)).toEqual(['Paused', 'Ready']);
    expect(findCondition(after, 'Ready')).toEqual(before[0]);
    expect(findCondition(after, 'Paused')).toMatchObject({ status: 'True', lastTransitionTime: T2, observedGeneration: 2 });
    expect(findCondition(undefined, 'Ready')).toBeUndefined();
  });

  it('omits observedGeneration when the object has none', () => {
    expect(setCondition([], ready('True'), T2)[0]).not.toHaveProperty('observedGeneration');
  });
});
