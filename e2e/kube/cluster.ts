// A real Kubernetes control plane for e2e suites, on loopback: etcd, kube-apiserver (RBAC on,
// client-certificate auth, service-account keys) and kube-controller-manager running only the
// garbage collector (ownerReferences) and the namespace controller. Binaries come from
// `make k8s-bin` (hack/k8s-bin.sh); suites skip with `describe.skipIf(!kubeBinDir())`.
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { request } from 'node:https';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CoreV1Api, CustomObjectsApi, KubeConfig } from '@kubernetes/client-node';
import { parseAllDocuments } from 'yaml';
import { requiredForTests } from '../../src/testing/required/required.ts';
import { makeClientCert, makePki, type ClientCert, type Pki } from './certs.ts';
import { freePort, ManagedProcess, waitFor } from './processes.ts';

const REPO = fileURLToPath(new URL('../../', import.meta.url));
const BINARIES = ['etcd', 'kube-apiserver', 'kube-controller-manager'];

/** The Kubernetes version hack/k8s-bin.sh pins; read from the script so there is one source. */
export function pinnedKubeVersion(): string {
  const script = readFileSync(join(REPO, 'hack/k8s-bin.sh'), 'utf8');
  const m = /K8S_VERSION=\$\{K8S_VERSION:-([0-9.]+)\}/.exec(script);
  if (!m?.[1]) throw new Error('hack/k8s-bin.sh: no K8S_VERSION default');
  return m[1];
}

/**
 * The directory holding etcd, kube-apiserver and kube-controller-manager, or undefined if not built
 * (a failure instead under AGENTYARD_REQUIRE_CLUSTER_TESTS=1, see src/testing/required).
 */
export function kubeBinDir(): string | undefined {
  const cache = process.env.AGENTYARD_CACHE ?? join(homedir(), '.cache/agentyard');
  const dir = process.env.AGENTYARD_KUBE_BIN ?? join(cache, 'k8s', process.env.K8S_VERSION ?? pinnedKubeVersion(), 'bin');
  const missing = BINARIES.filter((b) => !existsSync(join(dir, b)));
  return requiredForTests(missing.length ? undefined : dir, `${missing.join(', ')} in ${dir}`, 'run `make k8s-bin` (hack/k8s-bin.sh; needs Go)');
}

export interface TestClusterOptions {
  binDir?: string;
  /** Directory of CRD YAML files to apply; default the repository's crds/. */
  crdDir?: string;
  /** Start kube-controller-manager (garbage collection). Default true. */
  controllerManager?: boolean;
  /** kube-controller-manager --controllers; default the garbage collector and namespace controller. */
  controllers?: string[];
  startTimeoutMs?: number;
  /**
   * Extra kube-apiserver flags, e.g. `--watch-cache=false` so that compact() makes old watches 410;
   * or a function of the cluster's PKI (for flags naming certificates made from it).
   */
  apiserverArgs?: string[] | ((pki: Pki) => Promise<string[]>);
  /**
   * The address the API server binds and advertises; default 127.0.0.1. Another one (a real node's,
   * e2e/node) is put in the serving certificate and becomes the `kubernetes` Service's endpoint.
   */
  address?: string;
  /**
   * Service accounts as a real cluster has them (e2e/node): the ServiceAccount admission plugin on,
   * and kube-controller-manager given the signing key and the CA to publish. Default false.
   */
  serviceAccounts?: boolean;
  /** Extra kube-controller-manager flags. */
  controllerManagerArgs?: string[];
}

export interface TestCluster {
  server: string;
  kubeconfigPath: string;
  /** Admin (system:masters) client configuration. */
  kubeConfig: KubeConfig;
  /** Temp directory with the PKI, logs and etcd data; removed by stop(). */
  dir: string;
  /** A client for a user in the given groups (not system:masters), for RBAC tests. */
  userKubeConfig(user: string, groups?: string[]): Promise<KubeConfig>;
  /**
   * Compacts etcd at its current revision: a watch from an older resourceVersion then fails with
   * 410 Gone, provided the API server runs with `--watch-cache=false` (its watch cache would
   * otherwise keep serving recent history from memory).
   */
  compact(): Promise<void>;
  /** The cluster's CA and keys, to make more client certificates (makeClientCert). */
  pki: Pki;
  /** Process ids of etcd, kube-apiserver and kube-controller-manager (while running). */
  pids(): number[];
  stop(): Promise<void>;
}

export async function startTestCluster(opts: TestClusterOptions = {}): Promise<TestCluster> {
  const bin = opts.binDir ?? kubeBinDir();
  if (!bin) throw new Error('Kubernetes binaries not found: run `make k8s-bin` (hack/k8s-bin.sh) first');
  const timeout = opts.startTimeoutMs ?? 90_000;
  // tmpfs when there is one: etcd 3.4 has no --unsafe-no-fsync and fsyncs every write.
  const base = existsSync('/dev/shm') ? '/dev/shm' : tmpdir();
  const dir = await mkdtemp(join(base, 'agentyard-kube-'));
  const procs: ManagedProcess[] = [];
  const stop = async (): Promise<void> => {
    for (const p of [...procs].reverse()) await p.stop();
    await rm(dir, { recursive: true, force: true });
  };
  try {
    await mkdir(join(dir, 'pki'));
    const address = opts.address ?? '127.0.0.1';
    const pki = await makePki(join(dir, 'pki'), address === '127.0.0.1' ? [] : [`IP:${address}`]);
    const admin = await makeClientCert(pki, 'admin', 'agentyard-admin', ['system:masters']);

    const etcd = await startEtcd(bin, dir, timeout);
    procs.push(etcd.proc);

    const port = await freePort();
    const server = `https://${address}:${port}`;
    const apiserver = new ManagedProcess(
      'kube-apiserver',
      join(bin, 'kube-apiserver'),
      [
        `--etcd-servers=${etcd.url}`,
        `--bind-address=${address}`,
        `--advertise-address=${address}`,
        `--secure-port=${port}`,
        `--cert-dir=${join(dir, 'apiserver-certs')}`,
        `--tls-cert-file=${pki.serverCert}`,
        `--tls-private-key-file=${pki.serverKey}`,
        `--client-ca-file=${pki.caCert}`,
        '--authorization-mode=RBAC',
        `--service-account-issuer=${server}`,
        `--service-account-key-file=${pki.saPublic}`,
        `--service-account-signing-key-file=${pki.saPrivate}`,
        '--service-cluster-ip-range=10.0.0.0/24',
        // No service-account controller runs, so the admission plugin would refuse every pod.
        ...(opts.serviceAccounts ? [] : ['--disable-admission-plugins=ServiceAccount']),
        '--allow-privileged=true',
        // Loopback cannot be a `kubernetes` Service endpoint; nothing here needs one.
        ...(address === '127.0.0.1' ? ['--endpoint-reconciler-type=none'] : []),
        '--profiling=false',
        ...(typeof opts.apiserverArgs === 'function' ? await opts.apiserverArgs(pki) : (opts.apiserverArgs ?? [])),
      ],
      join(dir, 'kube-apiserver.log'),
    );
    procs.push(apiserver);
    await waitFor('kube-apiserver /readyz', () => httpsOk(`${server}/readyz`, pki, admin), () => apiserver.assertRunning(), timeout);

    const kubeConfig = clientConfig(server, pki, admin, 'agentyard-admin');
    const kubeconfigPath = join(dir, 'admin.kubeconfig');
    await writeFile(kubeconfigPath, kubeConfig.exportConfig(), { mode: 0o600 });
    const core = kubeConfig.makeApiClient(CoreV1Api);
    await waitFor('namespace default', () => core.readNamespace({ name: 'default' }).then(() => true), () => apiserver.assertRunning(), timeout);

    await applyCrds(kubeConfig, opts.crdDir ?? join(REPO, 'crds'), timeout);

    // Started after the CRDs exist, so the garbage collector's first discovery already sees them
    // (it only re-discovers every 30 s).
    if (opts.controllerManager !== false) {
      const kcmCert = await makeClientCert(pki, 'kcm', 'system:kube-controller-manager', ['system:masters']);
      const kcmConfig = join(dir, 'kcm.kubeconfig');
      await writeFile(kcmConfig, clientConfig(server, pki, kcmCert, 'kcm').exportConfig(), { mode: 0o600 });
      const kcm = new ManagedProcess(
        'kube-controller-manager',
        join(bin, 'kube-controller-manager'),
        [
          `--kubeconfig=${kcmConfig}`,
          '--leader-elect=false',
          `--controllers=${(opts.controllers ?? ['garbage-collector-controller', 'namespace-controller']).join(',')}`,
          '--use-service-account-credentials=false',
          '--secure-port=0',
          '--concurrent-gc-syncs=5',
          ...(opts.serviceAccounts ? [`--service-account-private-key-file=${pki.saPrivate}`, `--root-ca-file=${pki.caCert}`] : []),
          ...(opts.controllerManagerArgs ?? []),
        ],
        join(dir, 'kube-controller-manager.log'),
      );
      procs.push(kcm);
      await kcm.assertRunning();
    }

    return {
      server,
      kubeconfigPath,
      kubeConfig,
      dir,
      userKubeConfig: async (user, groups = []) =>
        clientConfig(server, pki, await makeClientCert(pki, `user-${user}`, user, groups), user),
      pki,
      compact: () => compactEtcd(etcd.url),
      pids: () => procs.filter((p) => p.running && p.pid !== undefined).map((p) => p.pid!),
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}

async function startEtcd(bin: string, dir: string, timeout: number): Promise<{ proc: ManagedProcess; url: string }> {
  const [clientPort, peerPort] = [await freePort(), await freePort()];
  const url = `http://127.0.0.1:${clientPort}`;
  const peer = `http://127.0.0.1:${peerPort}`;
  const proc = new ManagedProcess(
    'etcd',
    join(bin, 'etcd'),
    [
      '--name=test',
      `--data-dir=${join(dir, 'etcd')}`,
      `--listen-client-urls=${url}`,
      `--advertise-client-urls=${url}`,
      `--listen-peer-urls=${peer}`,
      `--initial-advertise-peer-urls=${peer}`,
      `--initial-cluster=test=${peer}`,
      '--log-level=warn',
    ],
    join(dir, 'etcd.log'),
  );
  await waitFor(
    'etcd /health',
    async () => {
      const res = await fetch(`${url}/health`);
      return res.ok && ((await res.json()) as { health?: string }).health === 'true';
    },
    () => proc.assertRunning(),
    timeout,
  );
  return { proc, url };
}

/** etcd's JSON gateway: read the current revision, then compact everything before it. */
async function compactEtcd(url: string): Promise<void> {
  const post = async (path: string, body: unknown): Promise<{ header?: { revision?: string } }> => {
    const res = await fetch(`${url}${path}`, { method: 'POST', body: JSON.stringify(body) });
    if (!res.ok) throw new Error(`etcd ${path}: HTTP ${res.status} ${await res.text()}`);
    return (await res.json()) as { header?: { revision?: string } };
  };
  const revision = (await post('/v3/kv/range', { key: Buffer.from('/').toString('base64'), limit: 1 })).header?.revision;
  if (!revision) throw new Error('etcd did not report its revision');
  await post('/v3/kv/compaction', { revision, physical: true });
}

function clientConfig(server: string, pki: Pki, cert: ClientCert, user: string): KubeConfig {
  const kc = new KubeConfig();
  const b64 = (file: string): string => readFileSync(file).toString('base64');
  kc.loadFromOptions({
    clusters: [{ name: 'agentyard-test', server, caData: b64(pki.caCert), skipTLSVerify: false }],
    users: [{ name: user, certData: b64(cert.cert), keyData: b64(cert.key) }],
    contexts: [{ name: user, cluster: 'agentyard-test', user }],
    currentContext: user,
  });
  return kc;
}

function httpsOk(url: string, pki: Pki, cert: ClientCert): Promise<boolean> {
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      { ca: readFileSync(pki.caCert), cert: readFileSync(cert.cert), key: readFileSync(cert.key), agent: false },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode === 200));
      },
    );
    req.on('error', reject);
    req.end();
  });
}

const CRD_API = { group: 'apiextensions.k8s.io', version: 'v1', plural: 'customresourcedefinitions' };

/** Creates every CRD in `crdDir` (or, when it has none, the ones built from src/api) and waits until Established. */
async function applyCrds(kc: KubeConfig, crdDir: string, timeout: number): Promise<void> {
  // CustomObjectsApi passes bodies through untouched; the typed apiextensions client would drop
  // schema keywords such as `default` whose model property names differ from the JSON ones.
  const api = kc.makeApiClient(CustomObjectsApi);
  const crds = await loadCrds(crdDir);
  for (const body of crds) await api.createClusterCustomObject({ ...CRD_API, body });
  for (const crd of crds) {
    const name = (crd.metadata as { name: string }).name;
    await waitFor(
      `CRD ${name} Established`,
      async () => {
        const got = (await api.getClusterCustomObject({ ...CRD_API, name })) as {
          status?: { conditions?: { type: string; status: string }[] };
        };
        return got.status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True') ?? false;
      },
      async () => {},
      timeout,
    );
  }
  // The first write to a new custom resource takes about 2 s on the API server (serving info and
  // field-manager setup); pay it here, with a dry run, rather than inside some test's timing.
  await Promise.all(crds.map((crd) => warmUp(api, crd)));
}

async function warmUp(api: CustomObjectsApi, crd: Record<string, unknown>): Promise<void> {
  const spec = crd.spec as { group: string; names: { kind: string; plural: string }; versions: { name: string; storage?: boolean }[] };
  const version = spec.versions.find((v) => v.storage)?.name ?? spec.versions[0]?.name ?? 'v1';
  const body = { apiVersion: `${spec.group}/${version}`, kind: spec.names.kind, metadata: { name: 'warm-up' }, spec: {} };
  await api
    .createNamespacedCustomObject({ group: spec.group, version, namespace: 'default', plural: spec.names.plural, body, dryRun: 'All' })
    .catch(() => {}); // only the latency matters; a schema that rejects an empty spec is fine too
}

async function loadCrds(crdDir: string): Promise<Record<string, unknown>[]> {
  const files = existsSync(crdDir) ? (await readdir(crdDir)).filter((f) => /\.ya?ml$/.test(f)).sort() : [];
  if (files.length === 0) {
    const { CRD_SOURCES, buildCrd } = await import('../../src/api/gen/crd.ts');
    return CRD_SOURCES.map(buildCrd);
  }
  const out: Record<string, unknown>[] = [];
  for (const f of files) {
    for (const doc of parseAllDocuments(await readFile(join(crdDir, f), 'utf8'))) {
      const obj = doc.toJS() as Record<string, unknown> | null;
      if (obj?.kind === 'CustomResourceDefinition') out.push(obj);
    }
  }
  return out;
}
