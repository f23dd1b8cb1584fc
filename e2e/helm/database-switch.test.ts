// The chart refuses to switch a release between the bundled database and an external one (there is
// no supported migration; the API would start empty): upgrades and re-installs on the real API server.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CoreV1Api, StorageV1Api } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestCluster, type TestCluster } from '../kube/cluster.ts';
import { CHART, helm, helmBin, kubectlBin, run, writeValues } from './helm.ts';

const NS = 'agentyard';
const VALUES =
  'baseDomain: agents.example.com\nruntime: {storageClass: standard}\ningress: {tlsSecret: wildcard-agents}\nllm: {model: openai/gpt-4o}\n' +
  'networkPolicy: {podCidrs: [10.244.0.0/16], serviceCidrs: [10.0.0.0/24], nodeCidrs: [192.168.5.0/24]}\n';

describe.skipIf(!helmBin || !kubectlBin)('the chart and a switch of database', () => {
  let cluster: TestCluster;
  let core: CoreV1Api;
  const dir = mkdtempSync(join(tmpdir(), 'agentyard-db-switch-'));
  const values = writeValues(dir, 'values.yaml', VALUES);

  beforeAll(async () => {
    cluster = await startTestCluster({ controllerManager: false });
    core = cluster.kubeConfig.makeApiClient(CoreV1Api);
    await core.createNamespace({ body: { metadata: { name: NS } } });
    await core.createNamespace({ body: { metadata: { name: 'agentyard-sandboxes', labels: { 'pod-security.kubernetes.io/enforce': 'restricted' } } } });
    await cluster.kubeConfig.makeApiClient(StorageV1Api).createStorageClass({ body: { metadata: { name: 'standard' }, provisioner: 'kubernetes.io/no-provisioner' } });
    const secret = (name: string, stringData: Record<string, string>, type?: string) => core.createNamespacedSecret({ namespace: NS, body: { metadata: { name }, ...(type ? { type } : {}), stringData } });
    await secret('agentyard-api-key', { 'api-key': 'ay_switch_admin_key_0123456789' });
    await secret('agentyard-llm', { 'api-key': 'sk-not-a-real-model-key' });
    await secret('agentyard-database', { url: 'postgres://agentyard@db.example.com/agentyard' });
    await secret('wildcard-agents', { 'tls.crt': 'not-a-real-certificate', 'tls.key': 'not-a-real-key' }, 'kubernetes.io/tls');
  }, 120_000);

  afterAll(async () => {
    await cluster?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  // No Job controller here to run the pre-delete cleanup hook (install.test.ts validates it, e2e/node runs it).
  const kube = (verb: string, ...set: string[]) => helm([verb, 'agentyard', ...(verb === 'uninstall' ? ['--no-hooks'] : [CHART, '-f', values]), '-n', NS, '--kubeconfig', cluster.kubeconfigPath, ...set.flatMap((v) => ['--set', v])]);
  const kubectl = (...args: string[]) => run(kubectlBin!, ['--kubeconfig', cluster.kubeconfigPath, '-n', NS, ...args]);
  const TO_EXTERNAL = /database\.external is true, but the API Deployment agentyard-api of this release uses the bundled database \(SQLite on the volume agentyard-api-data\)\. There is no supported migration from the bundled to an external database, and switching would start the API on an empty database while the data stays on the volume\. Keep database\.external=false; to start over on PostgreSQL, losing the bundled data: helm uninstall, then kubectl -n agentyard delete pvc agentyard-api-data, then install with database\.external=true/;

  it('records the database on the data volume at install', async () => {
    const rendered = await helm(['template', 'agentyard', CHART, '-n', NS, '-f', values, '--set', 'database.external=true']);
    expect(rendered.out).toMatch(/kind: PersistentVolumeClaim[\s\S]*agentyard\.dev\/database: external/);
    const installed = await kube('install');
    expect(installed.ok, installed.out).toBe(true);
    expect((await kubectl('get', 'pvc', 'agentyard-api-data', '-o', 'jsonpath={.metadata.annotations.agentyard\\.dev/database}')).stdout).toBe('bundled');
  });

  it('refuses an upgrade from the bundled to an external database, and takes one that keeps it', async () => {
    const switched = await kube('upgrade', 'database.external=true');
    expect(switched.ok).toBe(false);
    expect(switched.out).toMatch(TO_EXTERNAL);
    // A server-side dry run says so too, before anything is touched.
    const dry = await helm(['upgrade', 'agentyard', CHART, '-f', values, '-n', NS, '--kubeconfig', cluster.kubeconfigPath, '--set', 'database.external=true', '--dry-run=server']);
    expect(dry.out).toMatch(TO_EXTERNAL);
    const kept = await kube('upgrade', 'lifecycle.idleTimeSeconds=600');
    expect(kept.ok, kept.out).toBe(true);
    expect((await kubectl('get', 'deployment', 'agentyard-api', '-o', 'jsonpath={.spec.template.spec.containers[0].env[*].name}')).stdout).not.toContain('AGENTYARD_DATABASE_URL');
  });

  it('refuses a re-install on an external database while the bundled data volume is kept', async () => {
    expect((await kube('uninstall')).ok).toBe(true);
    const reinstall = await kube('install', 'database.external=true');
    expect(reinstall.ok).toBe(false);
    expect(reinstall.out).toMatch(/database\.external is true, but the data volume agentyard-api-data kept from an earlier installation uses the bundled database/);
    // The operator's deliberate choice to start over: drop the volume, then install.
    await kubectl('delete', 'pvc', 'agentyard-api-data', '--wait=false');
    await kubectl('patch', 'pvc', 'agentyard-api-data', '--type=merge', '-p', '{"metadata":{"finalizers":null}}').catch(() => undefined);
    const fresh = await kube('install', 'database.external=true');
    expect(fresh.ok, fresh.out).toBe(true);
  });

  it('refuses an upgrade from the external to the bundled database', async () => {
    const back = await kube('upgrade', 'database.external=false');
    expect(back.ok).toBe(false);
    expect(back.out).toMatch(
      /database\.external is false, but the API Deployment agentyard-api of this release uses an external database \(secrets\.database\)\. There is no supported migration between the two, and switching would start the API on an empty bundled database while the data stays in PostgreSQL\. Keep database\.external=true with the same secrets\.database/,
    );
    expect((await kube('upgrade', 'database.external=true')).ok).toBe(true);
  });
});
