import { DateTime } from 'luxon';
import { describe, expect, it } from 'vitest';
import { ANNOTATION_LAST_ACTIVITY } from '../api/meta.ts';
import type { Sandbox, SandboxStatus } from '../api/sandbox.ts';
import { decideLifecycle, DEFAULT_LIFECYCLE, lastActivity, loadLifecycleSettings, nextDeadline, SESSION_CAP_MS } from './lifecycle.ts';

const T0 = DateTime.fromISO('2026-01-01T00:00:00Z', { zone: 'utc' });
const settings = { idleTimeMs: 60_000, deletionTimeMs: 3_600_000, capacity: 5 };

function sandbox(status: SandboxStatus, opts: { paused?: boolean; activity?: DateTime } = {}): Sandbox {
  return {
    apiVersion: 'agentyard.dev/v1alpha1',
    kind: 'Sandbox',
    metadata: { name: 's', ...(opts.activity ? { annotations: { [ANNOTATION_LAST_ACTIVITY]: opts.activity.toISO()! } } : {}) },
    spec: { paused: opts.paused ?? false },
    status,
  };
}

describe('decideLifecycle', () => {
  const running = { phase: 'RUNNING' as const, sessionStartTime: T0.toISO()! };
  it.each([
    ['running, just started', sandbox(running), T0, { action: 'none', requeueAfterMs: 60_000 }],
    ['idle one ms short of Idle Time', sandbox(running), T0.plus({ milliseconds: 59_999 }), { action: 'none', requeueAfterMs: 1 }],
    ['idle exactly Idle Time', sandbox(running), T0.plus({ milliseconds: 60_000 }), { action: 'pause', reason: 'IdleTimeout' }],
    ['activity resets the idle timer', sandbox(running, { activity: T0.plus({ minutes: 5 }) }), T0.plus({ minutes: 5, seconds: 30 }), { action: 'none', requeueAfterMs: 30_000 }],
    ['12-hour cap while continuously active', sandbox(running, { activity: T0.plus({ milliseconds: SESSION_CAP_MS - 1 }) }), T0.plus({ milliseconds: SESSION_CAP_MS }), { action: 'pause', reason: 'SessionCap' }],
    ['paused, Deletion Time not yet reached', sandbox({ phase: 'PAUSED', pausedAt: T0.toISO()! }, { paused: true }), T0.plus({ minutes: 59 }), { action: 'none', requeueAfterMs: 60_000 }],
    ['paused for Deletion Time', sandbox({ phase: 'PAUSED', pausedAt: T0.toISO()! }, { paused: true }), T0.plus({ hours: 1 }), { action: 'delete' }],
    ['being resumed: no deletion', sandbox({ phase: 'PAUSED', pausedAt: T0.toISO()! }, { paused: false }), T0.plus({ hours: 2 }), { action: 'none' }],
    ['ERROR is terminal', sandbox({ phase: 'ERROR' }), T0.plus({ hours: 20 }), { action: 'none' }],
    ['STARTING has no deadline', sandbox({ phase: 'STARTING' }), T0.plus({ hours: 20 }), { action: 'none' }],
    ['being paused: no second pause', sandbox(running, { paused: true }), T0.plus({ hours: 13 }), { action: 'none' }],
    ['cap and idleness both passed: the cap is the reason', sandbox(running), T0.plus({ hours: 12 }), { action: 'pause', reason: 'SessionCap' }],
    ['the cap is nearer than idleness', sandbox(running, { activity: T0.plus({ milliseconds: SESSION_CAP_MS - 10_000 }) }), T0.plus({ milliseconds: SESSION_CAP_MS - 5_000 }), { action: 'none', requeueAfterMs: 5_000 }],
    ['a stale annotation older than the session start does not count', sandbox(running, { activity: T0.minus({ hours: 1 }) }), T0.plus({ seconds: 10 }), { action: 'none', requeueAfterMs: 50_000 }],
    ['paused without pausedAt yet: nothing to count from', sandbox({ phase: 'PAUSED' }, { paused: true }), T0.plus({ days: 30 }), { action: 'none' }],
  ])('%s', (_name, sb, now, want) => {
    expect(decideLifecycle(sb, now, settings)).toEqual(want);
  });
});

describe('lastActivity and nextDeadline', () => {
  it.each([
    ['no session, no annotation', sandbox({ phase: 'STARTING' }), undefined],
    ['annotation only', sandbox({}, { activity: T0 }), T0],
    ['session start only', sandbox({ sessionStartTime: T0.toISO()! }), T0],
    ['the later of the two', sandbox({ sessionStartTime: T0.toISO()! }, { activity: T0.plus({ minutes: 3 }) }), T0.plus({ minutes: 3 })],
    ['a garbled annotation is ignored', { ...sandbox({ sessionStartTime: T0.toISO()! }), metadata: { name: 's', annotations: { [ANNOTATION_LAST_ACTIVITY]: 'yesterday' } } }, T0],
  ])('lastActivity: %s', (_name, sb, want) => {
    expect(lastActivity(sb)?.toMillis()).toBe(want?.toMillis());
  });

  // The fast path (Date.parse) reads as luxon reads: offsets; 30 February refused; 24:00 the next midnight.
  it.each([
    ['an offset', '2026-01-01T02:00:00.250+02:00', T0.plus({ milliseconds: 250 })],
    ['no milliseconds, Z', '2026-01-01T00:00:07Z', T0.plus({ seconds: 7 })],
    ['30 February, no date (the session start stands)', '2026-02-30T00:00:00Z', T0.minus({ days: 1 })],
    ['24:00, the next midnight', '2025-12-31T24:00:00Z', T0],
  ])('lastActivity: an annotation with %s', (_name, at, want) => {
    const sb = { ...sandbox({ sessionStartTime: T0.minus({ days: 1 }).toISO()! }), metadata: { name: 's', annotations: { [ANNOTATION_LAST_ACTIVITY]: at } } };
    expect(lastActivity(sb)?.toMillis()).toBe(want.toMillis());
  });

  it.each([
    ['running: the idle deadline', sandbox({ phase: 'RUNNING', sessionStartTime: T0.toISO()! }), T0.plus({ seconds: 15 }), 45_000],
    ['a passed deadline is due now', sandbox({ phase: 'RUNNING', sessionStartTime: T0.toISO()! }), T0.plus({ hours: 1 }), 0],
    ['paused: the deletion deadline', sandbox({ phase: 'PAUSED', pausedAt: T0.toISO()! }, { paused: true }), T0.plus({ minutes: 30 }), 1_800_000],
    ['ERROR: none', sandbox({ phase: 'ERROR' }), T0, undefined],
  ])('nextDeadline: %s', (_name, sb, now, want) => {
    expect(nextDeadline(sb, now, settings)).toBe(want);
  });
});

describe('loadLifecycleSettings', () => {
  it('defaults: Idle Time 1800 s, Deletion Time 7 days, capacity 20 (also for empty values)', () => {
    expect(loadLifecycleSettings({})).toEqual(DEFAULT_LIFECYCLE);
    expect(loadLifecycleSettings({ AGENTYARD_IDLE_TIME_SECONDS: '' })).toEqual({ idleTimeMs: 1_800_000, deletionTimeMs: 604_800_000, capacity: 20 });
  });
  it.each(['0', '-5', 'Infinity', '1e400', ' '])('refuses Idle Time %j', (raw) => {
    expect(() => loadLifecycleSettings({ AGENTYARD_IDLE_TIME_SECONDS: raw })).toThrow(/AGENTYARD_IDLE_TIME_SECONDS must be a positive number/);
  });

  it('reads the deployment-wide settings', () => {
    expect(loadLifecycleSettings({ AGENTYARD_IDLE_TIME_SECONDS: '90', AGENTYARD_DELETION_TIME_SECONDS: '3600', AGENTYARD_SANDBOX_CAPACITY: '3' })).toEqual({
      idleTimeMs: 90_000,
      deletionTimeMs: 3_600_000,
      capacity: 3,
    });
  });
  it('says which variable is wrong', () => {
    expect(() => loadLifecycleSettings({ AGENTYARD_IDLE_TIME_SECONDS: 'soon' })).toThrow(/AGENTYARD_IDLE_TIME_SECONDS.*'soon'/);
    expect(() => loadLifecycleSettings({ AGENTYARD_SANDBOX_CAPACITY: '1.5' })).toThrow(/AGENTYARD_SANDBOX_CAPACITY/);
  });
});
