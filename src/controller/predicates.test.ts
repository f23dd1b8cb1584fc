import { describe, expect, it } from 'vitest';
import { API_VERSION } from '../api/meta.ts';
import type { Sandbox } from '../api/sandbox.ts';
import { changedBeyondStatus } from './predicates.ts';

const sb = (over: Partial<Sandbox['metadata']> = {}, spec: Sandbox['spec'] = { paused: false }, status?: Sandbox['status']): Sandbox => ({
  apiVersion: API_VERSION,
  kind: 'Sandbox',
  metadata: { name: 's', namespace: 'default', resourceVersion: '1', generation: 1, ...over },
  spec,
  ...(status ? { status } : {}),
});

describe('changedBeyondStatus', () => {
  it('is false when only the status, resourceVersion or managedFields moved', () => {
    const old = sb({}, { paused: false }, { phase: 'STARTING' });
    const next = sb({ resourceVersion: '2', managedFields: [{ manager: 'agentyard', operation: 'Update', subresource: 'status' }] } as never, { paused: false }, { phase: 'RUNNING', conversationCount: 1 });
    expect(changedBeyondStatus(old, next)).toBe(false);
  });

  it('is true for a change of the spec, labels, annotations, finalizers, deletion or generation', () => {
    const old = sb();
    expect(changedBeyondStatus(old, sb({}, { paused: true }))).toBe(true);
    expect(changedBeyondStatus(old, sb({ labels: { a: 'b' } }))).toBe(true);
    expect(changedBeyondStatus(old, sb({ annotations: { 'agentyard.dev/last-activity-time': 't' } }))).toBe(true);
    expect(changedBeyondStatus(old, sb({ finalizers: ['agentyard.dev/runtime'] }))).toBe(true);
    expect(changedBeyondStatus(old, sb({ deletionTimestamp: '2026-01-01T00:00:00Z' }))).toBe(true);
    expect(changedBeyondStatus(old, sb({ generation: 2 }))).toBe(true);
  });
});
