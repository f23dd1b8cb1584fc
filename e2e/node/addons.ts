// The configuration of the node's components and add-ons, as files and manifests: containerd's CRI
// settings (the facts learned on these hosts are commented where they apply), the bridge CNI
// network, kubelet and kube-proxy configurations, CoreDNS's Corefile, kube-router's firewall
// arguments, and the in-cluster parts of local-path-provisioner.
import { NODE_IP, POD_CIDR, POD_GATEWAY, SERVICE_CIDR } from './host.ts';

export const NODE_NAME = 'agentyard-node';
export const CLUSTER_DOMAIN = 'cluster.local';

export function containerdConfig(p: { root: string; state: string; socket: string; cniConf: string; pauseImage: string }): string {
  return `version = 2
root = "${p.root}"
state = "${p.state}"
disabled_plugins = ["io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.zfs", "io.containerd.snapshotter.v1.aufs", "io.containerd.snapshotter.v1.devmapper", "io.containerd.internal.v1.tracing"]
[grpc]
  address = "${p.socket}"
[ttrpc]
  address = "${p.socket}.ttrpc"
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "${p.pauseImage}"
  # root here lacks CAP_SYS_RESOURCE: without this runc fails with "can't get final child's PID from pipe".
  restrict_oom_score_adj = true
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = "${p.cniConf}"
`;
}

export function cniConfig(ipamDir: string, bridge: string): string {
  return JSON.stringify({
    cniVersion: '0.4.0',
    name: 'agentyard',
    plugins: [
      {
        type: 'bridge',
        bridge,
        isGateway: true,
        ipMasq: false,
        hairpinMode: true, // a Pod reaching itself through its own Service
        ipam: { type: 'host-local', ranges: [[{ subnet: POD_CIDR, gateway: POD_GATEWAY }]], routes: [{ dst: '0.0.0.0/0' }], dataDir: ipamDir },
      },
    ],
  });
}

export function kubeletConfig(p: { runtimeSocket: string; clientCa: string; port: number; resolvConf: string; podLogsDir: string }): string {
  return JSON.stringify({
    apiVersion: 'kubelet.config.k8s.io/v1beta1',
    kind: 'KubeletConfiguration',
    // The host is cgroup v1 (hybrid) without systemd as init.
    cgroupDriver: 'cgroupfs',
    failCgroupV1: false,
    failSwapOn: false,
    containerRuntimeEndpoint: `unix://${p.runtimeSocket}`,
    address: NODE_IP,
    port: p.port,
    readOnlyPort: 0,
    healthzPort: 0,
    authentication: { anonymous: { enabled: false }, webhook: { enabled: true }, x509: { clientCAFile: p.clientCa } },
    authorization: { mode: 'Webhook' },
    clusterDNS: [NODE_IP],
    clusterDomain: CLUSTER_DOMAIN,
    resolvConf: p.resolvConf,
    podLogsDir: p.podLogsDir,
    // Locally imported images cannot be pulled again: never collect them, never evict for disk.
    imageGCHighThresholdPercent: 100,
    imageGCLowThresholdPercent: 99,
    evictionHard: { 'memory.available': '1Mi', 'nodefs.available': '1%', 'imagefs.available': '1%' },
    serializeImagePulls: false,
    syncFrequency: '5s',
    fileCheckFrequency: '5s',
    nodeStatusUpdateFrequency: '5s',
    shutdownGracePeriod: '0s',
    maxPods: 60,
  });
}

export function kubeProxyConfig(kubeconfig: string, healthzPort: number, metricsPort: number): string {
  return JSON.stringify({
    apiVersion: 'kubeproxy.config.k8s.io/v1alpha1',
    kind: 'KubeProxyConfiguration',
    clientConnection: { kubeconfig },
    mode: 'iptables',
    clusterCIDR: POD_CIDR,
    hostnameOverride: NODE_NAME,
    bindAddress: NODE_IP,
    healthzBindAddress: `127.0.0.1:${healthzPort}`,
    metricsBindAddress: `127.0.0.1:${metricsPort}`,
    // Leave the host's conntrack sysctls alone.
    conntrack: { maxPerCore: 0, min: 0, tcpEstablishedTimeout: '0s', tcpCloseWaitTimeout: '0s' },
    iptables: { syncPeriod: '5s', minSyncPeriod: '0s', localhostNodePorts: false },
    nodePortAddresses: ['primary'],
  });
}

/**
 * CoreDNS on the node's address: the cluster's names from the API server, every name under the base
 * domain answered with the node's address (where Traefik serves the app, login and sandbox hosts),
 * and nothing forwarded anywhere.
 */
export function corefile(baseDomain: string, kubeconfig: string): string {
  return `.:53 {
    bind ${NODE_IP}
    errors
    template IN A ${baseDomain} {
        answer "{{ .Name }} 30 IN A ${NODE_IP}"
    }
    template IN AAAA ${baseDomain} {
        rcode NOERROR
    }
    kubernetes ${CLUSTER_DOMAIN} in-addr.arpa ip6.arpa {
        kubeconfig ${kubeconfig}
        pods insecure
        ttl 5
    }
}
`;
}

/**
 * The node's NetworkPolicy enforcer: kube-router's network policy controller alone (iptables and
 * ip sets), a host process with the node's kubeconfig. Its router (BGP) and service proxy (IPVS)
 * stay off: kube-proxy serves Services, the bridge carries the Pods, and kube-router v2.1.0 (the
 * only version the module proxy serves here) has reported security flaws in those other features.
 * A test-only component of the throwaway node, never part of the chart. kube-network-policies,
 * the enforcer before, needs nftables' queue expression, which this kernel lacks (no NFT_QUEUE).
 */
export function kubeRouterArgs(kubeconfig: string, nodePortRange: string): string[] {
  return [
    `--kubeconfig=${kubeconfig}`,
    `--hostname-override=${NODE_NAME}`,
    '--run-firewall=true',
    '--run-router=false',
    '--run-service-proxy=false',
    '--run-loadbalancer=false',
    '--enable-cni=false',
    '--enable-ipv4=true',
    '--enable-ipv6=false',
    `--service-cluster-ip-range=${SERVICE_CIDR}`,
    // Must match the API server's: kube-router lets Pods reach node ports on the node's addresses.
    `--service-node-port-range=${nodePortRange}`,
    '--health-port=0',
    '--metrics-port=0',
    '--v=1',
  ];
}

/** local-path-provisioner's in-cluster side: helper Pods (setup/teardown scripts) and the default StorageClass. */
export function localPathManifests(helperImage: string): Record<string, unknown>[] {
  const helperPod = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'helper-pod' },
    spec: { containers: [{ name: 'helper-pod', image: helperImage, imagePullPolicy: 'Never' }] },
  };
  return [
    { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'local-path-provisioner', namespace: 'kube-system' } },
    {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'local-path-config', namespace: 'kube-system' },
      data: {
        setup: '#!/bin/sh\nset -eu\nmkdir -m 0777 -p "$VOL_DIR"\n',
        teardown: '#!/bin/sh\nset -eu\nrm -rf "$VOL_DIR"\n',
        'helperPod.yaml': JSON.stringify(helperPod),
      },
    },
    {
      apiVersion: 'storage.k8s.io/v1',
      kind: 'StorageClass',
      metadata: { name: 'local-path', annotations: { 'storageclass.kubernetes.io/is-default-class': 'true' } },
      provisioner: 'rancher.io/local-path',
      volumeBindingMode: 'WaitForFirstConsumer',
      reclaimPolicy: 'Delete',
    },
  ];
}

export const TRAEFIK_CLASS = 'traefik';

export function ingressClass(): Record<string, unknown> {
  return { apiVersion: 'networking.k8s.io/v1', kind: 'IngressClass', metadata: { name: TRAEFIK_CLASS }, spec: { controller: 'traefik.io/ingress-controller' } };
}

export const SERVICE_RANGE = SERVICE_CIDR;
