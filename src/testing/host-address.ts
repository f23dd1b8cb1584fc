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
