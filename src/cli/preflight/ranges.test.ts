import { describe, expect, it } from 'vitest';
import { clusterRanges, covered, uncovered } from './ranges.ts';

describe('cluster ranges against the denied ones', () => {
  it('tells a range inside a denied one from one that only overlaps or lies elsewhere', () => {
    expect(covered('10.244.1.0/24', ['10.244.0.0/16'])).toBe(true);
    expect(covered('10.244.0.0/16', ['10.244.0.0/16'])).toBe(true);
    expect(covered('10.244.0.0/15', ['10.244.0.0/16'])).toBe(false); // wider than what is denied
    expect(covered('10.245.0.0/24', ['10.244.0.0/16'])).toBe(false);
    expect(covered('192.168.5.10', ['192.168.5.0/24'])).toBe(true);
    expect(covered('fd00:10:244:1::/64', ['10.244.0.0/16', 'fd00:10:244::/56'])).toBe(true);
    expect(covered('fd00:10:245::/64', ['fd00:10:244::/56'])).toBe(false);
    expect(covered('10.0.0.1', ['::/0'])).toBe(false); // families never match
  });

  it('reads nodes and ServiceCIDRs, and names the value each missing range belongs in', () => {
    const cluster = clusterRanges(
      [
        { spec: { podCIDRs: ['10.244.1.0/24', 'fd00:10:244:1::/64'] }, status: { addresses: [{ type: 'InternalIP', address: '192.168.5.10' }, { type: 'Hostname', address: 'a' }] } },
        { spec: { podCIDR: '10.245.0.0/24' }, status: { addresses: [{ type: 'ExternalIP', address: '203.0.113.7' }] } },
      ],
      [{ spec: { cidrs: ['10.96.0.0/12'] } }],
    );
    expect(cluster).toEqual({ pods: ['10.244.1.0/24', 'fd00:10:244:1::/64', '10.245.0.0/24'], nodes: ['192.168.5.10', '203.0.113.7'], services: ['10.96.0.0/12'] });
    expect(uncovered(cluster, { podCidrs: ['10.244.0.0/16'], serviceCidrs: ['10.96.0.0/12'], nodeCidrs: ['192.168.0.0/16'] })).toEqual([
      { value: 'podCidrs', range: 'fd00:10:244:1::/64' },
      { value: 'podCidrs', range: '10.245.0.0/24' },
      { value: 'nodeCidrs', range: '203.0.113.7' },
    ]);
  });
});
