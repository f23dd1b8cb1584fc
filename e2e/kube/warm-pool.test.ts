// Warm pools on a real kube-apiserver + etcd + kube-controller-manager (garbage collection), the
// reconcilers over KubeStore with the fake runtime and a loopback stand-in agent server: the pool
// fills, `kubectl get sandboxwarmpools` shows READY/DESIRED and `kubectl scale` resizes it, starts
// racing in two controllers (two KubeStores) claim each member once, and deleting the pool lets the
// cluster's garbage collector take the unclaimed members while claimed ones stay.
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { CoreV1Api } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConversationKind, type Conversation } from '../../src/api/conversation.ts';
import { API_VERSION, LABEL_OWNER } from '../../src/api/meta.ts';
import { SandboxKind, type Sandbox } from '../../src/api/sandbox.ts';
import { ANNOTATION_CLAIMED_BY, LABEL_CLAIMED_FROM, LABEL_WARM_POOL, SandboxWarmPoolKind } from '../../src/api/warm-pool.ts';
import { ManualClock } from '../../src/controller/clock.ts';
import { ConversationReconciler } from '../../src/controller/conversation/reconciler.ts';
import type { LifecycleSettings } from '../../src/controller/lifecycle.ts';
import { SandboxReconciler } from '../../src/controller/sandbox/reconciler.ts';
import { FakeRuntime } from '../../src/controller/testing/fake-runtime.ts';
import { startFakeAgentServer, type FakeAgentServer } from '../../src/controller/testing/fake-agent-server.ts';
import { WarmPoolReconciler } from '../../src/controller/warm-pool/reconciler.ts';
import { KubeStore } from '../../src/store/kube/kube-store.ts';
import { kubeBinDir, startTestCluster, type TestCluster } from './cluster.ts';

const run = promisify(execFile);
const skip = !kubeBinDir();

let cluster: TestCluster;
let agent: FakeAgentServer;
beforeAll(async () => {
  if (skip) return;
  cluster = await startTestCluster();
  agent = await startFakeAgentServer();
});
afterAll(async () => {
  await agent?.close();
  await cluster?.stop();
});

const settings: LifecycleSettings = { idleTimeMs: 60_000, deletionTimeMs: 3_600_000, capacity: 50 };
const hex = (n: number) => n.toString(16).padStart(32, '0');

async function env() {
  const ns = `wp-${randomUUID().slice(0, 8)}`;
  await cluster.kubeConfig.makeApiClient(CoreV1Api).createNamespace({ body: { metadata: { name: ns } } });
  const store = new KubeStore(cluster.kubeConfig);
  const clock = new ManualClock('2026-01-01T00:00:00Z');
  const runtime = new FakeRuntime();
  const pools = new WarmPoolReconciler({ store, clock, settings });
  const sandboxes = new SandboxReconciler({ store, runtime, clock, settings });
  const members = async (pool: string) => (await store.list(SandboxKind, ns, { labelSelector: `${LABEL_WARM_POOL}=${pool}` })).items.filter((s) => !s.metadata.deletionTimestamp);
  const settle = async (sb: Sandbox) => {
    for (let i = 0; i < 4; i++) await sandboxes.reconcile(`${ns}/${sb.metadata.name}`);
  };
  /** One pool pass, then every member started and booted, then the pool again. */
  const fill = async (pool: string) => {
    await pools.reconcile(`${ns}/${pool}`);
    for (const sb of await members(pool)) {
      await settle(sb);
      runtime.boot(sb.metadata.name, agent.url);
      await settle(sb);
    }
    await pools.reconcile(`${ns}/${pool}`);
    return members(pool);
  };
  const kubectl = async (...args: string[]) => (await run(join(kubeBinDir()!, 'kubectl'), ['--kubeconfig', cluster.kubeconfigPath, '-n', ns, ...args])).stdout;
  return { ns, store, clock, runtime, pools, members, fill, kubectl };
}

describe.skipIf(skip)('warm pools on a real API server', () => {
  it('fills the pool; kubectl shows READY/DESIRED and scales it', async () => {
    const e = await env();
    await e.store.create(SandboxWarmPoolKind, { apiVersion: API_VERSION, kind: 'SandboxWarmPool', metadata: { name: 'py', namespace: e.ns }, spec: { replicas: 3 } });
    const filled = await e.fill('py');
    expect(filled).toHaveLength(3);
    expect(filled.every((s) => s.status?.phase === 'RUNNING' && s.spec.owner === undefined)).toBe(true);
    const table = await e.kubectl('get', 'sandboxwarmpools');
    expect(table.split('\n')[0]).toMatch(/^NAME\s+READY\s+DESIRED\s+AGE/);
    expect(table.split('\n')[1]).toMatch(/^py\s+3\s+3\s+/);
    expect(await e.kubectl('get', 'swp', 'py', '-o', 'jsonpath={.status.conditions[0].type}={.status.conditions[0].status} gen={.status.observedGeneration}')).toBe('Ready=True gen=1');

    await e.kubectl('scale', 'sandboxwarmpool/py', '--replicas=1');
    await e.pools.reconcile(`${e.ns}/py`);
    expect(await e.members('py')).toHaveLength(1);
    expect((await e.kubectl('get', 'sandboxwarmpools', '--no-headers')).trim()).toMatch(/^py\s+1\s+1\s+/);
  });

  it('two controllers racing: a pool of 3, 8 parallel starts, exactly 3 hits, each member claimed once', async () => {
    const e = await env();
    await e.store.create(SandboxWarmPoolKind, { apiVersion: API_VERSION, kind: 'SandboxWarmPool', metadata: { name: 'p', namespace: e.ns }, spec: { replicas: 3 } });
    await e.fill('p');
    const counts = { hits: 0, misses: 0 };
    const metrics = { hit: () => void counts.hits++, miss: () => void counts.misses++, pool: () => undefined, poolGone: () => undefined };
    // Two controllers with their own API clients: only the API server's resourceVersion check keeps them apart.
    const controllers = [0, 1].map(() => new ConversationReconciler({ store: new KubeStore(cluster.kubeConfig), clock: e.clock, settings, runtime: e.runtime, warmPools: metrics }));
    const ids = Array.from({ length: 8 }, (_, i) => hex(i + 1));
    for (const [i, id] of ids.entries()) {
      const conv: Conversation = { apiVersion: API_VERSION, kind: 'Conversation', metadata: { name: id, namespace: e.ns, labels: { [LABEL_OWNER]: `user-${i}` } }, spec: { owner: `user-${i}` } };
      await e.store.create(ConversationKind, conv);
    }
    await Promise.all(ids.map((id, i) => controllers[i % 2]!.reconcile(`${e.ns}/${id}`)));
    expect(counts).toEqual({ hits: 3, misses: 5 });
    const claimed = (await e.store.list(SandboxKind, e.ns, { labelSelector: `${LABEL_CLAIMED_FROM}=p` })).items;
    expect(claimed).toHaveLength(3);
    for (const sb of claimed) {
      const by = sb.metadata.annotations![ANNOTATION_CLAIMED_BY]!;
      const conv = (await e.store.get(ConversationKind, e.ns, by))!;
      expect(conv.status?.sandboxName).toBe(sb.metadata.name);
      expect(sb.spec.owner).toBe(conv.spec.owner);
      expect(sb.metadata.ownerReferences ?? []).toEqual([]);
    }
  });

  it("deleting the pool: the cluster's garbage collector removes the unclaimed members, the claimed one stays", async () => {
    const e = await env();
    await e.store.create(SandboxWarmPoolKind, { apiVersion: API_VERSION, kind: 'SandboxWarmPool', metadata: { name: 'p', namespace: e.ns }, spec: { replicas: 2 } });
    await e.fill('p');
    await e.store.create(ConversationKind, { apiVersion: API_VERSION, kind: 'Conversation', metadata: { name: hex(99), namespace: e.ns, labels: { [LABEL_OWNER]: 'alice' } }, spec: { owner: 'alice' } });
    await new ConversationReconciler({ store: e.store, clock: e.clock, settings, runtime: e.runtime }).reconcile(`${e.ns}/${hex(99)}`);
    const mine = (await e.store.get(ConversationKind, e.ns, hex(99)))!.status!.sandboxName!;
    await e.store.delete(SandboxWarmPoolKind, e.ns, 'p');
    const deadline = Date.now() + 60_000;
    for (;;) {
      const left = (await e.store.list(SandboxKind, e.ns)).items;
      // Members carry the runtime finalizer: the sandbox reconciler lets them go once marked.
      for (const sb of left.filter((s) => s.metadata.deletionTimestamp)) await new SandboxReconciler({ store: e.store, runtime: e.runtime, clock: e.clock, settings }).reconcile(`${e.ns}/${sb.metadata.name}`);
      if (left.length === 1) {
        expect(left[0]!.metadata.name).toBe(mine);
        expect(left[0]!.metadata.deletionTimestamp).toBeUndefined();
        break;
      }
      if (Date.now() > deadline) throw new Error(`members left: ${left.map((s) => s.metadata.name).join(', ')}`);
      await new Promise((r) => setTimeout(r, 200));
    }
  });
});
