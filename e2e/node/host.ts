// The host side of the real test node: one node per machine at a time (a lock), its network
// (a bridge carrying the Pod range and the node's own address, a route to the Service range), and
// the cleanup that leaves nothing behind: processes, containers, mounts, iptables rules and ip sets,
// cgroups, the bridge and the state directory. The same cleanup runs before a start, so a
// run killed half-way does not break the next one.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, rmdirSync, statSync } from 'node:fs';
import { readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';

const exec = promisify(execFile);

/** Where everything of a running node lives (kubelet root, containerd state, volumes); removed by cleanup. */
export const STATE = '/run/agentyard-node';
export const BRIDGE = 'ay-cni0';
export const POD_CIDR = '10.244.0.0/24';
export const POD_GATEWAY = '10.244.0.1';
/** The Service range of e2e/kube/cluster.ts (its certificate names 10.0.0.1, the `kubernetes` Service). */
export const SERVICE_CIDR = '10.0.0.0/24';
/** The node's own address, outside the Pod and Service ranges, on the bridge: Pods reach the host here. */
export const NODE_IP = '10.250.0.1';
const LOCK = '/run/lock/agentyard-node.lock';
const PIDS = join(STATE, 'pids');

export async function sh(cmd: string, args: string[], opts: { allowFail?: boolean; env?: NodeJS.ProcessEnv } = {}): Promise<string> {
  try {
    const r = await exec(cmd, args, { maxBuffer: 64 * 1024 * 1024, ...(opts.env ? { env: opts.env } : {}) });
    return r.stdout;
  } catch (err) {
    if (opts.allowFail) return '';
    const e = err as { stderr?: string; stdout?: string; message: string };
    throw new Error(`${cmd} ${args.join(' ')}: ${e.stderr || e.stdout || e.message}`);
  }
}

/**
 * Holds the machine-wide node lock until release(): iptables chains, the bridge and the node
 * address are global, so a second run (another worktree) waits for the first.
 */
export async function acquireNodeLock(timeoutMs: number): Promise<{ release(): Promise<void> }> {
  // The shell execs into sleep, so the process holding the lock is the one we kill.
  const child: ChildProcess = spawn('sh', ['-c', `exec 9>${LOCK}; flock -w ${Math.ceil(timeoutMs / 1000)} 9 || exit 1; echo locked; exec sleep 86400`], { stdio: ['ignore', 'pipe', 'inherit'] });
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  const onExit = (): void => void child.kill('SIGKILL');
  process.once('exit', onExit);
  await new Promise<void>((resolve, reject) => {
    child.stdout!.once('data', () => resolve());
    child.once('exit', (code) => reject(new Error(`another real test node held ${LOCK} for ${timeoutMs} ms (exit ${code})`)));
  });
  return {
    release: async () => {
      process.off('exit', onExit);
      child.kill('SIGKILL');
      await exited;
    },
  };
}

/** Records a process of the node so that a later cleanup can end it if this run dies first. */
export async function recordPid(pid: number | undefined): Promise<void> {
  if (pid) await writeFile(PIDS, `${pid}\n`, { flag: 'a' });
}

export async function setUpNetwork(): Promise<void> {
  await sh('ip', ['link', 'add', BRIDGE, 'type', 'bridge']);
  await sh('ip', ['addr', 'add', `${POD_GATEWAY}/24`, 'dev', BRIDGE]);
  await sh('ip', ['addr', 'add', `${NODE_IP}/32`, 'dev', BRIDGE]);
  await sh('ip', ['link', 'set', BRIDGE, 'up']);
  // The host reaches Services (kube-proxy's DNAT happens after routing picks a way out).
  await sh('ip', ['route', 'add', SERVICE_CIDR, 'dev', BRIDGE, 'src', NODE_IP]);
  // kubelet and kube-proxy set some of these; they are put back as they were by cleanHost.
  const saved: Record<string, string> = {};
  for (const key of SYSCTLS) if (existsSync(`/proc/sys/${key}`)) saved[key] = (await readFile(`/proc/sys/${key}`, 'utf8')).trim();
  await writeFile(join(STATE, 'sysctls.json'), JSON.stringify(saved));
  await writeFile('/proc/sys/net/ipv4/ip_forward', '1');
}

const SYSCTLS = [
  'net/ipv4/ip_forward',
  'net/ipv4/conf/all/route_localnet',
  'net/bridge/bridge-nf-call-iptables',
  'net/bridge/bridge-nf-call-ip6tables',
  'vm/overcommit_memory',
  'vm/panic_on_oom',
  'kernel/panic',
  'kernel/panic_on_oops',
  'kernel/keys/root_maxkeys',
  'kernel/keys/root_maxbytes',
];

/**
 * Processes whose command line names the node's state directory or socket (containerd shims, the
 * node's own components), and all their descendants (the containers a shim still runs when
 * containerd died first).
 */
function processesOfNode(): number[] {
  const marked = new Set<number>();
  const parent = new Map<number, number>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    try {
      if (readFileSync(`/proc/${entry}/cmdline`, 'utf8').includes(STATE)) marked.add(Number(entry));
      // "pid (comm) state ppid ...": comm may hold spaces, so read after the last ')'.
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      parent.set(Number(entry), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]));
    } catch {
      // gone meanwhile
    }
  }
  const ofNode = (pid: number): boolean => {
    for (let p: number | undefined = pid, hops = 0; p && p > 1 && hops < 64; p = parent.get(p), hops++) if (marked.has(p)) return true;
    return false;
  };
  return [...parent.keys()].filter(ofNode);
}

function killPids(pids: number[]): void {
  for (const pid of pids.filter((p) => p > 1 && p !== process.pid)) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
}

/** Host process ids of a running container: its full id is in their cgroup paths (cgroupfs driver). */
export function containerPids(containerId: string): number[] {
  if (!/^[0-9a-f]{64}$/.test(containerId)) throw new Error(`not a full container id: ${containerId}`);
  const out: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/cgroup`, 'utf8').includes(containerId)) out.push(Number(entry));
    } catch {
      // gone meanwhile
    }
  }
  return out.filter((pid) => pid > 1 && pid !== process.pid);
}

/** Mount points at or under `dir`, deepest first. */
async function mountsUnder(dir: string): Promise<string[]> {
  const lines = (await readFile('/proc/self/mountinfo', 'utf8')).split('\n');
  const points = lines.map((l) => l.split(' ')[4]?.replace(/\\040/g, ' ')).filter((p): p is string => !!p && (p === dir || p.startsWith(`${dir}/`)));
  return [...new Set(points)].sort((a, b) => b.length - a.length);
}

/** kubelet's QoS cgroups (cgroupfs driver, cgroup v1): empty once every container is gone. */
function removeKubeCgroups(): void {
  const base = '/sys/fs/cgroup';
  if (!existsSync(base)) return;
  const removeTree = (dir: string): void => {
    for (const e of readdirSync(dir, { withFileTypes: true })) if (e.isDirectory()) removeTree(join(dir, e.name));
    try {
      rmdirSync(dir);
    } catch {
      // a process still in it; reported by the leftovers check
    }
  };
  for (const controller of readdirSync(base)) {
    const dir = join(base, controller, 'kubepods');
    if (existsSync(dir)) removeTree(dir);
  }
}

/**
 * Removes everything a node leaves on the host. `crictl` removes the Pods first (through the CNI
 * plugin, which also drops its per-Pod iptables rules) when containerd still answers.
 */
export async function cleanHost(opts: { kubeProxy?: string } = {}): Promise<void> {
  if (existsSync(PIDS)) {
    const recorded = (await readFile(PIDS, 'utf8')).split('\n').filter(Boolean).map(Number);
    killPids(recorded.filter((pid) => {
      try {
        const cmd = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
        return cmd.includes('agentyard') || cmd.includes(STATE);
      } catch {
        return false;
      }
    }));
  }
  killPids(processesOfNode());
  await new Promise((r) => setTimeout(r, 200));
  for (const point of await mountsUnder(STATE)) await sh('umount', ['-l', point], { allowFail: true });
  await removeStaleNetns();
  if (opts.kubeProxy) await sh(opts.kubeProxy, ['--cleanup'], { allowFail: true });
  for (const tool of ['iptables', 'ip6tables']) await removeChains(tool);
  // kube-router's ip sets, once no rule refers to them any more.
  for (const set of await ourIpSets()) await sh('ipset', ['destroy', set], { allowFail: true });
  removeKubeCgroups();
  if (existsSync(`/sys/class/net/${BRIDGE}`)) await sh('ip', ['link', 'del', BRIDGE], { allowFail: true });
  const sysctls = join(STATE, 'sysctls.json');
  if (existsSync(sysctls)) {
    for (const [key, value] of Object.entries(JSON.parse(await readFile(sysctls, 'utf8')) as Record<string, string>)) {
      await writeFile(`/proc/sys/${key}`, value).catch(() => undefined);
    }
  }
  await rm(STATE, { recursive: true, force: true });
}

/**
 * containerd pins each Pod's network namespace at /run/netns/cni-*; a Pod that was never stopped
 * (a killed run) leaves it. Those no process is in any more are stale: removed with their veths.
 */
async function removeStaleNetns(): Promise<void> {
  const dir = '/run/netns';
  if (!existsSync(dir)) return;
  const inUse = new Set<number>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      inUse.add(statSync(`/proc/${entry}/ns/net`).ino);
    } catch {
      // gone, or not ours to read
    }
  }
  for (const name of readdirSync(dir).filter((n) => n.startsWith('cni-'))) {
    let ino: number;
    try {
      ino = statSync(join(dir, name)).ino;
    } catch {
      continue;
    }
    if (!inUse.has(ino)) await sh('ip', ['netns', 'delete', name], { allowFail: true });
  }
}

const OUR_CHAINS = /^(KUBE-|CNI-)/;

/**
 * kube-proxy --cleanup leaves kubelet's own chains (KUBE-KUBELET-CANARY, KUBE-FIREWALL) and a CNI
 * plugin killed mid-way may leave CNI-*: unhook and delete every such chain, and nothing else.
 */
async function removeChains(tool: string): Promise<void> {
  const dump = await sh(`${tool}-save`, [], { allowFail: true });
  let table = '';
  const jumps: [string, string][] = [];
  const chains = new Map<string, Set<string>>();
  for (const line of dump.split('\n')) {
    if (line.startsWith('*')) table = line.slice(1);
    const chain = /^:(\S+)/.exec(line)?.[1];
    if (chain && OUR_CHAINS.test(chain)) chains.set(table, (chains.get(table) ?? new Set()).add(chain));
    const rule = /^-A (\S+) (.*)$/.exec(line);
    if (rule && !OUR_CHAINS.test(rule[1]!) && / -j (KUBE-|CNI-)/.test(` ${rule[2]}`)) jumps.push([table, line]);
  }
  for (const [t, line] of jumps) await sh('sh', ['-c', `${tool} -t ${t} -D ${line.slice(3)}`], { allowFail: true });
  for (const [t, names] of chains) {
    for (const c of names) await sh(tool, ['-t', t, '-F', c], { allowFail: true });
    for (const c of names) await sh(tool, ['-t', t, '-X', c], { allowFail: true });
  }
}

/** The ip sets kube-router (the node's NetworkPolicy enforcer) makes: KUBE-SRC-*, KUBE-DST-*, TMP-* while it syncs, inet6:* twins. */
async function ourIpSets(): Promise<string[]> {
  return (await sh('ipset', ['list', '-n'], { allowFail: true })).split('\n').filter((n) => /^(inet6:)?(KUBE-|TMP-)/.test(n));
}

/** What cleanHost should have removed and did not (for the teardown test). */
export async function leftovers(): Promise<string[]> {
  const found: string[] = [];
  if (existsSync(STATE)) found.push(`${STATE} exists`);
  for (const m of await mountsUnder(STATE)) found.push(`mount ${m}`);
  for (const pid of processesOfNode()) found.push(`process ${pid}: ${readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' ')}`);
  if (existsSync(`/sys/class/net/${BRIDGE}`)) found.push(`link ${BRIDGE}`);
  if (existsSync('/run/netns')) for (const n of readdirSync('/run/netns').filter((f) => f.startsWith('cni-'))) found.push(`network namespace ${n}`);
  const rules = await sh('iptables-save', [], { allowFail: true });
  if (/KUBE-|CNI-/.test(rules)) found.push('iptables rules of kube-proxy or the CNI plugin');
  for (const set of await ourIpSets()) found.push(`ip set ${set}`);
  for (const controller of existsSync('/sys/fs/cgroup') ? readdirSync('/sys/fs/cgroup') : []) {
    if (existsSync(join('/sys/fs/cgroup', controller, 'kubepods'))) found.push(`cgroup ${controller}/kubepods`);
  }
  return found;
}
