// The cluster's own address ranges against the ones the chart's sandbox NetworkPolicy denies
// (networkPolicy.podCidrs, .serviceCidrs, .nodeCidrs): a node's Pod range, a node's address or a
// ServiceCIDR left out is a hole through which sandboxes reach Pods, Services or nodes.
import { BlockList, isIP } from 'node:net';
import type { V1Node, V1ServiceCIDR } from '@kubernetes/client-node';

export interface DeniedRanges {
  podCidrs: string[];
  serviceCidrs: string[];
  nodeCidrs: string[];
}

function parse(cidr: string): { address: string; prefix: number; family: 'ipv4' | 'ipv6' } {
  const [address = '', bits] = cidr.split('/');
  const family = isIP(address) === 6 ? 'ipv6' : 'ipv4';
  return { address, prefix: bits === undefined ? (family === 'ipv6' ? 128 : 32) : Number(bits), family };
}

/** Is `range` (a CIDR or a single address) inside one of `cidrs`? */
export function covered(range: string, cidrs: readonly string[]): boolean {
  const r = parse(range);
  return cidrs.some((c) => {
    const outer = parse(c);
    if (outer.family !== r.family || outer.prefix > r.prefix) return false;
    const list = new BlockList();
    list.addSubnet(outer.address, outer.prefix, outer.family);
    return list.check(r.address, r.family);
  });
}

export interface ClusterRanges {
  pods: string[];
  services: string[];
  nodes: string[];
}

/** What the cluster says: its nodes' Pod ranges and addresses, its ServiceCIDRs. */
export function clusterRanges(nodes: V1Node[], serviceCidrs: V1ServiceCIDR[]): ClusterRanges {
  return {
    pods: nodes.flatMap((n) => n.spec?.podCIDRs ?? (n.spec?.podCIDR ? [n.spec.podCIDR] : [])),
    nodes: nodes.flatMap((n) => (n.status?.addresses ?? []).filter((a) => a.type === 'InternalIP' || a.type === 'ExternalIP').map((a) => a.address)),
    services: serviceCidrs.flatMap((s) => s.spec?.cidrs ?? []),
  };
}

/** Each range of the cluster that the denied ranges miss, with the value it belongs in. */
export function uncovered(cluster: ClusterRanges, denied: DeniedRanges): { value: keyof DeniedRanges; range: string }[] {
  const out: { value: keyof DeniedRanges; range: string }[] = [];
  for (const [value, ranges] of [['podCidrs', cluster.pods], ['serviceCidrs', cluster.services], ['nodeCidrs', cluster.nodes]] as const) {
    for (const range of new Set(ranges)) if (!covered(range, denied[value])) out.push({ value, range });
  }
  return out;
}
