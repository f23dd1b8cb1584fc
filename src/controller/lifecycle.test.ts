import { DateTime } from 'luxon';
import { describe, expect, it } from 'vitest';
import { ANNOTATION_LAST_ACTIVITY } from '../api/meta.ts';
import type { Sandbox, SandboxStatus } from '../api/sandbox.ts';
import { decideLifecycle, loadLifecycleSettings, SESSION_CAP_MS } from './lifecycle.ts';

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
  ])('%s', (_name, sb, now, want) => {
    expect(decideLifecycle(sb, now, settings)).toEqual(want);
  });
});

describe('loadLifecycleSettings', () => {
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
