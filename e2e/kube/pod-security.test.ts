// The Pods agentyard creates in the sandbox namespace pass the API server's own Pod Security
// admission at the `restricted` level (the chart labels the sandbox namespace so), checked by a real
// kube-apiserver rather than by reading our fields: the sandbox Pod with its init container, with a
// user's image, and the workspace archive Pod. A plainly non-compliant Pod is refused there, so the
// admission is really enforcing.
import { CoreV1Api, type V1Pod } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Sandbox } from '../../src/api/sandbox.ts';
import { loadRuntimeAddressing } from '../../src/runtime/kubernetes/addressing.ts';
import { desiredArchivePod, desiredPod, type KubeRuntimeSettings } from '../../src/runtime/kubernetes/desired.ts';
import { kubeBinDir, startTestCluster, type TestCluster } from './cluster.ts';

const NS = 'restricted-sandboxes';

describe.skipIf(!kubeBinDir())('sandbox Pods under the restricted Pod Security Standard', () => {
  let cluster: TestCluster;
  let core: CoreV1Api;

  beforeAll(async () => {
    cluster = await startTestCluster({ controllerManager: false });
    core = cluster.kubeConfig.makeApiClient(CoreV1Api);
    await core.createNamespace({ body: { metadata: { name: NS, labels: { 'pod-security.kubernetes.io/enforce': 'restricted', 'pod-security.kubernetes.io/enforce-version': 'latest' } } } });
  }, 120_000);

  afterAll(async () => {
    await cluster?.stop();
  });

  const sb: Sandbox = { apiVersion: 'agentyard.dev/v1alpha1', kind: 'Sandbox', metadata: { name: 'psa', namespace: NS, uid: '00000000-0000-0000-0000-000000000001' }, spec: { image: 'python:3.13-slim', resources: { cpu: '1', memory: '1Gi' } } };
  const settings: KubeRuntimeSettings = {
    namespace: NS,
    image: 'debian:bookworm',
    agentImage: 'registry.example/agentyard:1',
    storageClass: 'standard',
    addressing: loadRuntimeAddressing({ RUNTIME_BASE_URL: 'agents.example.com' }),
    sinkBaseUrl: 'http://agentyard-api.agentyard.svc',
    imagePullPolicy: 'IfNotPresent',
  };
  /** Created for real (no dry run: admission of a dry run is the same, but this shows the stored Pod). */
  const admit = async (pod: V1Pod) => {
    const created = await core.createNamespacedPod({ namespace: NS, body: pod });
    await core.deleteNamespacedPod({ name: created.metadata!.name!, namespace: NS, gracePeriodSeconds: 0 });
    return created;
  };
  /** The API server's message refusing `pod` ('' when it was admitted). */
  const refusal = async (pod: V1Pod) =>
    core.createNamespacedPod({ namespace: NS, body: pod }).then(
      () => '',
      (err: { body?: string }) => (JSON.parse(err.body ?? '{}') as { message?: string }).message ?? String(err),
    );

  it('admits the sandbox Pod: init container from the agentyard image, the user\'s image for the agent server', async () => {
    const created = await admit(desiredPod(sb, settings));
    expect(created.spec?.initContainers?.map((c) => c.image)).toEqual(['registry.example/agentyard:1']);
    expect(created.spec?.containers.map((c) => c.image)).toEqual(['python:3.13-slim']);
  });

  it('admits the workspace archive Pod', async () => {
    await admit(desiredArchivePod(sb, settings, 'stamp'));
  });

  it('admits the workspace archive Pod that uploads to the object store', async () => {
    const created = await admit(desiredArchivePod(sb, settings, 'stamp', { url: 'http://agentyard-objects.agentyard.svc:8333/agentyard/internal/workspace-archives/psa-stamp.tar.gz?X-Amz-Signature=x' }));
    expect(created.spec?.restartPolicy).toBe('OnFailure');
  });

  it('refuses a Pod that could run as root or escalate: the admission is enforcing', async () => {
    const pod = desiredPod({ ...sb, metadata: { ...sb.metadata, name: 'lax' } }, settings);
    delete pod.spec!.securityContext!.runAsNonRoot;
    delete pod.spec!.securityContext!.runAsUser;
    pod.spec!.containers[0]!.securityContext = { allowPrivilegeEscalation: true };
    const why = await refusal(pod);
    expect(why).toMatch(/violates PodSecurity "restricted:latest"/);
    expect(why).toMatch(/allowPrivilegeEscalation/);
  });
});
