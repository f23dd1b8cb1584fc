// The test cluster itself: it serves the CRDs, enforces RBAC, collects owned objects through
// kube-controller-manager, and stop() leaves no process or directory behind.
import { existsSync } from 'node:fs';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CoreV1Api } from '@kubernetes/client-node';
import { Forbidden } from '../../src/api/errors.ts';
import { API_VERSION } from '../../src/api/meta.ts';
import { ConversationKind, type Conversation } from '../../src/api/conversation.ts';
import { SandboxKind, type Sandbox } from '../../src/api/sandbox.ts';
import { KubeStore } from '../../src/store/kube/kube-store.ts';
import { kubeBinDir, startTestCluster, type TestCluster } from './cluster.ts';

function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function eventually<T>(what: string, fn: () => Promise<T | undefined>, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`never happened: ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

describe.skipIf(!kubeBinDir())('test cluster', () => {
  let cluster: TestCluster;
  let store: KubeStore;
  const ns = `cl-${randomUUID().slice(0, 8)}`;

  beforeAll(async () => {
    cluster = await startTestCluster();
    store = new KubeStore(cluster.kubeConfig);
    await cluster.kubeConfig.makeApiClient(CoreV1Api).createNamespace({ body: { metadata: { name: ns } } });
  });
  afterAll(async () => {
    await cluster?.stop();
  });

  it('garbage-collects a Conversation whose owner Sandbox is deleted', async () => {
    const sandbox = await store.create<Sandbox>(SandboxKind, {
      apiVersion: API_VERSION,
      kind: 'Sandbox',
      metadata: { name: 'owner', namespace: ns },
      spec: {},
    });
    await store.create<Conversation>(ConversationKind, {
      apiVersion: API_VERSION,
      kind: 'Conversation',
      metadata: {
        name: 'child',
        namespace: ns,
        ownerReferences: [{ apiVersion: API_VERSION, kind: 'Sandbox', name: 'owner', uid: sandbox.metadata.uid!, controller: true }],
      },
      spec: {},
    });
    await store.delete(SandboxKind, ns, 'owner');
    await eventually('child collected', async () => ((await store.get(ConversationKind, ns, 'child')) ? undefined : true));
  });

  it('enforces RBAC for users outside system:masters', async () => {
    const alice = new KubeStore(await cluster.userKubeConfig('alice', ['developers']));
    await expect(alice.list(SandboxKind, ns)).rejects.toBeInstanceOf(Forbidden);
  });

  it('stop() ends every process and removes its directory', async () => {
    const other = await startTestCluster({ controllerManager: true });
    const pids = other.pids();
    expect(pids).toHaveLength(3);
    expect(pids.every(pidAlive)).toBe(true);
    await other.stop();
    expect(pids.some(pidAlive)).toBe(false);
    expect(existsSync(other.dir)).toBe(false);
  });
});
