// Workspace archives of Kubernetes sandboxes into the object store, on a real API server with the
// test node agent running the archive Pod's command, and a real S3 server (SeaweedFS): the
// controller's runtime presigns the PUTs, the Pod tars the workspace volume and uploads it, and the
// agent server's conversation directories (browser recordings), which the runtime unpacks into the
// conversations' files; with
// the store down the Pod fails, is restarted (restartPolicy OnFailure) and the deletion waits —
// the workspace volume is not removed until the archive is stored.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execFileSync } from 'node:child_process';
import { CoreV1Api, StorageV1Api } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Unavailable } from '../../src/api/errors.ts';
import type { Sandbox } from '../../src/api/sandbox.ts';
import { S3ObjectStore } from '../../src/objstore/s3-store.ts';
import { loadRuntimeAddressing } from '../../src/runtime/kubernetes/addressing.ts';
import { ARCHIVE_UPLOAD_DEADLINE_SECONDS, pvcName } from '../../src/runtime/kubernetes/desired.ts';
import { KubernetesRuntime } from '../../src/runtime/kubernetes/kubernetes-runtime.ts';
import { seaweedBinary, startSeaweed, type SeaweedServer } from '../../src/testing/seaweedfs/server.ts';
import { eventually } from '../embedded/harness.ts';
import { kubeBinDir, startTestCluster, type TestCluster } from './cluster.ts';
import { NodeAgent, TEST_IMAGE } from './node-agent.ts';

const NS = 'archive-sandboxes';
const weed = seaweedBinary();

describe.skipIf(!kubeBinDir() || !weed)('workspace archives into the object store (real API server, SeaweedFS)', () => {
  let cluster: TestCluster;
  let agent: NodeAgent;
  let sw: SeaweedServer;
  let objects: S3ObjectStore;
  let runtime: KubernetesRuntime;
  let core: CoreV1Api;
  // The sandboxes the runtime's Pod watch poked (the controller reconciles each at once).
  const poked: string[] = [];
  const watching = new AbortController();
  const work = mkdtempSync(join(tmpdir(), 'agentyard-archive-'));

  beforeAll(async () => {
    sw = await startSeaweed(weed!);
    objects = new S3ObjectStore({ endpoint: sw.endpoint, bucket: 'agentyard', credentials: sw.credentials, retry: { attempts: 20, baseDelayMs: 100, maxDelayMs: 1000 } });
    await objects.init();
    cluster = await startTestCluster({ controllerManager: false });
    core = cluster.kubeConfig.makeApiClient(CoreV1Api);
    await core.createNamespace({ body: { metadata: { name: NS } } });
    await cluster.kubeConfig.makeApiClient(StorageV1Api).createStorageClass({ body: { metadata: { name: 'standard' }, provisioner: 'kubernetes.io/no-provisioner' } });
    agent = new NodeAgent(cluster.kubeConfig, NS, work, { restartBackoffMs: 200 });
    await agent.start();
    runtime = new KubernetesRuntime(cluster.kubeConfig, {
      namespace: NS,
      image: TEST_IMAGE,
      storageClass: 'standard',
      addressing: loadRuntimeAddressing({ RUNTIME_BASE_URL: 'sandboxes.test' }),
      archiveUploadUrl: (key) => objects.presignPut(key, ARCHIVE_UPLOAD_DEADLINE_SECONDS),
      // Two attempts per run of the Pod's container, not the CLI's 8 over ~35 s: the outage test
      // waits for a failed run (exit 1) and the kubelet's restart before the store comes back.
      archiveUploadAttempts: 2,
      // conv-a is a live conversation placed on the sandbox; conv-b is not (deleted, or another sandbox's).
      conversationFiles: { objects, keep: async (id, sandbox) => id === `${sandbox}-conv-a` },
    });
    void runtime.watch((ref) => poked.push(ref.name), watching.signal);
  }, 120_000);

  afterAll(async () => {
    watching.abort();
    await agent?.stop();
    await cluster?.stop();
    objects?.close();
    await sw?.destroy();
    rmSync(work, { recursive: true, force: true });
  });

  async function workspace(name: string): Promise<Sandbox> {
    const sb: Sandbox = { apiVersion: 'agentyard.dev/v1alpha1', kind: 'Sandbox', metadata: { name, namespace: NS, uid: `00000000-0000-0000-0000-00000000000${name.length}` }, spec: { paused: true } };
    await core.createNamespacedPersistentVolumeClaim({ namespace: NS, body: { metadata: { name: pvcName(name) }, spec: { accessModes: ['ReadWriteOnce'], storageClassName: 'standard', resources: { requests: { storage: '1Gi' } } } } });
    mkdirSync(agent.volumeDir(pvcName(name)), { recursive: true });
    writeFileSync(join(agent.volumeDir(pvcName(name)), 'notes.txt'), `work of ${name}`);
    // The agent server's data directory on the volume (desired.ts AGENT_DATA_DIR): a browser recording per conversation.
    for (const conv of ['conv-a', 'conv-b']) {
      const recordings = join(agent.volumeDir(pvcName(name)), '.agentyard', 'conversations', `${name}-${conv}`, 'browser_recordings');
      mkdirSync(recordings, { recursive: true });
      writeFileSync(join(recordings, 'trace.zip'), `recording of ${name} ${conv}`);
    }
    return sb;
  }

  /** What the controller does: call delete again while it says the archive is under way. */
  async function deleteUntilDone(sb: Sandbox, during?: (attempt: number) => Promise<void>, withinMs = 100_000): Promise<number> {
    // A deadline, not a count of attempts: after an outage the archive Pod's restart backoff and
    // the store's first write after its start (seconds each) come on top, more so on a busy machine.
    const deadline = Date.now() + withinMs;
    for (let attempt = 1; Date.now() < deadline; attempt++) {
      try {
        await runtime.delete(sb);
        return attempt;
      } catch (err) {
        if (!(err instanceof Unavailable)) throw err;
        await during?.(attempt);
        await new Promise((r) => setTimeout(r, 100));
      }
    }
    throw new Error('the archive never finished');
  }

  const archives = async (sandbox: string) => (await objects.list('internal/workspace-archives/')).filter((o) => o.key.startsWith(`internal/workspace-archives/${sandbox}-`));

  it('the archive Pod stores the workspace in the bucket through its presigned URL; no archive PVC is made', async () => {
    const sb = await workspace('up');
    await deleteUntilDone(sb);
    const [archive, ...more] = await archives('up');
    expect(more).toEqual([]);
    expect(execFileSync('tar', ['-xzOf', '-', './notes.txt'], { input: (await objects.get(archive!.key))! }).toString()).toBe('work of up');
    await expect(core.readNamespacedPersistentVolumeClaim({ name: 'agentyard-archive', namespace: NS })).rejects.toThrow();
    // The live conversation's recording, where its download and its deletion find it; the other
    // one's is not kept; the upload the controller unpacked is gone.
    expect(await objects.list('conversations/')).toEqual([{ key: 'conversations/up-conv-a/files/browser_recordings/trace.zip', size: 'recording of up conv-a'.length }]);
    expect((await objects.get('conversations/up-conv-a/files/browser_recordings/trace.zip'))?.toString()).toBe('recording of up conv-a');
    expect(await objects.list('internal/conversation-files/')).toEqual([]);
    const pvc = await core.readNamespacedPersistentVolumeClaim({ name: pvcName('up'), namespace: NS }).catch(() => undefined);
    expect(pvc === undefined || pvc.metadata?.deletionTimestamp !== undefined).toBe(true);
    // The archive Pod's changes poke its sandbox (this one has no agent-server Pod: nothing else can),
    // so the controller's next delete() comes as the archive ends, not after its retry backoff.
    await eventually(async () => (poked.includes('up') ? true : undefined), 'the archive Pod to poke sandbox up', 10_000);
  }, 120_000);

  it('with the store down the upload is retried and the workspace kept until it is stored', async () => {
    const sb = await workspace('down');
    await sw.stop();
    let restartedWhileDown = false;
    await deleteUntilDone(sb, async () => {
      if (restartedWhileDown) return;
      const pod = await core.readNamespacedPod({ name: 'down-archive', namespace: NS }).catch(() => undefined);
      if ((pod?.status?.containerStatuses?.[0]?.restartCount ?? 0) < 1) return;
      // The upload failed at least once: the workspace volume is still there, then the store comes back.
      const pvc = await core.readNamespacedPersistentVolumeClaim({ name: pvcName('down'), namespace: NS });
      expect(pvc.metadata?.deletionTimestamp).toBeUndefined();
      restartedWhileDown = true;
      await sw.start();
    }, 160_000);
    expect(restartedWhileDown).toBe(true);
    const [archive] = await archives('down');
    expect(execFileSync('tar', ['-xzOf', '-', './notes.txt'], { input: (await objects.get(archive!.key))! }).toString()).toBe('work of down');
    expect((await objects.get('conversations/down-conv-a/files/browser_recordings/trace.zip'))?.toString()).toBe('recording of down conv-a');
  }, 200_000);
});
