// The Sandbox Configuration on a real kube-apiserver: the generated CRD accepts the object and
// the API server refuses a bad value (the schema the API validates with), and a running
// controller over KubeStore takes a change up at once (the scenario the SQLite test runs too).
import { randomUUID } from 'node:crypto';
import { ApiextensionsV1Api, CoreV1Api, CustomObjectsApi } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Invalid } from '../../src/api/errors.ts';
import { API_VERSION, GROUP, VERSION } from '../../src/api/meta.ts';
import { SandboxConfigurationKind, type SandboxConfiguration } from '../../src/api/sandbox-configuration.ts';
import { SandboxKind } from '../../src/api/sandbox.ts';
import { systemClock } from '../../src/controller/clock.ts';
import { createController } from '../../src/controller/embedded.ts';
import { configurationChangeMovesDeadlines } from '../../src/controller/testing/configuration-scenario.ts';
import { FakeRuntime } from '../../src/controller/testing/fake-runtime.ts';
import { KubeStore } from '../../src/store/kube/kube-store.ts';
import { kubeBinDir, startTestCluster, type TestCluster } from './cluster.ts';

const skip = !kubeBinDir();

describe.skipIf(skip)('Sandbox Configuration on a real API server', () => {
  let cluster: TestCluster;
  let store: KubeStore;
  beforeAll(async () => {
    cluster = await startTestCluster({ controllerManager: false });
    store = new KubeStore(cluster.kubeConfig);
  });
  afterAll(async () => {
    await cluster?.stop();
  });

  async function namespace(): Promise<string> {
    const name = `cfg-${randomUUID().slice(0, 8)}`;
    await cluster.kubeConfig.makeApiClient(CoreV1Api).createNamespace({ body: { metadata: { name } } });
    return name;
  }

  it('refuses a configuration outside the schema: KubeStore before writing, and the API server itself (kubectl)', async () => {
    const ns = await namespace();
    const body: SandboxConfiguration = { apiVersion: API_VERSION, kind: 'SandboxConfiguration', metadata: { name: 'default', namespace: ns }, spec: { idleTimeSeconds: 0 } };
    await expect(store.create(SandboxConfigurationKind, body)).rejects.toBeInstanceOf(Invalid);
    const raw = cluster.kubeConfig.makeApiClient(CustomObjectsApi);
    const refused = await raw.createNamespacedCustomObject({ group: GROUP, version: VERSION, namespace: ns, plural: 'sandboxconfigurations', body }).then(() => undefined, (err: { code?: number; body?: string }) => err);
    expect(refused?.code).toBe(422);
    expect(String(refused?.body)).toContain('spec.idleTimeSeconds');
    const ok = await raw.createNamespacedCustomObject({ group: GROUP, version: VERSION, namespace: ns, plural: 'sandboxconfigurations', body: { ...body, spec: { idleTimeSeconds: 60 } } });
    expect((ok as { spec: unknown }).spec).toEqual({ idleTimeSeconds: 60 });
  });

  it('a running controller moves idle and deletion deadlines when the configuration changes', async () => {
    await configurationChangeMovesDeadlines(store, await namespace());
  });

  // Helm installs crds/ on the first install only: after an upgrade without `kubectl apply` the kind
  // is missing. The controller still runs sandboxes (on the defaults), and the API reads no configuration.
  it('without the CRD (an upgrade that skipped it), sandboxes still run on the defaults', async () => {
    const crds = cluster.kubeConfig.makeApiClient(ApiextensionsV1Api);
    const name = `${SandboxConfigurationKind.plural}.${GROUP}`;
    await crds.deleteCustomResourceDefinition({ name });
    const raw = cluster.kubeConfig.makeApiClient(CustomObjectsApi);
    const served = () => raw.listNamespacedCustomObject({ group: GROUP, version: VERSION, namespace: 'default', plural: SandboxConfigurationKind.plural }).then(() => true, (err: { code?: number }) => err.code !== 404);
    const deadline = Date.now() + 30_000;
    while (await served()) {
      if (Date.now() > deadline) throw new Error('the kind is still served');
      await new Promise((r) => setTimeout(r, 200));
    }
    const ns = await namespace();
    expect(await store.get(SandboxConfigurationKind, ns, 'default')).toBeUndefined();
    const runtime = new FakeRuntime();
    runtime.startResult = (n) => ({ phase: 'running', runtimeId: n, url: `http://127.0.0.1:9/${n}` });
    const controller = createController({ store, runtime, clock: systemClock, settings: { idleTimeMs: 3_600_000, deletionTimeMs: 3_600_000, capacity: 10 }, namespace: ns });
    await controller.start();
    try {
      await store.create(SandboxKind, { apiVersion: API_VERSION, kind: 'Sandbox', metadata: { name: 'no-crd', namespace: ns }, spec: { paused: false } });
      const until = Date.now() + 30_000;
      while ((await store.get(SandboxKind, ns, 'no-crd'))?.status?.phase !== 'RUNNING') {
        if (Date.now() > until) throw new Error('the sandbox never ran');
        await new Promise((r) => setTimeout(r, 100));
      }
    } finally {
      await controller.stop();
    }
  });
});
