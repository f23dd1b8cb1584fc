// A sandbox's network of its own (where pasta, from Debian's passt, is installed): its own network
// namespace, so nothing on the host's loopback (another sandbox's dev server, an unauthenticated
// local service) is reachable from inside. The chain's shell (launcher.ts), still root in the host's
// namespaces, runs NETWORK_SCRIPT before anything of the sandbox runs:
//
// 1. The namespace. With a pasta user (the default where the host lets an unprivileged user make a
//    user namespace): that user makes a user namespace and the network namespace inside it, which
//    the shell pins to <dir>/userns and <dir>/netns. pasta then needs no root: it joins that user
//    namespace, where it may configure the network namespace. The sandbox's own user owns neither,
//    so it gets no capability over its network (it cannot change its routes). Without one, root
//    makes the namespace and pasta runs as root, as the start-up summary says; its group is then
//    still the sandbox's network id of the range, by which host-guard.ts's rule knows its sockets.
// 2. Routes: `unreachable` for every address of the host but its loopback (the sandbox's own
//    loopback answers those) and for the cloud metadata addresses. pasta's outbound NAT would
//    otherwise connect from the host to the host's own addresses, so a service listening on
//    0.0.0.0 or on eth0 would be reachable from a sandbox. This pasta has no option that refuses
//    such destinations (`pasta --help`: only --no-map-gw, which covers the gateway address).
//    The routes are a snapshot and cannot stop scoped link-local connections (fe80::…%eth0):
//    host-guard.ts's nftables rule is what holds over time; these stay for where it cannot run
//    (pasta as root, no nft) and as a second layer.
// 3. pasta: outbound NAT (git clone, npm install), the host's 127.0.0.1:<agent server port>
//    forwarded in (so `up` reaches the agent server at the same URL) and only the API's loopback
//    port(s) out to the host's loopback (event sink, model gateway); --no-map-gw keeps the gateway
//    address from being a way to the host's loopback. As its own user it opens /dev/net/tun, which
//    may be root's only: it starts in a mount namespace of its own with a copy of that node owned
//    by it. Its pid file, user and network namespace are handed over as open files (/proc/self/fd):
//    the sandbox's directory is root's 0700, and this pasta opens them after it dropped to its user.
//    pasta ignores SIGTERM so the agent server can still report while it shuts down; the group
//    SIGKILL that ends a stop ends it (it is a child of the shell: same process group and cgroups).
// 4. The shell enters the namespace (nsenter), which drops the bind mount and execs the rest of the
//    chain (same pid).
import { chownSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { networkInterfaces } from 'node:os';
import { join } from 'node:path';

/** Programs the network needs, by their real paths (pasta by its name: it acts by it). */
export interface NetworkTools {
  pasta: string;
  unshare: string;
  nsenter: string;
  umount: string;
  mount: string;
  /** iproute2's ip; without it the host's own addresses stay reachable (the start-up line says so). */
  ip?: string;
  setpriv: string;
  sleep: string;
  cp: string;
  chown: string;
}

/**
 * Cloud instance metadata services (AWS, GCP, Azure, OpenStack, DigitalOcean, Oracle: 169.254.169.254;
 * AWS ECS task metadata; AWS over IPv6; Alibaba): credentials of the host's cloud identity.
 */
export const METADATA_ADDRESSES = ['169.254.169.254/32', '169.254.170.2/32', '100.100.100.200/32', 'fd00:ec2::254/128'];

/**
 * The destinations a sandbox must not reach through pasta's NAT: every address of the host now,
 * but loopback ones and IPv6 link-local ones (the sandbox's IPv6 gateway speaks through pasta's
 * link-local address, which is the host's), and the metadata addresses (the IPv6 one only where
 * the host has IPv6: the route could not be added otherwise).
 */
export function blockedAddresses(interfaces = networkInterfaces()): string[] {
  const out = new Set<string>();
  let ipv6 = false;
  for (const addrs of Object.values(interfaces)) {
    for (const a of addrs ?? []) {
      if (a.family === 'IPv4') {
        if (!a.address.startsWith('127.')) out.add(`${a.address}/32`);
      } else {
        ipv6 = true;
        const lower = a.address.toLowerCase();
        if (lower !== '::1' && !/^fe[89ab]/.test(lower)) out.add(`${lower}/128`);
      }
    }
  }
  for (const m of METADATA_ADDRESSES) if (ipv6 || !m.includes(':')) out.add(m);
  return [...out];
}

/** Where a sandbox's network keeps its files, in its (root-only) directory. */
export function networkFiles(dir: string): { netns: string; userns: string; pid: string; log: string; dev: string } {
  return { netns: join(dir, 'netns'), userns: join(dir, 'userns'), pid: join(dir, 'network.pid'), log: join(dir, 'network.log'), dev: join(dir, 'network-dev') };
}

export interface NetworkRequest {
  dir: string;
  /** The agent server's port, forwarded from the host's loopback. */
  port: number;
  /** Host loopback ports the sandbox may reach. */
  hostPorts: number[];
  /** pasta's own user (0: root). */
  pastaUid: number;
  /** pasta's group, of the sandbox range also when it runs as root: host-guard.ts tells its sockets by it. */
  pastaGid: number;
  sh: string;
}

/** The fixed arguments NETWORK_SCRIPT reads, after making the files it needs (what a sandbox that died without cleaning up left goes first). */
export function networkArgs(tools: NetworkTools, req: NetworkRequest): string[] {
  const f = networkFiles(req.dir);
  dropNetwork(tools.umount, req.dir);
  // pasta writes its pid into this file through an inherited descriptor, as its own user.
  writeFileSync(f.pid, '', { mode: 0o600 });
  chownSync(f.pid, req.pastaUid, req.pastaGid);
  mkdirSync(f.dev, { recursive: true, mode: 0o700 });
  const out = req.hostPorts.length > 0 ? req.hostPorts.join(',') : 'none';
  const t = tools;
  return [t.pasta, t.unshare, t.nsenter, t.umount, t.mount, t.ip ?? '', t.setpriv, t.sleep, t.cp, t.chown, req.sh, f.netns, f.userns, f.pid, f.log, f.dev, String(req.port), out, String(req.pastaUid), t.ip ? blockedAddresses().join(' ') : '', String(req.pastaGid)];
}

/**
 * Part of the chain's shell (see the header); its arguments are networkArgs(), in that order.
 * pasta forwards TCP only (-u/-U none): DNS goes out through its NAT like any UDP.
 */
export const NETWORK_SCRIPT = [
  'p=$1 un=$2 ne=$3 um=$4 mt=$5 ip=$6 sp=$7 sl=$8 cp=$9 ch=${10} sh=${11} ns=${12} us=${13} pf=${14} lg=${15} dv=${16} port=${17} out=${18} pu=${19} block=${20} pg=${21}; shift 21',
  'fail() { echo "agentyard: $1" >&2; "$um" -l "$ns" 2>/dev/null; "$um" -l "$us" 2>/dev/null; exit 125; }',
  'if [ "$pu" = 0 ]; then',
  '  : > "$ns" && "$un" --net="$ns" true || fail "the sandbox network namespace could not be made"',
  'else',
  // The pasta user makes both namespaces; a process holds them until they are pinned.
  '  : > "$ns" && : > "$us" || exit 125',
  '  "$sp" --reuid="$pu" --regid="$pu" --clear-groups "$un" --user --map-root-user --net "$sl" 60 </dev/null >/dev/null 2>&1 & h=$!',
  '  i=0; until [ "$(cat /proc/$h/comm 2>/dev/null)" = "${sl##*/}" ]; do if ! kill -0 $h 2>/dev/null || [ $i -ge 1000 ]; then kill -9 $h 2>/dev/null; fail "the user namespace of the sandbox network could not be made (unprivileged user namespaces refused?)"; fi; i=$((i+1)); sleep 0.01; done',
  '  "$mt" --bind /proc/$h/ns/user "$us" && "$mt" --bind /proc/$h/ns/net "$ns"; r=$?; kill -9 $h; wait $h 2>/dev/null; [ $r = 0 ] || fail "the sandbox network namespace could not be pinned"',
  'fi',
  // Before pasta and the sandbox: the host's own addresses and the metadata service are unreachable.
  '[ -z "$block" ] || printf "route add unreachable %s\\n" $block | "$ne" --net="$ns" "$ip" -batch - >/dev/null || fail "the host addresses could not be blocked in the sandbox network"',
  'if [ "$pu" = 0 ]; then',
  '  ( trap "" TERM; exec "$p" -f -q --runas "0:$pg" --config-net --no-map-gw --no-netns-quit -t "127.0.0.1/$port" -u none -T "$out" -U none -P "$pf" -l "$lg" --netns "$ns" </dev/null >/dev/null 2>&1 ) &',
  'else',
  '  ( trap "" TERM; exec "$un" -m --propagation private "$sh" -c \'m=$1 c=$2 o=$3 d=$4 u=$5; shift 5; "$m" -t tmpfs -o size=16k,mode=0700 tmpfs "$d" && "$c" -a /dev/net/tun "$d/tun" && "$o" "$u:$u" "$d/tun" && "$m" --bind "$d/tun" /dev/net/tun && exec "$@"\' tun "$mt" "$cp" "$ch" "$dv" "$pu" \\',
  '      "$p" -f -q --runas "$pu:$pu" --config-net --no-map-gw --no-netns-quit -t "127.0.0.1/$port" -u none -T "$out" -U none -P /proc/self/fd/3 -l "$lg" --userns /proc/self/fd/4 --netns /proc/self/fd/5 3>>"$pf" 4<"$us" 5<"$ns" </dev/null >/dev/null 2>&1 ) &',
  'fi',
  'i=0; until [ -s "$pf" ]; do if ! kill -0 $! 2>/dev/null || [ $i -ge 1000 ]; then kill -9 $! 2>/dev/null; fail "the sandbox network (pasta) did not start; see $lg"; fi; i=$((i+1)); sleep 0.01; done',
  // pasta holds the user namespace now.
  '[ "$pu" = 0 ] || { "$um" -l "$us"; rm -f "$us"; }',
  'exec "$ne" --net="$ns" -- "$sh" -c \'"$0" -l "$1"; rm -f "$1"; shift; exec "$@"\' "$um" "$ns" "$@"',
].join('\n') + '\n';

/** Unmounts and removes a sandbox's namespace files, if any (the namespaces live on while their processes do). */
export function dropNetwork(umount: string, dir: string): void {
  const f = networkFiles(dir);
  for (const file of [f.netns, f.userns]) {
    if (!existsSync(file)) continue;
    // Lazily: pasta holds the namespace open, which makes a plain unmount fail as busy.
    spawnSync(umount, ['-l', file], { stdio: 'ignore' });
    rmSync(file, { force: true });
  }
}

/** Kills the pasta of a sandbox directory, if it still runs; resolves once it is gone. */
export async function stopPasta(dir: string): Promise<void> {
  const f = networkFiles(dir);
  let pid: number;
  try {
    pid = Number(readFileSync(f.pid, 'utf8').trim());
    // Its command line names this very log file: a recycled pid (even another sandbox's pasta) is left alone.
    if (!Number.isInteger(pid) || pid <= 1 || !readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').includes(f.log)) return;
    process.kill(pid, 'SIGKILL');
  } catch {
    return; // not running
  }
  const deadline = Date.now() + 5_000;
  while (Date.now() < deadline && isRunning(pid)) await new Promise((r) => setTimeout(r, 10));
}

/** Alive and not a zombie. */
function isRunning(pid: number): boolean {
  try {
    return !/\) Z /.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
}
