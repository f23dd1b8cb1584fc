import type { V1Pod } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import type { Sandbox } from '../../api/sandbox.ts';
import { loadRuntimeAddressing } from './addressing.ts';
import { desiredIngress, desiredPod, desiredPvc, desiredService, type KubeRuntimeSettings } from './desired.ts';
import { podState } from './kubernetes-runtime.ts';

const sb: Sandbox = {
  apiVersion: 'agentyard.dev/v1alpha1',
  kind: 'Sandbox',
  metadata: { name: 'abc', namespace: 'sandboxes', uid: 'uid-1' },
  spec: { paused: false, resources: { cpu: '2', memory: '4Gi', storage: '20Gi' } },
};
const settings: KubeRuntimeSettings = {
  namespace: 'sandboxes',
  image: 'agentyard:1',
  storageClass: 'fast',
  addressing: loadRuntimeAddressing({ RUNTIME_BASE_URL: 'agents.example.com', RUNTIME_DISABLE_SSL: 'false' }),
  sinkBaseUrl: 'http://api.agentyard.svc',
  llm: { model: 'openai/gpt', apiKeySecret: { name: 'llm', key: 'api-key' } },
  tlsSecretName: 'wildcard-tls',
};

describe('desired objects for a sandbox', () => {
  it('runs the agent server as a non-root Pod without a service-account token, keys only by reference', () => {
    const pod = desiredPod(sb, settings);
    expect(pod.metadata?.ownerReferences?.[0]).toMatchObject({ kind: 'Sandbox', name: 'abc', uid: 'uid-1', controller: true });
    expect(pod.spec).toMatchObject({ automountServiceAccountToken: false, enableServiceLinks: false, securityContext: { runAsNonRoot: true, runAsUser: 1000 } });
    const c = pod.spec!.containers[0]!;
    expect(c.securityContext).toEqual({ allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] } });
    expect(c.resources).toEqual({ requests: { cpu: '2', memory: '4Gi' }, limits: { cpu: '2', memory: '4Gi' } });
    const env = Object.fromEntries(c.env!.map((e) => [e.name, e]));
    expect(env['OH_SESSION_API_KEYS_0']!.valueFrom?.secretKeyRef).toEqual({ name: 'abc-session', key: 'key' });
    expect(env['LLM_API_KEY']!.valueFrom?.secretKeyRef).toEqual({ name: 'llm', key: 'api-key' });
    expect(env['AGENTYARD_EVENT_SINK_URL']!.value).toBe('http://api.agentyard.svc/api/v1/webhooks/abc');
    expect(c.env!.filter((e) => e.value !== undefined).map((e) => e.name)).not.toContain('LLM_API_KEY');
  });

  it('keeps the workspace on a PVC of STORAGE_CLASS, exposes a Service and the sandbox host with TLS', () => {
    expect(desiredPvc(sb, settings).spec).toMatchObject({ storageClassName: 'fast', resources: { requests: { storage: '20Gi' } } });
    expect(desiredService(sb).spec?.selector).toEqual({ 'agentyard.dev/sandbox': 'abc' });
    const ing = desiredIngress(sb, settings);
    expect(ing.spec?.rules?.[0]?.host).toBe('abc-runtime.agents.example.com');
    expect(ing.spec?.tls).toEqual([{ hosts: ['abc-runtime.agents.example.com'], secretName: 'wildcard-tls' }]);
  });
});

describe('podState', () => {
  const pod = (status: V1Pod['status']): V1Pod => ({ metadata: { name: 'abc', uid: 'uid-1' }, status });
  it.each([
    ['ready', pod({ phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }] }), { phase: 'running' }],
    ['pending', pod({ phase: 'Pending' }), { phase: 'starting' }],
    // The kubelet restarts it: the controller counts the deaths and decides on a crash loop itself.
    [
      'container dead, the kubelet backing off',
      pod({ phase: 'Running', containerStatuses: [{ name: 'c', image: 'i', imageID: '', ready: false, restartCount: 5, state: { waiting: { reason: 'CrashLoopBackOff', message: 'back-off' } }, lastState: { terminated: { exitCode: 137, reason: 'Error', signal: 9 } } }] }),
      { phase: 'starting', death: { id: 'pod uid-1 death 6', reason: 'Error' } },
    ],
    [
      'running again after a restart',
      pod({ phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }], containerStatuses: [{ name: 'c', image: 'i', imageID: '', ready: true, restartCount: 6, state: { running: {} }, lastState: { terminated: { exitCode: 137, reason: 'Error' } } }] }),
      { phase: 'running', death: { id: 'pod uid-1 death 6', reason: 'Error', message: 'The agent server container ended (Error, exit code 137)' } },
    ],
    ['image not pullable', pod({ phase: 'Pending', containerStatuses: [{ name: 'c', image: 'i', imageID: '', ready: false, restartCount: 0, state: { waiting: { reason: 'ImagePullBackOff', message: 'no such image' } } }] }), { phase: 'failed', reason: 'ImagePullBackOff' }],
    ['failed as a whole (evicted): replaced', pod({ phase: 'Failed', reason: 'Evicted', message: 'low memory' }), { phase: 'exited', death: { id: 'pod uid-1 Failed', reason: 'Evicted', message: 'low memory' } }],
  ])('%s', (_n, p, want) => {
    expect(podState('abc', p, 'https://abc-runtime.x')).toMatchObject(want);
  });

  it('a container that never died reports no death', () => {
    const p = pod({ phase: 'Running', containerStatuses: [{ name: 'c', image: 'i', imageID: '', ready: false, restartCount: 0, state: { running: {} } }] });
    expect(podState('abc', p, 'https://abc-runtime.x')).toEqual({ phase: 'starting', runtimeId: 'abc', message: 'Waiting for the agent server to be ready' });
  });
});
