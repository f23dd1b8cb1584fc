// Licensed chart pulls against a real OCI registry (CNCF Distribution, built by hack/oci-registry.sh)
// whose token auth is the license token service (src/distribution/license-token-server.ts): the
// vendor publishes with `make chart-publish`; a customer logs in with the license e-mail and id.
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { AppsV1Api, CoreV1Api, StorageV1Api } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LicenseTokenServer, type License } from '../../src/distribution/license-token-server.ts';
import { requiredForTests } from '../../src/testing/required/required.ts';
import { eventually } from '../embedded/harness.ts';
import { kubeBinDir, startTestCluster, type TestCluster } from '../kube/cluster.ts';
import { CHART, helm, helmBin, REPO, run, writeValues } from './helm.ts';
import { freePort } from '../../src/testing/ports.ts';

const registryBin = ((): string | undefined => {
  const version = process.env.REGISTRY_VERSION ?? /REGISTRY_VERSION:-([0-9.]+)\}/.exec(readFileSync(join(REPO, 'hack/oci-registry.sh'), 'utf8'))![1]!;
  const path = join(process.env.AGENTYARD_CACHE ?? join(homedir(), '.cache/agentyard'), 'registry', version, 'registry');
  return requiredForTests(existsSync(path) ? path : undefined, `the OCI registry at ${path}`, 'run `make oci-registry` (hack/oci-registry.sh; needs Go)');
})();

const SERVICE = 'agentyard-charts';
const VERSION = /^version:\s*(\S+)/m.exec(readFileSync(join(CHART, 'Chart.yaml'), 'utf8'))![1]!;
const PUBLISHER: License = { email: 'release@vendor.example.com', id: 'lic-vendor-publish-0001', repositories: ['charts/agentyard'], publisher: true };
const CUSTOMER: License = { email: 'ops@customer.example.com', id: 'lic-7f3c9a-customer', repositories: ['charts/agentyard'], expires: '2999-01-01T00:00:00Z' };
const OTHER_PRODUCT: License = { email: 'dev@other.example.com', id: 'lic-other-product-42', repositories: ['charts/other-product'] };
const EXPIRED: License = { email: 'old@customer.example.com', id: 'lic-expired-2020', repositories: ['charts/agentyard'], expires: '2020-12-31T00:00:00Z' };


describe.skipIf(!helmBin || !registryBin)('licensed chart pulls from an OCI registry', () => {
  const dir = mkdtempSync(join(tmpdir(), 'agentyard-registry-'));
  let tokens: Server;
  let registry: ChildProcess;
  let host: string;
  let registryLog = '';
  let cluster: TestCluster | undefined;

  beforeAll(async () => {
    const issuer = new LicenseTokenServer({ licenses: [PUBLISHER, CUSTOMER, OTHER_PRODUCT, EXPIRED], service: SERVICE, issuer: 'agentyard-license-server' });
    tokens = await issuer.listen();
    const realm = `http://127.0.0.1:${(tokens.address() as AddressInfo).port}/token`;
    writeFileSync(join(dir, 'jwks.json'), JSON.stringify(issuer.jwks()));
    for (const d of ['nobody', 'customer', 'other']) mkdirSync(join(dir, d));
    // A free port can be taken by another process before the registry binds it: then the registry
    // exits and another server may answer on that port. Wait for the registry's own answer (its
    // API version header), and start again on another port if it exited.
    for (let attempt = 1; ; attempt++) {
      const port = await freePort();
      host = `127.0.0.1:${port}`;
      writeFileSync(
        join(dir, 'config.yml'),
        [
          'version: 0.1',
          'log: {level: info, formatter: text}',
          `storage: {filesystem: {rootdirectory: ${join(dir, 'data')}}}`,
          `http: {addr: "${host}", secret: ${Math.random().toString(36).slice(2)}}`,
          `auth: {token: {realm: "${realm}", service: ${SERVICE}, issuer: agentyard-license-server, jwks: ${join(dir, 'jwks.json')}}}`,
          '',
        ].join('\n'),
      );
      registry = spawn(registryBin!, ['serve', join(dir, 'config.yml')], { stdio: ['ignore', 'pipe', 'pipe'] });
      registry.stdout!.on('data', (c: Buffer) => (registryLog += c.toString()));
      registry.stderr!.on('data', (c: Buffer) => (registryLog += c.toString()));
      const child = registry;
      const up = await eventually(
        async () => {
          if (child.exitCode !== null || child.signalCode !== null) return 'exited';
          const res = await fetch(`http://${host}/v2/`).catch(() => undefined);
          return res?.status === 401 && res.headers.get('docker-distribution-api-version') === 'registry/2.0' ? 'up' : undefined;
        },
        'the registry to answer',
        30_000,
      );
      if (up === 'up') break;
      if (attempt === 3) throw new Error(`the registry did not start:\n${registryLog}`);
    }
  }, 60_000);

  afterAll(async () => {
    registry?.kill('SIGTERM');
    await cluster?.stop();
    await new Promise((r) => tokens?.close(r));
    rmSync(dir, { recursive: true, force: true });
  });

  // Each user keeps their login in their own registry config, as on their own machine.
  const as = (who: string, args: string[]) => helm([...args, '--registry-config', join(dir, `${who}.json`)]);
  const login = (who: string, l: Pick<License, 'email' | 'id'>) => as(who, ['registry', 'login', host, '--plain-http', '-u', l.email, '-p', l.id]);

  it('the vendor publishes the chart with make chart-publish', async () => {
    const loggedIn = await login('publisher', PUBLISHER);
    expect(loggedIn.ok, loggedIn.out).toBe(true);
    const home = mkdtempSync(join(dir, 'home-'));
    const pushed = await run('make', ['--no-print-directory', 'chart-publish', `CHART_OCI=oci://${host}/charts`, `HELM=${helmBin!}`, `CHART_DIST=${join(dir, 'dist')}`, `HELM_PUSH_FLAGS=--plain-http --registry-config ${join(dir, 'publisher.json')}`], {
      cwd: REPO,
      env: { PATH: process.env.PATH ?? '', HOME: home, HELM_CACHE_HOME: join(home, 'cache'), HELM_CONFIG_HOME: join(home, 'config'), HELM_DATA_HOME: join(home, 'data') },
    });
    expect(pushed.stdout + pushed.stderr).toMatch(new RegExp(`Pushed: ${host.replace(/\./g, '\\.')}/charts/agentyard:${VERSION.replace(/\./g, '\\.')}`));
    // Without a login nobody pushes, nor pulls.
    const anonymous = await as('nobody', ['pull', `oci://${host}/charts/agentyard`, '--version', VERSION, '--plain-http', '-d', join(dir, 'nobody')]);
    expect(anonymous.ok).toBe(false);
    expect(anonymous.out).toMatch(/401|unauthorized/i);
  });

  it('a customer logs in with the license e-mail and id, pulls and renders the chart from the OCI reference', async () => {
    const loggedIn = await login('customer', CUSTOMER);
    expect(loggedIn.ok, loggedIn.out).toBe(true);
    expect(loggedIn.out).toMatch(/Login Succeeded/);
    const pulled = await as('customer', ['pull', `oci://${host}/charts/agentyard`, '--version', VERSION, '--plain-http', '-d', join(dir, 'customer')]);
    expect(pulled.ok, pulled.out).toBe(true);
    expect(existsSync(join(dir, 'customer', `agentyard-${VERSION}.tgz`))).toBe(true);
    const values = writeValues(dir, 'values.yaml', 'baseDomain: agents.example.com\nruntime: {storageClass: standard}\nnetworkPolicy: {enabled: false}\n');
    const rendered = await as('customer', ['template', 'agentyard', `oci://${host}/charts/agentyard`, '--version', VERSION, '--plain-http', '-n', 'agentyard', '-f', values]);
    expect(rendered.ok, rendered.out).toBe(true);
    expect(rendered.out).toMatch(/name: agentyard-api\n/);
    // A customer license does not publish: its token grants pull only (the protocol's subset of
    // what was asked), and the registry refuses the upload.
    const push = await as('customer', ['push', join(dir, 'customer', `agentyard-${VERSION}.tgz`), `oci://${host}/charts`, '--plain-http']);
    expect(push.ok).toBe(false);
    expect(push.out).toMatch(/PUT .*manifests.*response status code 401: unauthorized/);
  });

  it('wrong license credentials get 401', async () => {
    const wrongId = await login('wrong', { email: CUSTOMER.email, id: 'lic-guessed-0000' });
    expect(wrongId.ok).toBe(false);
    expect(wrongId.out).toMatch(/401|unauthorized/i);
    const raw = await fetch(`http://127.0.0.1:${(tokens.address() as AddressInfo).port}/token?service=${SERVICE}&scope=repository:charts/agentyard:pull`, { headers: { authorization: `Basic ${Buffer.from(`${CUSTOMER.email}:lic-guessed-0000`).toString('base64')}` } });
    expect(raw.status).toBe(401);
    expect(await raw.json()).toEqual({ errors: [{ code: 'UNAUTHORIZED', message: 'unknown license e-mail or license id' }] });
  });

  it('a valid license without access to the chart, or an expired one, gets 403 with the reason', async () => {
    expect((await login('other', OTHER_PRODUCT)).ok).toBe(true);
    const other = await as('other', ['pull', `oci://${host}/charts/agentyard`, '--version', VERSION, '--plain-http', '-d', join(dir, 'other')]);
    expect(other.ok).toBe(false);
    expect(other.out).toMatch(/403/);
    const expired = await login('expired', EXPIRED);
    expect(expired.ok, expired.out).toBe(false);
    expect(expired.out).toMatch(/403/);
    const tokenUrl = `http://127.0.0.1:${(tokens.address() as AddressInfo).port}/token?service=${SERVICE}&scope=repository:charts/agentyard:pull`;
    const basic = (l: License) => ({ authorization: `Basic ${Buffer.from(`${l.email}:${l.id}`).toString('base64')}` });
    expect(await (await fetch(tokenUrl, { headers: basic(OTHER_PRODUCT) })).json()).toEqual({ errors: [{ code: 'DENIED', message: 'license lic-other-product-42 does not cover charts/agentyard (pull)' }] });
    const old = await fetch(tokenUrl, { headers: basic(EXPIRED) });
    expect(old.status).toBe(403);
    expect(await old.text()).toMatch(/license lic-expired-2020 expired on 2020-12-31T00:00:00Z; renew it/);
    expect(registryLog).not.toContain(CUSTOMER.id);
  });

  it.skipIf(!kubeBinDir())('helm install from the OCI reference, with the customer login, on the real API server', async () => {
    cluster = await startTestCluster({ controllerManager: false });
    const core = cluster.kubeConfig.makeApiClient(CoreV1Api);
    await core.createNamespace({ body: { metadata: { name: 'agentyard' } } });
    await core.createNamespace({ body: { metadata: { name: 'agentyard-sandboxes', labels: { 'pod-security.kubernetes.io/enforce': 'restricted' } } } });
    await cluster.kubeConfig.makeApiClient(StorageV1Api).createStorageClass({ body: { metadata: { name: 'standard' }, provisioner: 'kubernetes.io/no-provisioner' } });
    for (const name of ['agentyard-api-key', 'agentyard-llm']) await core.createNamespacedSecret({ namespace: 'agentyard', body: { metadata: { name }, stringData: { 'api-key': `not-a-real-${name}` } } });
    const values = writeValues(dir, 'install.yaml', 'baseDomain: agents.example.com\nruntime: {storageClass: standard}\nnetworkPolicy: {enabled: false}\n');
    const installed = await as('customer', ['install', 'agentyard', `oci://${host}/charts/agentyard`, '--version', VERSION, '--plain-http', '-n', 'agentyard', '-f', values, '--kubeconfig', cluster.kubeconfigPath]);
    expect(installed.ok, installed.out).toBe(true);
    const api = await cluster.kubeConfig.makeApiClient(AppsV1Api).readNamespacedDeployment({ name: 'agentyard-api', namespace: 'agentyard' });
    expect(api.metadata?.labels?.['helm.sh/chart']).toBe(`agentyard-${VERSION}`);
  }, 120_000);
});
