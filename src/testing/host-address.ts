// A second address of this host, for tests of what a sandbox can reach: the host's primary
// address is copied into a pasta namespace (so connecting to it stays inside the sandbox either
// way), but any other address the host has (a docker bridge, a VPN, a secondary IP) goes out
// through pasta's NAT and lands on the host. An address from TEST-NET-2 (RFC 5737) on `lo`, so
// nothing on the network ever answers it; removed again by the returned function.
import { spawnSync } from 'node:child_process';

export interface HostAddress {
  address: string;
  remove(): void;
}

/** Adds 198.51.100.<n>/32 to `lo`; undefined (with the reason) when this host does not allow it (not root, no `ip`). */
export function addHostAddress(): HostAddress | { skip: string } {
  const address = `198.51.100.${10 + (process.pid % 240)}`;
  const add = spawnSync('ip', ['addr', 'add', `${address}/32`, 'dev', 'lo'], { encoding: 'utf8' });
  if (add.error || (add.status !== 0 && !/File exists/.test(add.stderr))) return { skip: `cannot add a host address (${add.error?.message ?? add.stderr.trim()})` };
  return {
    address,
    remove: () => void spawnSync('ip', ['addr', 'del', `${address}/32`, 'dev', 'lo'], { stdio: 'ignore' }),
  };
}

/** A target a sandbox tries: an address and, for link-local ones, the interface it is scoped to. */
export interface HostTarget {
  /** What a connect() takes: `198.51.100.7`, `2001:db8::7`, `fe80::7%eth0`. */
  host: string;
  label: string;
}

/**
 * Addresses the host gains now (call it after a sandbox started): another IPv4 one and an IPv6 one
 * from the documentation ranges on `lo`, and an IPv6 link-local one on the interface of the host's
 * IPv6 default route (the one pasta's namespace takes its name and link-local scope from), besides
 * the link-local ones that interface already has. Without IPv6 on the host (or without root, `ip`)
 * the IPv6 part is left out and `skipped` says why; the caller removes what it added with remove().
 */
export function addHostTargets(): { targets: HostTarget[]; skipped: string[]; remove(): void } {
  const n = 10 + ((process.pid + 7) % 240);
  const targets: HostTarget[] = [];
  const skipped: string[] = [];
  const added: string[][] = [];
  const add = (label: string, address: string, dev: string, host: string, extra: string[] = []) => {
    const res = spawnSync('ip', ['addr', 'add', address, 'dev', dev, ...extra], { encoding: 'utf8' });
    if (res.error || (res.status !== 0 && !/File exists/.test(res.stderr))) return void skipped.push(`${label}: cannot add ${address} (${res.error?.message ?? res.stderr.trim()})`);
    if (res.status === 0) added.push([address, dev]); // one that was there already stays
    targets.push({ host, label });
  };
  add('LATER_INET', `198.51.100.${n}/32`, 'lo', `198.51.100.${n}`);
  const route = spawnSync('ip', ['-6', '-j', 'route', 'show', 'default'], { encoding: 'utf8' });
  const dev = route.status === 0 ? (JSON.parse(route.stdout || '[]') as { dev?: string }[])[0]?.dev : undefined;
  if (!dev) skipped.push('IPv6: the host has no IPv6 default route, so pasta gives sandboxes no IPv6');
  else {
    add('LATER_INET_SIX', `2001:db8:a9::${n.toString(16)}/128`, 'lo', `2001:db8:a9::${n.toString(16)}`);
    add('LATER_LINK_LOCAL', `fe80::a9:${n.toString(16)}/64`, dev, `fe80::a9:${n.toString(16)}%${dev}`, ['nodad']);
    const show = spawnSync('ip', ['-6', '-j', 'addr', 'show', 'dev', dev, 'scope', 'link'], { encoding: 'utf8' });
    const own = (JSON.parse(show.stdout || '[]') as { addr_info?: { local?: string }[] }[]).flatMap((i) => i.addr_info ?? []).flatMap((a) => (a.local ? [a.local] : []));
    own.filter((a) => a !== `fe80::a9:${n.toString(16)}`).forEach((a, i) => targets.push({ host: `${a}%${dev}`, label: `LINK_LOCAL_${String.fromCharCode(65 + i)}` }));
  }
  return {
    targets,
    skipped,
    remove: () => {
      for (const [address, d] of added) spawnSync('ip', ['addr', 'del', address!, 'dev', d!], { stdio: 'ignore' });
    },
  };
}
