import { describe, expect, it } from 'vitest';
import type { Sandbox } from '../api/sandbox.ts';
import { agentServerDialUrl } from './dial.ts';

const sb = (status: Sandbox['status']): Sandbox => ({ apiVersion: 'agentyard.dev/v1alpha1', kind: 'Sandbox', metadata: { name: 'abc', namespace: 'ns' }, spec: {}, ...(status ? { status } : {}) });

describe('agentServerDialUrl', () => {
  it('prefers the in-cluster address over the public one', () => {
    expect(agentServerDialUrl(sb({ phase: 'RUNNING', url: 'https://abc-runtime.example.com', internalUrl: 'http://sandbox-abc.ns.svc:80' }))).toBe('http://sandbox-abc.ns.svc:80');
  });
  it('uses the public address where it is the only one (embedded: a loopback port)', () => {
    expect(agentServerDialUrl(sb({ phase: 'RUNNING', url: 'http://127.0.0.1:4100' }))).toBe('http://127.0.0.1:4100');
  });
  it('has nothing to dial while the sandbox does not serve', () => {
    expect(agentServerDialUrl(sb({ phase: 'PAUSED' }))).toBeUndefined();
    expect(agentServerDialUrl(undefined)).toBeUndefined();
  });
});
