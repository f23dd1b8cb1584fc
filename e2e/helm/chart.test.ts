// The Helm chart with a real Helm 4: lint, templates (golden files), install-time refusals, and an
// install into the real test API server (preflight of secrets, RBAC and CRDs included).
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { AppsV1Api, CoreV1Api, RbacAuthorizationV1Api, StorageV1Api } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { kubeBinDir, startTestCluster, type TestCluster } from '../kube/cluster.ts';

const REPO = join(import.meta.dirname, '../..');
const CHART = join(REPO, 'charts/agentyard');
const helmBin = kubeBinDir() && existsSync(join(kubeBinDir()!, 'helm')) ? join(kubeBinDir()!, 'helm') : undefined;
const run = promisify(execFile);

async function helm(args: string[], env: Record<string, string> = {}): Promise<{ ok: boolean; out: string }> {
  const home = mkdtempSync(join(tmpdir(), 'helm-home-'));
  try {
    const r = await run(helmBin!, args, { env: { PATH: process.env.PATH ?? '', HOME: home, HELM_CACHE_HOME: join(home, 'cache'), HELM_CONFIG_HOME: join(home, 'config'), HELM_DATA_HOME: join(home, 'data'), ...env }, maxBuffer: 32 * 1024 * 1024 });
    return { ok: true, out: r.stdout + r.stderr };
  } catch (err) {
    const e = err as { stdout?: string; stderr?: string };
    return { ok: false, out: (e.stdout ?? '') + (e.stderr ?? '') };
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
}

function valuesFile(dir: string, name: string, yaml: string): string {
  const path = join(dir, name);
  writeFileSync(path, yaml);
  return path;
}

const VALUE_FILES = ['minimal-values.yaml', 'tls-values.yaml', 'no-ingress-values.yaml'];

describe.skipIf(!helmBin)('Helm chart', () => {
  const dir = mkdtempSync(join(tmpdir(), 'agentyard-helm-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it.each(VALUE_FILES)('lints strictly and renders %s as the golden file says', async (file) => {
    const lint = await helm(['lint', '--strict', CHART, '-f', join(CHART, 'ci', file)]);
    expect(lint.ok, lint.out).toBe(true);
    const rendered = await helm(['template', 'agentyard', CHART, '--namespace', 'agentyard', '-f', join(CHART, 'ci', file)]);
    expect(rendered.ok, rendered.out).toBe(true);
    await expect(rendered.out).toMatchFileSnapshot(`__snapshots__/${file.replace('-values.yaml', '')}.yaml`);
  });

  it.each([
    ['an inconsistent URL pattern', 'runtime: {baseUrl: agents.example.com, storageClass: standard, urlPattern: "{runtime_id}.sandboxes.example.com"}\ningress: {enabled: false}\n', /RUNTIME_URL_PATTERN\) "\{runtime_id\}\.sandboxes\.example\.com" disagrees with runtime\.baseUrl \(RUNTIME_BASE_URL\) "agents\.example\.com"/],
    ['two API replicas on the bundled database', 'runtime: {baseUrl: a.example.com, storageClass: standard}\ningress: {enabled: false}\napi: {replicas: 2}\n', /api\.replicas is 2, but the bundled database/],
    ['an external database', 'runtime: {baseUrl: a.example.com, storageClass: standard}\ningress: {enabled: false}\ndatabase: {external: true}\n', /not supported yet/],
    ['no storage class', 'runtime: {baseUrl: a.example.com}\ningress: {enabled: false}\n', /runtime\.storageClass \(STORAGE_CLASS\) is required/],
    ['a value the schema does not know', 'runtime: {baseUrl: a.example.com, storageClass: standard, storageclass: typo}\n', /storageclass/],
  ])('refuses %s with a message that says what to change', async (_what, yaml, message) => {
    const r = await helm(['template', 'agentyard', CHART, '-f', valuesFile(dir, `bad-${Math.random()}.yaml`, yaml)]);
    expect(r.ok).toBe(false);
    expect(r.out).toMatch(message);
  });
});

describe.skipIf(!helmBin)('helm install into the real API server', () => {
  let cluster: TestCluster;
  const dir = mkdtempSync(join(tmpdir(), 'agentyard-helm-install-'));
  let values: string;

  beforeAll(async () => {
    // A CRD directory with no CRD in it: the chart must install them itself.
    const noCrds = join(dir, 'no-crds');
    mkdirSync(noCrds);
    writeFileSync(join(noCrds, 'none.yaml'), 'apiVersion: v1\nkind: List\nitems: []\n');
    cluster = await startTestCluster({ controllerManager: false, crdDir: noCrds });
    await cluster.kubeConfig.makeApiClient(CoreV1Api).createNamespace({ body: { metadata: { name: 'agentyard' } } });
    await cluster.kubeConfig.makeApiClient(StorageV1Api).createStorageClass({ body: { metadata: { name: 'standard' }, provisioner: 'kubernetes.io/no-provisioner' } });
    values = valuesFile(dir, 'values.yaml', 'runtime: {baseUrl: agents.example.com, storageClass: standard}\ningress: {baseDomain: example.com}\n');
  }, 120_000);
  afterAll(async () => {
    await cluster?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  const kube = (args: string[]) => helm([...args, '--kubeconfig', cluster.kubeconfigPath]);

  async function preflight(kubeconfig: string): Promise<{ code: number; out: string }> {
    try {
      const r = await run(process.execPath, [join(REPO, 'src/cli/main.ts'), 'preflight'], {
        env: { PATH: process.env.PATH ?? '', KUBECONFIG: kubeconfig, STORAGE_CLASS: 'standard', RUNTIME_BASE_URL: 'agents.example.com', AGENTYARD_LOG_LEVEL: 'silent' },
      });
      return { code: 0, out: r.stdout };
    } catch (err) {
      const e = err as { code?: number; stdout?: string; stderr?: string };
      return { code: e.code ?? 1, out: (e.stdout ?? '') + (e.stderr ?? '') };
    }
  }

  it('fails early and clearly while a pre-created secret is missing, then installs, upgrades and uninstalls', async () => {
    const kubectl = (...args: string[]) => run(join(kubeBinDir()!, 'kubectl'), ['--kubeconfig', cluster.kubeconfigPath, ...args]);
    await expect(kubectl('get', 'crd', 'sandboxes.agentyard.dev')).rejects.toThrow(); // not there before the chart
    // Before anything is installed, preflight says what is wrong and how to fix it.
    const before = await preflight(cluster.kubeconfigPath);
    expect(before.code).toBe(1);
    expect(before.out).toMatch(/FAIL\s+CRDs installed: missing: sandboxes\.agentyard\.dev/);
    expect(before.out).toMatch(/FAIL\s+namespace agentyard-sandboxes: does not exist\n\s+fix: kubectl create namespace agentyard-sandboxes/);
    expect(before.out).toMatch(/FAIL\s+secret agentyard-api-key: missing in namespace agentyard/);

    const missing = await kube(['install', 'agentyard', CHART, '--namespace', 'agentyard', '-f', values]);
    expect(missing.ok).toBe(false);
    expect(missing.out).toMatch(/secrets\.apiKey: Secret "agentyard-api-key" is missing in namespace "agentyard"/);

    const core = cluster.kubeConfig.makeApiClient(CoreV1Api);
    for (const [name, key] of [['agentyard-api-key', 'api-key'], ['agentyard-llm', 'api-key']]) {
      await core.createNamespacedSecret({ namespace: 'agentyard', body: { metadata: { name: name! }, stringData: { [key!]: 'not-a-real-secret' } } });
    }
    const installed = await kube(['install', 'agentyard', CHART, '--namespace', 'agentyard', '-f', values]);
    expect(installed.ok, installed.out).toBe(true);
    const apps = cluster.kubeConfig.makeApiClient(AppsV1Api);
    const controller = await apps.readNamespacedDeployment({ name: 'agentyard-controller', namespace: 'agentyard' });
    expect(controller.spec?.replicas).toBe(2);
    const env = Object.fromEntries(controller.spec!.template.spec!.containers[0]!.env!.map((e) => [e.name, e.value]));
    expect(env).toMatchObject({ STORAGE_CLASS: 'standard', RUNTIME_BASE_URL: 'agents.example.com', AGENTYARD_SANDBOX_NAMESPACE: 'agentyard-sandboxes' });
    await core.readNamespace({ name: 'agentyard-sandboxes' });
    const role = await cluster.kubeConfig.makeApiClient(RbacAuthorizationV1Api).readNamespacedRole({ name: 'agentyard-controller', namespace: 'agentyard-sandboxes' });
    expect(role.rules?.some((r) => r.resources?.includes('pods'))).toBe(true);
    // The CRDs came with the chart.
    expect((await kubectl('get', 'crd', 'sandboxes.agentyard.dev')).stdout).toContain('sandboxes.agentyard.dev');

    const after = await preflight(cluster.kubeconfigPath);
    expect(after.out).toContain('all 8 checks passed');
    expect(after.code).toBe(0);
    // A support bundle has the resources and events, and no secret value.
    const bundle = join(dir, 'bundle.tar.gz');
    await run(process.execPath, [join(REPO, 'src/cli/main.ts'), 'support-bundle', '--output', bundle], { env: { PATH: process.env.PATH ?? '', KUBECONFIG: cluster.kubeconfigPath } });
    const listing = (await run('tar', ['-tzf', bundle])).stdout;
    expect(listing).toContain('agentyard-support/versions.json');
    expect(listing).toContain('agentyard-support/agentyard/secrets.json');
    const plain = 'not-a-real-secret';
    const encoded = Buffer.from(plain).toString('base64').replace(/=+$/, '');
    const leaks = (await run('sh', ['-c', `tar -xzf ${bundle} -C ${dir} && grep -rn -e ${plain} -e ${encoded} ${dir}/agentyard-support || true`])).stdout;
    expect(leaks).toBe('');

    // An identity without the controller's permissions is told so.
    const nobody = join(dir, 'nobody.kubeconfig');
    writeFileSync(nobody, (await cluster.userKubeConfig('nobody')).exportConfig());
    const denied = await preflight(nobody);
    expect(denied.code).toBe(1);
    expect(denied.out).toMatch(/FAIL\s+RBAC for the controller: not allowed in agentyard-sandboxes: watch sandboxes\.agentyard\.dev/);

    const upgraded = await kube(['upgrade', 'agentyard', CHART, '--namespace', 'agentyard', '-f', values, '--set', 'lifecycle.idleTimeSeconds=600']);
    expect(upgraded.ok, upgraded.out).toBe(true);
    const upgradedController = await apps.readNamespacedDeployment({ name: 'agentyard-controller', namespace: 'agentyard' });
    expect(upgradedController.spec!.template.spec!.containers[0]!.env!.find((e) => e.name === 'AGENTYARD_IDLE_TIME_SECONDS')?.value).toBe('600');

    const removed = await kube(['uninstall', 'agentyard', '--namespace', 'agentyard']);
    expect(removed.ok, removed.out).toBe(true);
    await expect(apps.readNamespacedDeployment({ name: 'agentyard-controller', namespace: 'agentyard' })).rejects.toThrow();
  });
});
