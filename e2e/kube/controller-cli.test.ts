// `agentyard controller` and `agentyard api` as real processes against the real API server:
// start-up refusals, leader election through a Lease, takeover after a killed leader.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CoordinationV1Api, CoreV1Api, StorageV1Api } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { API_VERSION } from '../../src/api/meta.ts';
import { SandboxKind } from '../../src/api/sandbox.ts';
import { KubeStore } from '../../src/store/kube/kube-store.ts';
import { eventually } from '../embedded/harness.ts';
import { apiUrlOf, runCli, type CliProcess } from './cli.ts';
import { kubeBinDir, startTestCluster, type TestCluster } from './cluster.ts';

const NS = 'agentyard-sandboxes';

describe.skipIf(!kubeBinDir())('agentyard controller and api in cluster mode', () => {
  let cluster: TestCluster;
  let store: KubeStore;
  const procs: CliProcess[] = [];
  const work = mkdtempSync(join(tmpdir(), 'agentyard-cli-'));

  beforeAll(async () => {
    cluster = await startTestCluster({ controllerManager: false });
    await cluster.kubeConfig.makeApiClient(CoreV1Api).createNamespace({ body: { metadata: { name: NS } } });
    await cluster.kubeConfig.makeApiClient(StorageV1Api).createStorageClass({ body: { metadata: { name: 'standard' }, provisioner: 'kubernetes.io/no-provisioner' } });
    store = new KubeStore(cluster.kubeConfig);
  }, 120_000);

  afterAll(async () => {
    await Promise.all(procs.map((p) => p.stop('SIGKILL')));
    await cluster?.stop();
    rmSync(work, { recursive: true, force: true });
  });

  function run(command: 'controller' | 'api', env: Record<string, string> = {}): CliProcess {
    const proc = runCli([command], {
      env: {
        KUBECONFIG: cluster.kubeconfigPath,
        AGENTYARD_SANDBOX_NAMESPACE: NS,
        STORAGE_CLASS: 'standard',
        AGENTYARD_SANDBOX_IMAGE: 'agentyard:test',
        RUNTIME_BASE_URL: 'sandboxes.test',
        AGENTYARD_LEASE_DURATION_SECONDS: '3',
        AGENTYARD_LEASE_RENEW_DEADLINE_SECONDS: '2',
        AGENTYARD_LEASE_RETRY_PERIOD_SECONDS: '0.5',
        AGENTYARD_LOG_LEVEL: 'warn',
        ...env,
      },
    });
    procs.push(proc);
    return proc;
  }

  it('refuses to start with a missing storage class or an inconsistent URL pattern, naming the values', async () => {
    const missing = run('controller', { STORAGE_CLASS: 'no-such-class' });
    expect(await missing.exited).not.toBe(0);
    expect(missing.lines.join('\n')).toContain("STORAGE_CLASS 'no-such-class' does not exist");
    const pattern = run('controller', { RUNTIME_URL_PATTERN: '{runtime_id}.elsewhere.test' });
    expect(await pattern.exited).not.toBe(0);
    expect(pattern.lines.join('\n')).toMatch(/RUNTIME_URL_PATTERN '\{runtime_id\}\.elsewhere\.test' disagrees with RUNTIME_BASE_URL 'sandboxes\.test'/);
  });

  it('two replicas elect one leader; a killed leader is replaced within the lease time and nothing is lost', async () => {
    const a = run('controller');
    const b = run('controller');
    const leaderOf = () => [a, b].find((p) => p.lines.some((l) => l.includes('"leading"')));
    const first = await eventually(async () => leaderOf(), 'a leader', 30_000);
    const other = first === a ? b : a;
    const lease = await cluster.kubeConfig.makeApiClient(CoordinationV1Api).readNamespacedLease({ name: 'agentyard-controller', namespace: NS });
    expect(lease.spec?.holderIdentity).toBeTruthy();
    expect(other.lines.some((l) => l.includes('"leading"'))).toBe(false);

    await store.create(SandboxKind, { apiVersion: API_VERSION, kind: 'Sandbox', metadata: { name: 'elected-1', namespace: NS }, spec: { paused: false } });
    await eventually(async () => ((await store.get(SandboxKind, NS, 'elected-1'))?.status?.phase === 'STARTING' ? true : undefined), 'the leader to reconcile', 30_000);

    // A Sandbox created while nobody leads is picked up by the successor.
    const killedAt = Date.now();
    first.child.kill('SIGKILL');
    await store.create(SandboxKind, { apiVersion: API_VERSION, kind: 'Sandbox', metadata: { name: 'elected-2', namespace: NS }, spec: { paused: false } });
    await eventually(async () => (other.lines.some((l) => l.includes('"leading"')) ? true : undefined), 'the other replica to lead', 30_000);
    const takeoverMs = Date.now() - killedAt;
    console.log(`leader takeover after SIGKILL: ${takeoverMs} ms (lease 3 s, retry 0.5 s)`);
    expect(takeoverMs).toBeLessThan(3_000 + 500 + 5_000); // lease + retry, with slack for a loaded machine
    await eventually(async () => ((await store.get(SandboxKind, NS, 'elected-2'))?.status?.phase === 'STARTING' ? true : undefined), 'the new leader to reconcile', 30_000);
    await cluster.kubeConfig.makeApiClient(CoreV1Api).readNamespacedPod({ name: 'elected-2', namespace: NS });
  });

  it('the API in cluster mode maps /api/v1 onto custom resources', async () => {
    const api = run('api', { AGENTYARD_PORT: '0', AGENTYARD_HOST: '127.0.0.1', AGENTYARD_DATA_DIR: join(work, 'api'), AGENTYARD_API_KEY: 'ay_cluster_test_key' });
    const url = await apiUrlOf(api);
    const res = await fetch(`${url}/api/v1/sandboxes`, { method: 'POST', headers: { authorization: 'Bearer ay_cluster_test_key' } });
    expect(res.status).toBe(200);
    const created = (await res.json()) as { id: string; status: string };
    const cr = await store.get(SandboxKind, NS, created.id);
    expect(cr?.spec.owner).toBe('admin');
    expect((await fetch(`${url}/api/v1/sandboxes/search`)).status).toBe(401);
  });
});
