// The Sandbox Configuration on a real kube-apiserver: the generated CRD accepts the object and
// the API server refuses a bad value (the schema the API validates with), a running controller
// over KubeStore takes a change up at once (the scenario the SQLite test runs too), and a change
// written around the API (`kubectl edit`, a client's patch) gets its entry in the admin audit trail,
// naming its field manager, as the admin API shows.
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { ApiextensionsV1Api, CoreV1Api, CustomObjectsApi, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
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
import { SqliteAppStore } from '../../src/facade/db/app-db.ts';
import { startApiServer } from '../../src/facade/server.ts';
import { createLogger } from '../../src/util/log.ts';
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

  it("records changes written around the API (kubectl edit, a client's merge patch) in the audit trail, with their field manager; the admin API shows them", async () => {
    const ns = await namespace();
    const dir = mkdtempSync(join(tmpdir(), 'cfg-audit-'));
    const db = new SqliteAppStore(join(dir, 'app.db'), { clock: systemClock });
    const admin = await db.createUser('root-admin');
    await db.setUserAdmin(admin.id, true);
    const key = await db.createApiKey(admin.id);
    const api = await startApiServer({ store, db, clock: systemClock, namespace: ns, settings: { capacity: 10, idleTimeMs: 1_800_000, deletionTimeMs: 604_800_000 }, log: createLogger('cfg-audit'), port: 0, host: '127.0.0.1' });
    const controller = createController({ store, runtime: new FakeRuntime(), clock: systemClock, settings: { idleTimeMs: 1_800_000, deletionTimeMs: 604_800_000, capacity: 10 }, namespace: ns });
    await controller.start();
    type Change = { user_id: string | null; user_name: string | null; outside_api: boolean; field_manager: string | null; object_deleted: boolean; field: string; from: number | null; to: number | null };
    const config = async () => {
      const res = await fetch(`${api.url}/api/v1/admin/sandbox-configuration`, { headers: { authorization: `Bearer ${key}` } });
      expect(res.status).toBe(200);
      return (await res.json()) as { idle_time_seconds: number; deletion_time_seconds: number; changes: Change[] };
    };
    const until = async (ok: (c: Awaited<ReturnType<typeof config>>) => boolean) => {
      const deadline = Date.now() + 20_000;
      for (;;) {
        const c = await config();
        if (ok(c)) return c;
        if (Date.now() > deadline) throw new Error(`the trail never got there: ${JSON.stringify(c.changes)}`);
        await new Promise((r) => setTimeout(r, 100));
      }
    };
    try {
      // Through the API: the admin's own entry.
      const saved = await fetch(`${api.url}/api/v1/admin/sandbox-configuration`, { method: 'PATCH', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify({ idle_time_seconds: 600 }) });
      expect(saved.status, await saved.clone().text()).toBe(200);

      // Around it, as `kubectl edit` writes: a merge patch under the field manager kubectl-edit, no trail entry.
      const raw = cluster.kubeConfig.makeApiClient(CustomObjectsApi);
      await raw.patchNamespacedCustomObject(
        { group: GROUP, version: VERSION, namespace: ns, plural: SandboxConfigurationKind.plural, name: 'default', body: { spec: { idleTimeSeconds: 90 } }, fieldManager: 'kubectl-edit' },
        setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
      );
      let c = await until((x) => x.changes.length === 2);
      expect(c.idle_time_seconds).toBe(90);
      expect(c.changes[0]).toEqual({ time: expect.any(String), user_id: null, user_name: null, outside_api: true, field_manager: 'kubectl-edit', object_deleted: false, field: 'idle_time_seconds', from: 600, to: 90 });
      expect(c.changes[1]).toMatchObject({ user_id: admin.id, outside_api: false, field_manager: null, object_deleted: false, from: null, to: 600 });

      // The kubectl binary itself, where the cache has one: a real `kubectl edit` (its editor a sed script) and a `kubectl patch`.
      const kubectl = join(kubeBinDir()!, 'kubectl');
      if (existsSync(kubectl)) {
        const run = promisify(execFile);
        const env = { ...process.env, KUBECONFIG: cluster.kubeconfigPath, EDITOR: "sed -i -e 's/idleTimeSeconds: 90/idleTimeSeconds: 45/'" };
        await run(kubectl, ['-n', ns, 'edit', `${SandboxConfigurationKind.plural}.${GROUP}`, 'default'], { env });
        await run(kubectl, ['-n', ns, 'patch', `${SandboxConfigurationKind.plural}.${GROUP}`, 'default', '--type', 'merge', '-p', '{"spec":{"sandboxCapacity":4}}'], { env });
        c = await until((x) => x.changes.length === 4);
        expect(c.changes.slice(0, 2).map((x) => [x.field, x.from, x.to, x.outside_api, x.field_manager, x.user_name]).sort()).toEqual([
          ['idle_time_seconds', 90, 45, true, 'kubectl-edit', null],
          ['sandbox_capacity', null, 4, true, 'kubectl-patch', null],
        ]);
      }

      // The next change through the API follows on from the value kubectl left, and the trail stays whole (nothing recorded twice).
      const again = await fetch(`${api.url}/api/v1/admin/sandbox-configuration`, { method: 'PATCH', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify({ idle_time_seconds: 1200 }) });
      const after = (await again.json()) as { changes: Change[] };
      const idle = after.changes.filter((x) => x.field === 'idle_time_seconds').reverse();
      for (let i = 1; i < idle.length; i++) expect(idle[i]!.from).toBe(idle[i - 1]!.to);
      expect(idle.at(-1)).toMatchObject({ user_id: admin.id, to: 1200, outside_api: false });

      // `kubectl delete` of the object (the real binary where the cache has one): the values go back to
      // the defaults, and the trail is kept, with an entry for each field the deletion reset.
      const before = after.changes.length;
      if (existsSync(kubectl)) await promisify(execFile)(kubectl, ['-n', ns, 'delete', `${SandboxConfigurationKind.plural}.${GROUP}`, 'default'], { env: { ...process.env, KUBECONFIG: cluster.kubeconfigPath } });
      else await raw.deleteNamespacedCustomObject({ group: GROUP, version: VERSION, namespace: ns, plural: SandboxConfigurationKind.plural, name: 'default' });
      c = await until((x) => x.changes.length > before);
      const deletion = c.changes.slice(0, c.changes.length - before);
      expect(deletion.map((x) => [x.field, x.from, x.to, x.outside_api, x.user_name, x.object_deleted]).sort()).toEqual([
        ['idle_time_seconds', 1200, null, true, null, true],
        ...(existsSync(kubectl) ? [['sandbox_capacity', 4, null, true, null, true]] : []),
      ]);
      expect(c.changes.slice(deletion.length)).toEqual(after.changes);
      expect(c.idle_time_seconds).toBe(1800);
      // Kept in a new object with no values: nothing else to record, the trail ends at the defaults.
      const kept = (await store.get(SandboxConfigurationKind, ns, 'default'))!;
      expect(Object.keys(kept.spec)).toEqual(['changes']);
    } finally {
      await controller.stop();
      await api.close();
      await db.close();
      rmSync(dir, { recursive: true, force: true });
    }
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
