// A REAL single-node Kubernetes cluster for e2e/node: the control plane of e2e/kube/cluster.ts (etcd,
// kube-apiserver, kube-controller-manager with every controller), bound to the node's address, plus
// containerd + runc, kubelet, kube-scheduler, kube-proxy (iptables), CoreDNS (a wildcard answer for
// the base domain, no forwarding), kube-router's firewall (NetworkPolicy), local-path-provisioner (the default
// StorageClass) and Traefik (Kubernetes Ingress provider) on the node's address, ports 80 and 443.
// Binaries and images come from `make k8s-node` (hack/k8s-node.sh); the agentyard image is the one
// of this checkout (rebuilt by the script when the source changed). Needs root. stop() leaves
// nothing behind (host.ts).
import { existsSync, readFileSync } from 'node:fs';
import { cp, mkdir, rm, writeFile } from 'node:fs/promises';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import dns, { type LookupOptions } from 'node:dns';
import { Resolver } from 'node:dns/promises';
import { Agent, getGlobalDispatcher, setGlobalDispatcher, type Dispatcher } from 'undici';
import { CoreV1Api, KubernetesObjectApi, type KubernetesObject } from '@kubernetes/client-node';
import { requiredForTests } from '../../src/testing/required/required.ts';
import { makeClientCert } from '../kube/certs.ts';
import { kubeBinDir, startTestCluster, type TestCluster } from '../kube/cluster.ts';
import { freePort, ManagedProcess, waitFor } from '../kube/processes.ts';
import { containerdConfig, cniConfig, corefile, ingressClass, kubeletConfig, kubeProxyConfig, kubeRouterArgs, localPathManifests, NODE_NAME } from './addons.ts';
import { acquireNodeLock, BRIDGE, cleanHost, NODE_IP, recordPid, setUpNetwork, sh, STATE } from './host.ts';

const REPO = join(import.meta.dirname, '../..');
const SCRIPT = join(REPO, 'hack/k8s-node.sh');
const CACHE = process.env.AGENTYARD_CACHE ?? join(homedir(), '.cache/agentyard');
const NODE_CACHE = join(CACHE, 'node');
const KUBE_BINARIES = ['kubelet', 'kube-scheduler', 'kube-proxy', 'kubectl', 'helm'];
const NODE_BINARIES = ['coredns', 'crictl', 'kube-router', 'local-path-provisioner', 'traefik'];
const IMAGES = ['pause', 'debian', 'node'];
/** Where stop(true) leaves the logs of the last failed run (replaced by the next one). */
export const KEPT_LOGS = join(tmpdir(), 'agentyard-node-logs');
const HOST_PROGRAMS = ['containerd', 'runc', 'ctr', 'iptables', 'iptables-save', 'ip6tables', 'nft', 'ip', 'flock', 'buildah', 'ipset'];
/** The API server's node port range (kube-router must know it: it lets Pods reach node ports). */
const NODE_PORT_RANGE = '30000-30100';

export interface NodeTools {
  kubeBin: string;
  nodeBin: string;
}

function onPath(program: string): boolean {
  return (process.env.PATH ?? '').split(':').some((d) => existsSync(join(d, program)));
}

/**
 * The binaries, images and host programs a real node needs, or undefined (the suite skips; it fails
 * instead under AGENTYARD_REQUIRE_CLUSTER_TESTS=1).
 */
export function realNodeTools(): NodeTools | undefined {
  const kubeBin = kubeBinDir();
  const nodeBin = process.env.AGENTYARD_NODE_BIN ?? join(NODE_CACHE, 'bin');
  const missing = [
    ...(process.getuid?.() === 0 ? [] : ['root (the node runs containers)']),
    ...(kubeBin ? KUBE_BINARIES.filter((b) => !existsSync(join(kubeBin, b))) : ['the Kubernetes control plane']),
    ...NODE_BINARIES.filter((b) => !existsSync(join(nodeBin, b))),
    ...IMAGES.filter((i) => !existsSync(join(NODE_CACHE, 'images', `${i}.tar`))).map((i) => `image ${i}`),
    ...HOST_PROGRAMS.filter((p) => !onPath(p)),
  ];
  const found = missing.length === 0 && kubeBin ? { kubeBin, nodeBin } : undefined;
  return requiredForTests(found, missing.join(', '), 'run `make k8s-node` as root (hack/k8s-node.sh and hack/test-deps.sh; needs Go)');
}

export function imageRef(name: string): string {
  return readFileSync(join(NODE_CACHE, 'images', `${name}.ref`), 'utf8').trim();
}

/** The agentyard image of this checkout: hack/k8s-node.sh builds it when the source changed. */
export async function agentyardImage(): Promise<{ ref: string; archive: string }> {
  const out = (await sh(SCRIPT, ['image'])).trim().split('\n').at(-1) ?? '';
  const [ref, archive] = out.split(' ');
  if (!ref || !archive) throw new Error(`hack/k8s-node.sh image printed no image: ${out}`);
  return { ref, archive };
}

/** The bundled object store's image: Debian + the `weed` binary of hack/seaweedfs.sh (built once, cached). */
export async function seaweedfsImage(): Promise<{ ref: string; archive: string }> {
  const out = (await sh(SCRIPT, ['seaweedfs'])).trim().split('\n').at(-1) ?? '';
  const [ref, archive] = out.split(' ');
  if (!ref || !archive) throw new Error(`hack/k8s-node.sh seaweedfs printed no image: ${out}`);
  return { ref, archive };
}

export interface RealNode {
  cluster: TestCluster;
  kubeconfigPath: string;
  baseDomain: string;
  /** The timings of start(), in ms, by step. */
  timings: Record<string, number>;
  kubectl(...args: string[]): Promise<string>;
  crictl(...args: string[]): Promise<string>;
  /** Imports an image archive into containerd's k8s.io namespace unless the reference is there. */
  importImage(ref: string, archive: string): Promise<void>;
  /** Gives an image in containerd a second reference (a "new version" without a rebuild). */
  tagImage(ref: string, newRef: string): Promise<void>;
  /**
   * Whether NetworkPolicy is enforced right now: the enforcer (kube-router's firewall) runs and its
   * rules are hooked into the host's filter chains; why not, when it is not.
   */
  networkPolicy(): Promise<{ enforced: boolean; reason?: string }>;
  /** Log files of the node's processes, by name. */
  logs(): Record<string, string>;
  /** Tears everything down; `keepLogs` first copies every log to KEPT_LOGS (for a failed run). */
  stop(keepLogs?: boolean): Promise<void>;
}

export interface RealNodeOptions {
  tools: NodeTools;
  baseDomain: string;
  /** Extra images (reference, docker-archive) to have in containerd before anything starts. */
  images?: { ref: string; archive: string }[];
  /**
   * Called once the node's address exists on the host (NODE_IP), before the control plane starts:
   * a host service Pods must reach (e2e/node/oidc-login: Keycloak) can start listening there, in
   * parallel with the rest of the start.
   */
  onNetwork?: () => void;
  timeoutMs?: number;
}

export async function startRealNode(opts: RealNodeOptions): Promise<RealNode> {
  const { kubeBin, nodeBin } = opts.tools;
  const timeout = opts.timeoutMs ?? 120_000;
  const timings: Record<string, number> = {};
  let t = Date.now();
  const lap = (step: string): void => {
    timings[step] = Date.now() - t;
    t = Date.now();
  };
  const lock = await acquireNodeLock(15 * 60_000);
  lap('lock');
  const kubeProxy = join(kubeBin, 'kube-proxy');
  const procs: ManagedProcess[] = [];
  let cluster: TestCluster | undefined;
  const socket = join(STATE, 'containerd.sock');
  const crictl = (...args: string[]): Promise<string> => sh(join(nodeBin, 'crictl'), ['--runtime-endpoint', `unix://${socket}`, '--timeout', '60s', ...args]);

  const stop = async (keepLogs = false): Promise<void> => {
    // Pods first, while kubelet can no longer restart them and containerd still runs them.
    const kubelet = procs.find((p) => p.name === 'kubelet');
    await kubelet?.stop();
    if (existsSync(socket)) {
      await crictl('rmp', '--all', '--force').catch(() => crictl('rmp', '--all', '--force').catch(() => ''));
    }
    for (const p of [...procs].reverse()) await p.stop();
    if (keepLogs) {
      await rm(KEPT_LOGS, { recursive: true, force: true });
      await cp(join(STATE, 'logs'), KEPT_LOGS, { recursive: true }).catch(() => undefined);
      if (cluster) await cp(cluster.dir, join(KEPT_LOGS, 'control-plane'), { recursive: true, filter: (f) => !f.includes('/etcd') && !f.includes('/pki') }).catch(() => undefined);
    }
    await cluster?.stop();
    await cleanHost({ kubeProxy });
    await lock.release();
  };

  const start = async (): Promise<RealNode> => {
    await cleanHost({ kubeProxy }); // what a killed run may have left
    await mkdir(join(STATE, 'cni'), { recursive: true });
    await mkdir(join(STATE, 'logs'), { recursive: true });
    await setUpNetwork();
    opts.onNetwork?.();
    lap('host');
    const managed = async (name: string, bin: string, args: string[], env?: NodeJS.ProcessEnv): Promise<ManagedProcess> => {
      const p = new ManagedProcess(name, bin, args, join(STATE, 'logs', `${name}.log`), env);
      procs.push(p);
      await recordPid(p.pid);
      return p;
    };

    // containerd first (importing a new image takes a while), then the control plane.
    await writeFile(join(STATE, 'cni', '10-agentyard.conflist'), cniConfig(join(STATE, 'cni-ipam'), BRIDGE));
    await writeFile(
      join(STATE, 'containerd.toml'),
      containerdConfig({ root: join(NODE_CACHE, 'containerd'), state: join(STATE, 'containerd'), socket, cniConf: join(STATE, 'cni'), pauseImage: imageRef('pause') }),
    );
    const containerd = await managed('containerd', 'containerd', ['--config', join(STATE, 'containerd.toml'), '--log-level', 'warn']);
    await waitFor('containerd', () => crictl('info').then(() => true), () => containerd.assertRunning(), timeout);
    const ctr = (...args: string[]): Promise<string> => sh('ctr', ['--address', socket, '--namespace', 'k8s.io', ...args]);
    const importImage = async (ref: string, archive: string): Promise<void> => {
      if ((await ctr('images', 'ls', '-q')).split('\n').includes(ref)) return;
      await ctr('images', 'import', archive);
    };
    // Leftover Pods of a killed run (containerd's root, with the images, is kept between runs).
    await crictl('rmp', '--all', '--force').catch(() => '');
    for (const name of IMAGES) await importImage(imageRef(name), join(NODE_CACHE, 'images', `${name}.tar`));
    for (const image of opts.images ?? []) await importImage(image.ref, image.archive);
    lap('containerd and images');

    // No CRDs up front: the chart brings them.
    await mkdir(join(STATE, 'no-crds'));
    await writeFile(join(STATE, 'no-crds', 'none.yaml'), 'apiVersion: v1\nkind: List\nitems: []\n');
    // The API server reaches kubelet (logs, exec) with a client certificate, by the node's InternalIP.
    cluster = await startTestCluster({
      address: NODE_IP,
      serviceAccounts: true,
      crdDir: join(STATE, 'no-crds'),
      controllers: ['*'],
      controllerManagerArgs: ['--node-monitor-grace-period=20s'],
      apiserverArgs: async (pki) => {
        const client = await makeClientCert(pki, 'apiserver-kubelet', 'kube-apiserver-kubelet-client', ['system:masters']);
        return [`--kubelet-client-certificate=${client.cert}`, `--kubelet-client-key=${client.key}`, '--kubelet-preferred-address-types=InternalIP', `--service-node-port-range=${NODE_PORT_RANGE}`];
      },
      startTimeoutMs: timeout,
    });
    lap('control plane');
    const { pki } = cluster;
    // One identity for the node's components: this is a throwaway test cluster, not a security boundary.
    const nodeCert = await makeClientCert(pki, 'node', `system:node:${NODE_NAME}`, ['system:nodes', 'system:masters']);
    const kubeconfig = join(STATE, 'node.kubeconfig');
    const b64 = (f: string): string => readFileSync(f).toString('base64');
    await writeFile(
      kubeconfig,
      JSON.stringify({
        apiVersion: 'v1',
        kind: 'Config',
        clusters: [{ name: 'node', cluster: { server: cluster.server, 'certificate-authority-data': b64(pki.caCert) } }],
        users: [{ name: 'node', user: { 'client-certificate-data': b64(nodeCert.cert), 'client-key-data': b64(nodeCert.key) } }],
        contexts: [{ name: 'node', context: { cluster: 'node', user: 'node' } }],
        'current-context': 'node',
      }),
      { mode: 0o600 },
    );

    await writeFile(join(STATE, 'resolv.conf'), `nameserver ${NODE_IP}\n`);
    await writeFile(join(STATE, 'kubelet.json'), kubeletConfig({ runtimeSocket: socket, clientCa: pki.caCert, port: await freePort(), resolvConf: join(STATE, 'resolv.conf'), podLogsDir: join(STATE, 'pod-logs') }));
    const kubelet = await managed('kubelet', join(kubeBin, 'kubelet'), [
      `--config=${join(STATE, 'kubelet.json')}`,
      `--kubeconfig=${kubeconfig}`,
      `--hostname-override=${NODE_NAME}`,
      `--node-ip=${NODE_IP}`,
      `--root-dir=${join(STATE, 'kubelet')}`,
      `--cert-dir=${join(STATE, 'kubelet-pki')}`,
      '--v=1',
    ]);
    await writeFile(join(STATE, 'kube-proxy.json'), kubeProxyConfig(kubeconfig, await freePort(), await freePort()));
    const proxy = await managed('kube-proxy', kubeProxy, [`--config=${join(STATE, 'kube-proxy.json')}`, '--v=1']);
    const scheduler = await managed('kube-scheduler', join(kubeBin, 'kube-scheduler'), [`--kubeconfig=${kubeconfig}`, '--leader-elect=false', '--secure-port=0', '--v=1']);
    const core = cluster.kubeConfig.makeApiClient(CoreV1Api);
    const alive = async (): Promise<void> => {
      for (const p of [kubelet, proxy, scheduler, containerd]) await p.assertRunning();
    };
    await waitFor(
      'the node to be Ready',
      async () => (await core.readNode({ name: NODE_NAME })).status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false,
      alive,
      timeout,
    );
    lap('node Ready');

    await writeFile(join(STATE, 'Corefile'), corefile(opts.baseDomain, kubeconfig));
    const coredns = await managed('coredns', join(nodeBin, 'coredns'), ['-conf', join(STATE, 'Corefile')]);
    const resolver = new Resolver({ timeout: 1000, tries: 1 });
    resolver.setServers([NODE_IP]);
    await waitFor('CoreDNS', async () => (await resolver.resolve4('kubernetes.default.svc.cluster.local')).includes('10.0.0.1'), () => coredns.assertRunning(), timeout);

    const objects = KubernetesObjectApi.makeApiClient(cluster.kubeConfig);
    const apply = async (list: Record<string, unknown>[]): Promise<void> => {
      for (const body of list) await objects.create(body as KubernetesObject);
    };
    await apply([ingressClass(), ...localPathManifests(imageRef('debian'))]);
    // It reads the Node object at start, so it starts once the node is registered.
    const kubeRouter = await managed('kube-router', join(nodeBin, 'kube-router'), kubeRouterArgs(kubeconfig, NODE_PORT_RANGE));
    const networkPolicy = async (): Promise<{ enforced: boolean; reason?: string }> => {
      if (!(await kubeRouter.assertRunning().then(() => true, () => false))) return { enforced: false, reason: `kube-router (the NetworkPolicy enforcer) is not running: see ${kubeRouter.logFile}` };
      return (await kubeRouterHooked()) ? { enforced: true } : { enforced: false, reason: "kube-router's chains are not hooked into the filter table's FORWARD, INPUT and OUTPUT chains" };
    };
    await mkdir(join(STATE, 'volumes'), { recursive: true });
    await writeFile(join(STATE, 'local-path.json'), JSON.stringify({ nodePathMap: [{ node: 'DEFAULT_PATH_FOR_NON_LISTED_NODES', paths: [join(STATE, 'volumes')] }] }));
    const localPath = await managed('local-path-provisioner', join(nodeBin, 'local-path-provisioner'), [
      'start',
      '--kubeconfig', kubeconfig,
      '--config', join(STATE, 'local-path.json'),
      '--provisioner-name', 'rancher.io/local-path',
      '--namespace', 'kube-system',
      '--configmap-name', 'local-path-config',
      '--service-account-name', 'local-path-provisioner',
      '--helper-image', imageRef('debian'),
    ]);
    const traefik = await managed('traefik', join(nodeBin, 'traefik'), [
      `--entryPoints.web.address=${NODE_IP}:80`,
      // https, with the certificates of the Ingresses' tls sections. Traefik takes only certificates
      // from those sections: TLS on the routers comes from the entry point.
      `--entryPoints.websecure.address=${NODE_IP}:443`,
      '--entryPoints.websecure.http.tls=true',
      '--providers.kubernetesingress=true',
      '--providers.kubernetesingress.allowEmptyServices=true',
      '--ping=true',
      '--ping.entryPoint=web',
      '--log.level=INFO',
      '--accesslog=true',
    ], { ...process.env, KUBECONFIG: kubeconfig });
    // Ready once its chains are hooked in (its first full sync is done).
    await waitFor(
      'kube-router to program the NetworkPolicy firewall',
      kubeRouterHooked,
      async () => {
        await alive();
        await kubeRouter.assertRunning();
        await localPath.assertRunning();
        await traefik.assertRunning();
      },
      timeout,
    );
    await waitFor('Traefik', async () => (await fetch(`http://${NODE_IP}/ping`)).ok, () => traefik.assertRunning(), timeout);
    lap('add-ons');

    const kubeconfigPath = cluster.kubeconfigPath;
    return {
      cluster,
      kubeconfigPath,
      baseDomain: opts.baseDomain,
      networkPolicy,
      timings,
      kubectl: async (...args) => sh(join(kubeBin, 'kubectl'), ['--kubeconfig', kubeconfigPath, ...args]),
      crictl,
      importImage,
      tagImage: async (ref, newRef) => void (await ctr('images', 'tag', '--force', ref, newRef)),
      logs: () => Object.fromEntries(procs.map((p) => [p.name, p.logFile])),
      stop,
    };
  };

  try {
    return await start();
  } catch (err) {
    const tails = await Promise.all(procs.map(async (p) => `--- ${p.name}\n${await p.logTail(15)}`));
    await stop(true).catch(() => undefined);
    throw new Error(`${(err as Error).message}\n${tails.join('\n')}\n(all logs in ${KEPT_LOGS})`);
  }
}

/** Whether kube-router's top-level chains are jumped to from the filter table's built-in chains. */
async function kubeRouterHooked(): Promise<boolean> {
  const rules = await sh('iptables', ['-t', 'filter', '-S'], { allowFail: true });
  return ['INPUT', 'FORWARD', 'OUTPUT'].every((chain) => new RegExp(`^-A ${chain} .*-j KUBE-ROUTER-${chain}$`, 'm').test(rules));
}

/** Makes fetch in this process resolve `*.<domain>` to the node, where Traefik serves those hosts (as CoreDNS tells Pods). Returns an undo. */
export function routeDomainToNode(domain: string): () => void {
  const previous: Dispatcher = getGlobalDispatcher();
  const lookup = (hostname: string, options: LookupOptions, callback: (...args: any[]) => void): void => {
    if (hostname !== domain && !hostname.endsWith(`.${domain}`)) return void dns.lookup(hostname, options, callback);
    if (options.all) callback(null, [{ address: NODE_IP, family: 4 }]);
    else callback(null, NODE_IP, 4);
  };
  setGlobalDispatcher(new Agent({ connect: { lookup: lookup as never } }));
  return () => setGlobalDispatcher(previous);
}
