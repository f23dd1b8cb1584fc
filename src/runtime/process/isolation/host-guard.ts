// Keeps every sandbox with a network of its own from the host's own addresses for as long as it
// runs, including addresses the host gains after the sandbox started and its IPv6 link-local ones.
//
// Why a host firewall rule and not pasta or routes: a sandbox's outbound connections leave through
// pasta's NAT as ordinary sockets of the host, so a destination that is one of the host's addresses
// lands on the host (a service on 0.0.0.0/::, a docker bridge, a VPN). This pasta has no option that
// refuses such destinations (tried: --no-map-gw covers the gateway only; --outbound-if4/6 still let
// through every address on the outbound interface and its link-local ones). The `unreachable`
// routes network.ts puts into the namespace are a snapshot of the host's addresses at start, and a
// route cannot stop a connection to fe80::…%eth0 (the scoped lookup passes it by). nftables' `fib
// daddr type local` asks the kernel, per packet, whether the destination is an address of the host
// right now: nothing to keep in sync, and it holds while `agentyard up` is down (sandboxes outlive it).
// The cloud metadata addresses are refused here too (and by network.ts's routes).
//
// The rule matches sockets by their group: pasta runs with a gid of the sandbox range (network.ts),
// as a user of its own (uid and gid of the range) or, where the host refuses it a user namespace,
// as root with only its gid from the range; the service's own sockets (root's group) and every
// other process's stay untouched. Its loopback connections (the API ports pasta splices through,
// -T) stay allowed; it makes no others. The table is named after the uid range, so a restart (or
// another installation sharing the range) replaces it rather than adding another.
import { spawnSync } from 'node:child_process';
import { METADATA_ADDRESSES } from './network.ts';

export interface UidRange {
  first: number;
  last: number;
}

export function hostGuardTable(uids: UidRange): string {
  return `agentyard_sandboxes_${uids.first}_${uids.last}`;
}

/** The nft script that (re)creates the table in one transaction. */
export function hostGuardRules(uids: UidRange): string {
  const table = `inet ${hostGuardTable(uids)}`;
  const owner = `meta skgid ${uids.first}-${uids.last}`;
  const who = `${owner} fib daddr type local`;
  const v4 = METADATA_ADDRESSES.filter((a) => !a.includes(':')).join(', ');
  const v6 = METADATA_ADDRESSES.filter((a) => a.includes(':')).join(', ');
  return [
    // Declaring first makes the delete succeed when the table is new; the kernel applies all or nothing.
    `table ${table}`,
    `delete table ${table}`,
    `table ${table} {`,
    '  chain sandbox_networks {',
    '    type filter hook output priority filter; policy accept;',
    // A TCP reset fails pasta's connect at once (it frees its socket); other protocols get an ICMP refusal.
    `    ${who} ip daddr != 127.0.0.0/8 meta l4proto tcp reject with tcp reset`,
    `    ${who} ip daddr != 127.0.0.0/8 reject with icmpx admin-prohibited`,
    `    ${who} ip6 daddr != ::1 meta l4proto tcp reject with tcp reset`,
    `    ${who} ip6 daddr != ::1 reject with icmpx admin-prohibited`,
    // The cloud metadata services are not the host's, but hold its cloud identity's credentials.
    `    ${owner} ip daddr { ${v4} } reject with icmpx admin-prohibited`,
    `    ${owner} ip6 daddr { ${v6} } reject with icmpx admin-prohibited`,
    '  }',
    '}',
    '',
  ].join('\n');
}

/** Installs (or replaces) the rule; the failure, if any, in words for the start-up line. */
export function installHostGuard(nft: string, uids: UidRange): string | undefined {
  const res = spawnSync(nft, ['-f', '-'], { input: hostGuardRules(uids), encoding: 'utf8', timeout: 10_000 });
  if (res.status === 0) return undefined;
  const why = (res.stderr || res.error?.message || `exit ${res.status ?? res.signal}`).trim().split('\n').find((l) => /error/i.test(l)) ?? res.stderr.trim().split('\n')[0];
  return `nft refused the rule: ${why}`;
}
