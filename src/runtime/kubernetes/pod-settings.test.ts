import { describe, expect, it } from 'vitest';
import type { Sandbox } from '../../api/sandbox.ts';
import { loadRuntimeAddressing } from './addressing.ts';
import { desiredArchivePod, desiredPod } from './desired.ts';
import { loadSandboxPodSettings, quantityValue } from './pod-settings.ts';

const sandbox = (resources?: Sandbox['spec']['resources']): Sandbox => ({
  apiVersion: 'agentyard.dev/v1alpha1',
  kind: 'Sandbox',
  metadata: { name: 'abc', namespace: 'sandboxes', uid: 'uid-1' },
  spec: { paused: false, ...(resources ? { resources } : {}) },
});

const env = {
  AGENTYARD_SANDBOX_RESOURCES: JSON.stringify({ requests: { cpu: '250m', memory: '512Mi' }, limits: { cpu: 2, memory: '4Gi' } }),
  AGENTYARD_SANDBOX_IMAGE_PULL_SECRETS: 'regcred, mirror-cred',
};
const base = { namespace: 'sandboxes', image: 'agentyard:1', storageClass: 'fast', addressing: loadRuntimeAddressing({ RUNTIME_BASE_URL: 'agents.example.com' }) };

describe('sandbox Pod settings from the controller environment', () => {
  it('applies the installation defaults and pull secrets to sandbox and archive Pods', () => {
    const s = { ...base, ...loadSandboxPodSettings(env) };
    const pod = desiredPod(sandbox(), s);
    expect(pod.spec!.containers[0]!.resources).toEqual({ requests: { cpu: '250m', memory: '512Mi' }, limits: { cpu: '2', memory: '4Gi' } });
    expect(pod.spec!.imagePullSecrets).toEqual([{ name: 'regcred' }, { name: 'mirror-cred' }]);
    expect(desiredArchivePod(sandbox(), s, 'x').spec!.imagePullSecrets).toEqual([{ name: 'regcred' }, { name: 'mirror-cred' }]);
  });

  it("lets a Sandbox's own cpu and memory replace the defaults; nothing set means no resources", () => {
    const s = { ...base, ...loadSandboxPodSettings(env) };
    expect(desiredPod(sandbox({ memory: '8Gi' }), s).spec!.containers[0]!.resources).toEqual({ requests: { cpu: '250m', memory: '8Gi' }, limits: { cpu: '2', memory: '8Gi' } });
    const bare = desiredPod(sandbox(), { ...base, ...loadSandboxPodSettings({}) });
    expect(bare.spec!.containers[0]!.resources).toBeUndefined();
    expect(bare.spec!.imagePullSecrets).toBeUndefined();
  });

  it.each([
    ['not JSON', '{cpu', /must be JSON/],
    ['an unknown key', '{"request": {}}', /unknown key request/],
    ['an unknown resource', '{"limits": {"gpu": "1"}}', /limits\.gpu is not one of/],
    ['a bad quantity', '{"limits": {"memory": "4 GB"}}', /limits\.memory "4 GB" is not a Kubernetes quantity/],
    ['a request above its limit', '{"requests": {"memory": "8Gi"}, "limits": {"memory": "4Gi"}}', /requests\.memory 8Gi is more than limits\.memory 4Gi/],
  ])('refuses %s, naming the variable', (_what, value, message) => {
    expect(() => loadSandboxPodSettings({ AGENTYARD_SANDBOX_RESOURCES: value })).toThrow(message);
  });

  it('refuses a pull secret that is no Secret name', () => {
    expect(() => loadSandboxPodSettings({ AGENTYARD_SANDBOX_IMAGE_PULL_SECRETS: 'Reg_Cred' })).toThrow(/AGENTYARD_SANDBOX_IMAGE_PULL_SECRETS/);
  });

  it('reads the pull policies of the agentyard and the sandbox image, and refuses others', () => {
    expect(loadSandboxPodSettings({ AGENTYARD_IMAGE_PULL_POLICY: 'Never', AGENTYARD_SANDBOX_IMAGE_PULL_POLICY: 'Always' })).toEqual({ imagePullPolicy: 'Never', sandboxImagePullPolicy: 'Always' });
    expect(loadSandboxPodSettings({})).toEqual({});
    expect(() => loadSandboxPodSettings({ AGENTYARD_SANDBOX_IMAGE_PULL_POLICY: 'never' })).toThrow(/AGENTYARD_SANDBOX_IMAGE_PULL_POLICY must be one of Always, IfNotPresent, Never, got 'never'/);
  });

  it('compares quantities across units', () => {
    expect(quantityValue('500m')).toBe(0.5);
    expect(quantityValue('1Gi')).toBeGreaterThan(quantityValue('1000Mi'));
    expect(quantityValue('1e3')).toBe(1000);
  });
});
