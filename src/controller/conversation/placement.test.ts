// Placement by creation time when two sandboxes were created within one second: creationTimestamp
// ties (whole seconds, as in Kubernetes), agentyard's created-at annotation does not.
import { describe, expect, it } from 'vitest';
import { ANNOTATION_CREATED_AT, API_VERSION } from '../../api/meta.ts';
import type { Sandbox } from '../../api/sandbox.ts';
import { chooseSandbox } from './placement.ts';

const sandbox = (name: string, createdAt?: string): Sandbox => ({
  apiVersion: API_VERSION,
  kind: 'Sandbox',
  metadata: { name, namespace: 'default', creationTimestamp: '2026-03-01T10:00:00Z', ...(createdAt ? { annotations: { [ANNOTATION_CREATED_AT]: createdAt } } : {}) },
  spec: { paused: false },
  status: { phase: 'RUNNING' },
});

describe('chooseSandbox within one second', () => {
  // Names in the opposite order of creation, so a tie broken by name would pick the wrong one.
  const older = sandbox('b-older', '2026-03-01T10:00:00.100Z');
  const newer = sandbox('a-newer', '2026-03-01T10:00:00.900Z');

  it('GROUP_BY_NEWEST takes the one created last, ADD_TO_ANY the one created first', () => {
    expect(chooseSandbox('GROUP_BY_NEWEST', [older, newer], new Map())?.metadata.name).toBe('a-newer');
    expect(chooseSandbox('ADD_TO_ANY', [older, newer], new Map())?.metadata.name).toBe('b-older');
  });

  it('falls back to creationTimestamp for sandboxes made without agentyard (kubectl)', () => {
    const byHand = sandbox('c-by-hand');
    const later = { ...byHand, metadata: { ...byHand.metadata, name: 'd-later', creationTimestamp: '2026-03-01T10:00:05Z' } };
    expect(chooseSandbox('GROUP_BY_NEWEST', [later, byHand, older], new Map())?.metadata.name).toBe('d-later');
  });
});
