// `agentyard uninstall-cleanup` (the chart's pre-delete hook) against a real kube-apiserver. No
// controller runs here: the test plays its part by removing the runtime finalizer, so what is checked
// is the command's own behaviour — it deletes, it waits for finalization, it gives up at its deadline,
// and it deletes the archive PVC only when asked and only once nothing is left to archive.
import { randomUUID } from 'node:crypto';
import { CoreV1Api } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConversationKind, type Conversation } from '../../src/api/conversation.ts';
import { API_VERSION, FINALIZER_RUNTIME } from '../../src/api/meta.ts';
import { SandboxKind, type Sandbox } from '../../src/api/sandbox.ts';
import { uninstallCleanup } from '../../src/cli/uninstall-cleanup.ts';
import { ARCHIVE_PVC } from '../../src/runtime/kubernetes/desired.ts';
import { KubeStore } from '../../src/store/kube/kube-store.ts';
import { kubeBinDir, startTestCluster, type TestCluster } from './cluster.ts';

const skip = !kubeBinDir();

let cluster: TestCluster;
beforeAll(async () => {
  if (!skip) cluster = await startTestCluster({ controllerManager: false });
});
afterAll(async () => {
  await cluster?.stop();
});

async function setUp(): Promise<{ ns: string; store: KubeStore; core: CoreV1Api }> {
  const ns = `t-${randomUUID().slice(0, 8)}`;
  const core = cluster.kubeConfig.makeApiClient(CoreV1Api);
  await core.createNamespace({ body: { metadata: { name: ns } } });
  const store = new KubeStore(cluster.kubeConfig);
  for (const name of ['sbx-a', 'sbx-b']) {
    await store.create<Sandbox>(SandboxKind, { apiVersion: API_VERSION, kind: 'Sandbox', metadata: { name, namespace: ns, finalizers: [FINALIZER_RUNTIME] }, spec: {} });
  }
  await store.create<Conversation>(ConversationKind, { apiVersion: API_VERSION, kind: 'Conversation', metadata: { name: 'conv-a', namespace: ns }, spec: {} });
  await core.createNamespacedPersistentVolumeClaim({
    namespace: ns,
    body: { metadata: { name: ARCHIVE_PVC }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } },
  });
  return { ns, store, core };
}

async function archiveExists(core: CoreV1Api, ns: string): Promise<boolean> {
  const { items } = await core.listNamespacedPersistentVolumeClaim({ namespace: ns });
  return items.some((p) => p.metadata?.name === ARCHIVE_PVC && !p.metadata.deletionTimestamp);
}

describe.skipIf(skip)('agentyard uninstall-cleanup', () => {
  it('deletes every conversation and sandbox, waits for their finalization, then deletes the archive PVC', async () => {
    const { ns, store, core } = await setUp();
    const lines: string[] = [];
    const running = uninstallCleanup(cluster.kubeConfig, { namespace: ns, timeoutMs: 60_000, deleteArchives: true, pollMs: 50, log: (l) => lines.push(l) });
    // The controller's part: once a Sandbox is being deleted, take its archive and drop the finalizer.
    // Until then the archive PVC must still be there (the archives are being written to it).
    for (const name of ['sbx-a', 'sbx-b']) {
      let sb: Sandbox | undefined;
      while (!(sb = await store.get(SandboxKind, ns, name))?.metadata.deletionTimestamp) await new Promise((r) => setTimeout(r, 20));
      expect(await archiveExists(core, ns)).toBe(true);
      await store.update(SandboxKind, { ...sb, metadata: { ...sb.metadata, finalizers: [] } });
    }
    const result = await running;
    expect(result).toEqual({ left: [], archiveDeleted: true });
    expect((await store.list(ConversationKind, ns)).items).toEqual([]);
    expect((await store.list(SandboxKind, ns)).items).toEqual([]);
    expect(await archiveExists(core, ns)).toBe(false);
    expect(lines[0]).toContain('deleting 1 conversation(s) and 2 sandbox(es)');
  });

  it('gives up at its deadline with the names still finalizing, and keeps the archive PVC', async () => {
    const { ns, store, core } = await setUp();
    const lines: string[] = [];
    const result = await uninstallCleanup(cluster.kubeConfig, { namespace: ns, timeoutMs: 500, deleteArchives: true, pollMs: 50, log: (l) => lines.push(l) });
    expect(result.left.sort()).toEqual(['sandbox/sbx-a', 'sandbox/sbx-b']);
    expect(result.archiveDeleted).toBe(false);
    expect(await archiveExists(core, ns)).toBe(true);
    expect(lines.at(-1)).toContain('gave up');
    expect((await store.get(SandboxKind, ns, 'sbx-a'))?.metadata.deletionTimestamp).toBeTruthy();
  });

  it('keeps the archive PVC unless asked to delete it', async () => {
    const { ns, store, core } = await setUp();
    for (const name of ['sbx-a', 'sbx-b']) {
      const sb = (await store.get(SandboxKind, ns, name))!;
      await store.update(SandboxKind, { ...sb, metadata: { ...sb.metadata, finalizers: [] } });
    }
    const result = await uninstallCleanup(cluster.kubeConfig, { namespace: ns, timeoutMs: 30_000, deleteArchives: false, pollMs: 50, log: () => {} });
    expect(result).toEqual({ left: [], archiveDeleted: false });
    expect(await archiveExists(core, ns)).toBe(true);
  });
});
