// `agentyard api` in cluster mode with an external PostgreSQL app store (AGENTYARD_DATABASE_URL):
// two replicas started at once share one real PostgreSQL server (Debian's postgresql) and a real
// kube-apiserver; a user made with `agentyard users` and that URL is known to both.
import { CoreV1Api } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SandboxKind } from '../../src/api/sandbox.ts';
import { KubeStore } from '../../src/store/kube/kube-store.ts';
import { postgresBinDir, startPostgres, type PgServer } from '../../src/testing/postgres/server.ts';
import { apiUrlOf, runCli, type CliProcess } from './cli.ts';
import { kubeBinDir, startTestCluster, type TestCluster } from './cluster.ts';

const NS = 'agentyard-sandboxes';
const missing = !kubeBinDir() ? 'Kubernetes binaries (make k8s-bin)' : !postgresBinDir() ? 'PostgreSQL server binaries under /usr/lib/postgresql (Debian postgresql)' : undefined;

describe.skipIf(missing !== undefined)(`agentyard api on an external PostgreSQL${missing ? ` (skipped: needs ${missing})` : ''}`, () => {
  let cluster: TestCluster;
  let pg: PgServer;
  const procs: CliProcess[] = [];

  beforeAll(async () => {
    [cluster, pg] = await Promise.all([startTestCluster({ controllerManager: false }), startPostgres()]);
    await cluster.kubeConfig.makeApiClient(CoreV1Api).createNamespace({ body: { metadata: { name: NS } } });
  }, 120_000);

  afterAll(async () => {
    await Promise.all(procs.map((p) => p.stop('SIGKILL')));
    await Promise.all([cluster?.stop(), pg?.stop()]);
  });

  function run(args: string[], env: Record<string, string> = {}): CliProcess {
    const proc = runCli(args, {
      env: {
        KUBECONFIG: cluster.kubeconfigPath,
        AGENTYARD_SANDBOX_NAMESPACE: NS,
        AGENTYARD_DATABASE_URL: pg.url,
        AGENTYARD_DATA_DIR: '/nonexistent/agentyard-must-not-be-used',
        AGENTYARD_LOG_LEVEL: 'warn',
        ...env,
      },
    });
    procs.push(proc);
    return proc;
  }

  it('two replicas migrate one database together and answer the app API for a user made by the CLI', async () => {
    const env = { AGENTYARD_PORT: '0', AGENTYARD_HOST: '127.0.0.1', AGENTYARD_API_KEY: 'ay_admin_pg_test_key' };
    const a = run(['api'], env);
    const b = run(['api'], env);
    const [urlA, urlB] = await Promise.all([apiUrlOf(a), apiUrlOf(b)]);

    const users = run(['users', 'create', 'alice']);
    expect(await users.exited, users.lines.join('\n')).toBe(0);
    const key = /API key: (\S+)/.exec(users.lines.join('\n'))![1]!;
    const call = (url: string, method: string, path: string, body?: unknown) =>
      fetch(`${url}/api/v1${path}`, {
        method,
        headers: { authorization: `Bearer ${key}`, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
        ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
      });

    // Settings written through one replica are read through the other.
    expect((await call(urlA, 'POST', '/settings', { sandbox_grouping_strategy: 'GROUP_BY_NEWEST' })).status).toBe(200);
    expect(await (await call(urlB, 'GET', '/settings')).json()).toMatchObject({ sandbox_grouping_strategy: 'GROUP_BY_NEWEST' });

    const created = await call(urlB, 'POST', '/sandboxes');
    expect(created.status).toBe(200);
    const { id } = (await created.json()) as { id: string };
    const store = new KubeStore(cluster.kubeConfig);
    expect((await store.get(SandboxKind, NS, id))?.spec.owner).not.toBe('admin');
    const found = (await (await call(urlA, 'GET', '/sandboxes/search')).json()) as { items: { id: string }[] };
    expect(found.items.map((s) => s.id)).toEqual([id]);

    // The operator key (AGENTYARD_API_KEY) registered by both replicas works on either; a wrong key does not.
    expect((await fetch(`${urlA}/api/v1/sandboxes/search`, { headers: { authorization: 'Bearer ay_admin_pg_test_key' } })).status).toBe(200);
    expect((await fetch(`${urlB}/api/v1/sandboxes/search`, { headers: { authorization: 'Bearer ay_wrong' } })).status).toBe(401);

    a.child.kill('SIGTERM');
    b.child.kill('SIGTERM');
    expect(await a.exited).toBe(0);
    expect(await b.exited).toBe(0);
  });
});
