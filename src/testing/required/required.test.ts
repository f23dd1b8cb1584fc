import { describe, expect, it } from 'vitest';
import { MissingTestProgram, requiredForTests } from './required.ts';

describe('requiredForTests', () => {
  it('hands back what was found, required or not', () => {
    expect(requiredForTests('/bin/helm', 'helm', 'make k8s-bin', {})).toBe('/bin/helm');
    expect(requiredForTests('/bin/helm', 'helm', 'make k8s-bin', { AGENTYARD_REQUIRE_CLUSTER_TESTS: '1' })).toBe('/bin/helm');
  });

  it('lets a suite skip a missing program unless the cluster suites are required', () => {
    expect(requiredForTests(undefined, 'helm', 'make k8s-bin', {})).toBeUndefined();
    expect(requiredForTests(undefined, 'helm', 'make k8s-bin', { AGENTYARD_REQUIRE_CLUSTER_TESTS: '0' })).toBeUndefined();
  });

  it('fails, naming the program and the fix, when they are required', () => {
    const call = () => requiredForTests(undefined, 'helm (Helm 4) in /cache/bin', 'run make k8s-bin', { AGENTYARD_REQUIRE_CLUSTER_TESTS: '1' });
    expect(call).toThrow(MissingTestProgram);
    expect(call).toThrow('AGENTYARD_REQUIRE_CLUSTER_TESTS=1 (cluster suites required), but missing: helm (Helm 4) in /cache/bin. Fix: run make k8s-bin');
  });
});
