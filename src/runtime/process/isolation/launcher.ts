// How a sandbox's agent server is spawned: the command line, environment and working directory
// ProcessRuntime hands to spawn(). The lifecycle (records, health, stop) stays in ProcessRuntime.
//
// BubblewrapLauncher runs every sandbox as its own unprivileged user in its own namespaces. The
// chain, one pid throughout (so ProcessRuntime's pid, process group and command-line checks hold):
//   sh (root)        joins the sandbox's cgroups (or prlimit applies rlimits), then exec
//   bwrap (root)     PID, mount, IPC, UTS and cgroup namespaces; a root of read-only system
//                    directories and agentyard's own program; private /tmp, /dev/shm, /var/tmp and
//                    /proc; the data directory of `agentyard up` replaced by an empty read-only
//                    directory in which only this sandbox's workspace, state and home exist
//   setpriv          becomes the sandbox's uid/gid: no supplementary groups, no capabilities
//   bwrap (sandbox)  a user namespace that forbids creating further ones (the kernel's namespace
//                    code is a common way up from an unprivileged user), same view otherwise
//   agent server     and every process it starts (terminal, /api/bash, hooks, MCP servers,
//                    browser) inherits all of it.
// bwrap does the mounts as root because only root can reach the sandbox's directories inside the
// 0700 data directory.
//
// The network (where pasta, from Debian's passt, is installed): each sandbox its own network
// namespace, pasta giving it outbound NAT without the host's own addresses, run as a user of its
// own where the host allows it (network.ts). Without pasta the network is shared, and the start-up
// summary says so.
//
// No --die-with-parent: sandboxes outlive a restart of `agentyard up`, which adopts them again.
// No --new-session: the chain starts detached (a new session without a controlling terminal, so
// nothing to inject keystrokes into), and ProcessRuntime stops a sandbox by signalling its process
// group; bwrap's PID 1 is in that group and its death ends every process of the namespace.
import { execFileSync, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmodSync, existsSync, lstatSync, mkdirSync, readFileSync, readlinkSync, realpathSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { dirname, isAbsolute, join, resolve, sep } from 'node:path';
import { hostGuardTable, installHostGuard } from './host-guard.ts';
import { allocateUid, readIdentity, writeIdentity } from './identity.ts';
import { Limits } from './limits.ts';
import { dropNetwork, NETWORK_SCRIPT, networkArgs, stopPasta, type NetworkTools } from './network.ts';
import type { IsolationSettings } from './settings.ts';

export interface LaunchRequest {
  name: string;
  /** The sandbox's directory, <dataDir>/sandboxes/<name>. */
  dir: string;
  /** The agent server's full command line. */
  argv: string[];
  env: Record<string, string>;
  /** With a network of its own: the agent server's port (forwarded from the host's loopback) and the host loopback ports it may reach. */
  net?: { port: number; hostPorts: number[] };
}

export interface Launch {
  command: string;
  args: string[];
  env: Record<string, string>;
  cwd: string;
}

export interface SandboxLauncher {
  readonly isolated: boolean;
  /** Each sandbox has a network namespace of its own: the agent server's port is chosen before start (LaunchRequest.net). */
  readonly ownNetwork: boolean;
  /** Makes the sandbox's user, directories and limits ready and says how to spawn it. */
  prepare(req: LaunchRequest): Launch;
  /** The sandbox directory is about to be removed (its processes stopped): free what prepare() made outside it. */
  release(dir: string): Promise<void>;
}

/** Subdirectories of a sandbox's directory that it owns and may write. */
export const SANDBOX_DIRS = ['workspace', 'state', 'home'] as const;

/** Same user as `agentyard up`, no namespaces: single-user installations without isolation. */
export class PlainLauncher implements SandboxLauncher {
  readonly isolated = false;
  readonly ownNetwork = false;
  prepare(req: LaunchRequest): Launch {
    const [command, ...args] = req.argv;
    return { command: command!, args, env: req.env, cwd: join(req.dir, 'workspace') };
  }
  async release(): Promise<void> {}
}

/** System directories a sandbox sees read-only (those that exist). /home, /root, /srv, /mnt, /run stay out. */
const SYSTEM_DIRS = ['/usr', '/bin', '/sbin', '/lib', '/lib32', '/lib64', '/libx32', '/etc', '/opt', '/var', '/sys'];

export interface BubblewrapOptions {
  dataDir: string;
  settings: IsolationSettings;
  limits: Limits;
  tools: { bwrap: string; setpriv: string; prlimit?: string; sh: string };
  /** Host paths the agent server's program needs (agentyard, its Node); read-only inside. */
  programPaths: string[];
  /** The innermost user namespace that forbids further ones (default on; off where the host refuses user namespaces). */
  blockUserNamespaces?: boolean;
  /**
   * A network namespace of its own per sandbox, through pasta (absent: the host's network is
   * shared). `pastaUser`: pasta runs as a user of its own (needs unprivileged user namespaces), else as root.
   */
  network?: { tools: NetworkTools; pastaUser: boolean };
}

export class BubblewrapLauncher implements SandboxLauncher {
  readonly isolated = true;
  readonly #o: BubblewrapOptions;

  constructor(opts: BubblewrapOptions) {
    this.#o = opts;
  }

  get ownNetwork(): boolean {
    return this.#o.network !== undefined;
  }

  get limits(): Limits {
    return this.#o.limits;
  }

  prepare(req: LaunchRequest): Launch {
    const { dir } = req;
    let identity = readIdentity(dir);
    if (!identity) {
      identity = { uid: allocateUid(dirname(dir), this.#o.settings.uidRange) };
      writeIdentity(dir, identity);
    }
    // pasta's user, or with pasta as root its group: an id of the range that is the sandbox's network's alone.
    if (this.#o.network && identity.netUid === undefined) {
      identity = { ...identity, netUid: allocateUid(dirname(dir), this.#o.settings.uidRange) };
      writeIdentity(dir, identity);
    }
    const { uid } = identity;
    for (const sub of SANDBOX_DIRS) {
      const path = join(dir, sub);
      mkdirSync(path, { recursive: true, mode: 0o700 });
      // Files written before (another uid, or a sandbox from before isolation) become the sandbox's.
      if (statSync(path).uid !== uid) execFileSync('chown', ['-R', `${uid}:${uid}`, path]);
      chmodSync(path, 0o700);
    }
    const etc = this.#identityFiles(dir, uid);
    const prepared = this.#o.limits.prepare(req.name);
    if (JSON.stringify(prepared.cgroups) !== JSON.stringify(identity.cgroups ?? [])) writeIdentity(dir, { ...identity, cgroups: prepared.cgroups });
    const t = this.#o.tools;
    const ws = join(dir, 'workspace');
    const inner = [
      ...(prepared.rlimits ? [t.prlimit ?? 'prlimit', ...prepared.rlimits, '--'] : []),
      t.bwrap, ...this.#bwrapArgs(req, etc), '--',
      t.setpriv, `--reuid=${uid}`, `--regid=${uid}`, '--clear-groups', '--inh-caps=-all', '--bounding-set=-all', '--',
      ...(this.#o.blockUserNamespaces === false ? [] : [t.bwrap, '--unshare-user', '--disable-userns', '--bind', '/', '/', '--dev-bind', '/dev', '/dev', '--chdir', ws, '--']),
      ...req.argv,
    ];
    // The shell joins the cgroups (as root, before anything else runs), makes the network (below) and execs the rest.
    const script = 'while [ "$1" != -- ]; do echo $$ > "$1" || exit 125; shift; done; shift; ' + (this.#o.network ? NETWORK_SCRIPT : '') + 'exec "$@"';
    const net = this.#networkArgs(req, identity.netUid ?? 0);
    return { command: t.sh, args: ['-c', script, 'agentyard-sandbox', ...prepared.procsFiles, '--', ...net, ...inner], env: req.env, cwd: ws };
  }

  async release(dir: string): Promise<void> {
    if (this.#o.network) {
      // Stopping the sandbox's group ends its pasta; one whose chain ended without a stop may be left.
      await stopPasta(dir);
      dropNetwork(this.#o.network.tools.umount, dir);
    }
    await Limits.release(readIdentity(dir)?.cgroups ?? []);
  }

  /** The arguments NETWORK_SCRIPT reads (network.ts). */
  #networkArgs(req: LaunchRequest, netUid: number): string[] {
    const n = this.#o.network;
    if (!n) return [];
    if (!req.net) throw new Error('a sandbox with a network of its own needs its agent server port chosen before start');
    const hostPorts = [...new Set([...req.net.hostPorts, ...this.#o.settings.hostPorts])];
    return networkArgs(n.tools, { dir: req.dir, port: req.net.port, hostPorts, pastaUid: n.pastaUser ? netUid : 0, pastaGid: netUid, sh: this.#o.tools.sh });
  }

  /** passwd and group with the sandbox's user added, so tools that look the user up (git, ssh, whoami) work. */
  #identityFiles(dir: string, uid: number): { passwd?: string; group?: string } {
    const out: { passwd?: string; group?: string } = {};
    const home = join(dir, 'home');
    const shell = existsSync('/bin/bash') ? '/bin/bash' : '/bin/sh';
    for (const [name, line] of [
      ['passwd', `sandbox:x:${uid}:${uid}:agentyard sandbox:${home}:${shell}`],
      ['group', `sandbox:x:${uid}:`],
    ] as const) {
      const host = `/etc/${name}`;
      if (!existsSync(host)) continue;
      const file = join(dir, `etc-${name}`);
      const lines = readFileSync(host, 'utf8').split('\n').filter((l) => l !== '' && !l.startsWith('sandbox:'));
      writeFileSync(file, `${[...lines, line].join('\n')}\n`, { mode: 0o644 });
      out[name] = file;
    }
    return out;
  }

  #bwrapArgs(req: LaunchRequest, etc: { passwd?: string; group?: string }): string[] {
    const { dataDir, settings, programPaths } = this.#o;
    const limits = this.#o.limits.limits;
    const realDataDir = realOrUndefined(dataDir) ?? dataDir;
    const a = ['--unshare-pid', '--unshare-ipc', '--unshare-uts', '--unshare-cgroup-try', '--hostname', 'sandbox'];
    // Directories bwrap creates for mount points would be root's 0700: the sandbox user must pass them.
    const made = new Set<string>();
    const parents = (p: string) => {
      const chain: string[] = [];
      for (let d = dirname(p); d !== '/'; d = dirname(d)) chain.unshift(d);
      for (const d of chain.filter((d) => !made.has(d))) {
        made.add(d);
        a.push('--perms', '0755', '--dir', d);
      }
    };
    for (const d of SYSTEM_DIRS) {
      if (!existsSync(d)) continue;
      // Merged /usr: /bin → usr/bin stays a link, not a second mount.
      if (lstatSync(d).isSymbolicLink()) a.push('--symlink', readlinkSync(d), d);
      else a.push('--ro-bind', d, d);
    }
    // /etc/resolv.conf may point into /run (systemd-resolved), which stays out otherwise.
    const resolv = realOrUndefined('/etc/resolv.conf');
    if (resolv && !resolv.startsWith('/etc/')) {
      parents(resolv);
      a.push('--ro-bind-try', resolv, resolv);
    }
    if (etc.passwd) a.push('--ro-bind', etc.passwd, '/etc/passwd');
    if (etc.group) a.push('--ro-bind', etc.group, '/etc/group');
    a.push('--proc', '/proc', '--dev', '/dev');
    // Private scratch space, in memory: counted against the sandbox's memory, and capped at it.
    for (const tmp of ['/tmp', '/dev/shm', ...(existsSync('/var') ? ['/var/tmp'] : [])]) a.push('--perms', '1777', '--size', String(limits.memoryBytes), '--tmpfs', tmp);
    const extra = [...programPaths, ...settings.readOnlyPaths, ...req.argv.filter((p) => isAbsolute(p))];
    for (const p of new Set(extra.map((p) => realOrUndefined(p)).filter((p): p is string => p !== undefined && !within(p, dataDir) && !within(p, realDataDir)))) {
      if (SYSTEM_DIRS.some((d) => within(p, d))) continue; // already visible
      parents(p);
      a.push('--ro-bind-try', p, p);
    }
    // The service's data directory: empty (no database, key, other sandboxes) but for this sandbox's own directories.
    parents(dataDir);
    a.push('--size', '65536', '--tmpfs', dataDir, '--perms', '0755', '--dir', dirname(req.dir), '--perms', '0755', '--dir', req.dir);
    for (const sub of SANDBOX_DIRS) a.push('--bind', join(req.dir, sub), join(req.dir, sub));
    a.push('--remount-ro', dataDir, '--remount-ro', '/', '--chdir', join(req.dir, 'workspace'));
    return a;
  }
}

export interface IsolationReport {
  launcher: SandboxLauncher;
  isolated: boolean;
  /** One line for the start-up output: what the sandboxes get, or why they are not isolated. */
  summary: string;
  /** Why there is no isolation (unisolated only). */
  reason?: string;
}

const repoRoot = resolve(import.meta.dirname, '..', '..', '..', '..');

/**
 * Decides how sandboxes run on this host: isolated when the settings allow it and a probe sandbox
 * works (root, bubblewrap, user namespaces), otherwise unisolated with the reason. `required`
 * turns "not available" into a start-up failure.
 */
export async function createSandboxLauncher(dataDir: string, settings: IsolationSettings, opts: { programPaths?: string[] } = {}): Promise<IsolationReport> {
  const unisolated = (reason: string): IsolationReport => {
    if (settings.mode === 'required') throw new Error(`sandbox isolation is required (AGENTYARD_SANDBOX_ISOLATION=required) but not available: ${reason}`);
    return { launcher: new PlainLauncher(), isolated: false, reason, summary: `sandbox isolation: OFF (${reason}); every sandbox runs as this service's own user, so this installation serves one user only` };
  };
  if (settings.mode === 'off') return unisolated('AGENTYARD_SANDBOX_ISOLATION=off');
  if (process.platform !== 'linux') return unisolated(`isolation needs Linux, this is ${process.platform}`);
  if (process.getuid?.() !== 0) return unisolated('agentyard up is not running as root, so it cannot run sandboxes as users of their own');
  const bwrap = which('bwrap');
  const setpriv = which('setpriv');
  const sh = which('sh');
  if (!bwrap) return unisolated('bubblewrap (bwrap) is not installed');
  if (!setpriv || !sh) return unisolated('setpriv (util-linux) is not installed');
  const installation = createHash('sha256').update(realpathSync(dataDir)).digest('hex').slice(0, 12);
  const limits = Limits.detect(installation, settings.limits);
  const prlimit = which('prlimit');
  if (limits.kind === 'rlimit' && !prlimit) return unisolated(`no cgroups (${limits.reason}) and prlimit (util-linux) is not installed`);
  // What the agent server runs from, not the whole checkout (an operator's .env or data directory there stays out).
  const programPaths = opts.programPaths ?? [...['package.json', 'bin', 'src', 'node_modules'].map((p) => join(repoRoot, p)), nodePrefix()];
  const tools = { bwrap, setpriv, sh, ...(prlimit ? { prlimit } : {}) };
  const make = (blockUserNamespaces: boolean, network?: BubblewrapOptions['network']) => new BubblewrapLauncher({ dataDir, settings, limits, programPaths, blockUserNamespaces, tools, ...(network ? { network } : {}) });
  let launcher = make(true);
  let note = '';
  const failure = await probe(launcher, dataDir, programPaths);
  if (failure) {
    // Some hosts refuse unprivileged user namespaces (the innermost layer); the rest still isolates.
    const fallback = make(false);
    if (await probe(fallback, dataDir, programPaths)) return unisolated(failure);
    launcher = fallback;
    note = `; sandboxes may create user namespaces (the host refused the layer that forbids them: ${failure})`;
  }
  const blockUserNamespaces = !note;
  let network = 'network shared with the host (install pasta, from the passt package, for a network of its own per sandbox)';
  const pasta = which('pasta', true);
  const netTools = { pasta, unshare: which('unshare'), nsenter: which('nsenter'), umount: which('umount'), mount: which('mount'), ip: which('ip'), setpriv, sleep: which('sleep'), cp: which('cp'), chown: which('chown') };
  if (pasta) {
    const missing = Object.entries(netTools).filter(([k, p]) => !p && k !== 'ip').map(([k]) => k);
    if (missing.length > 0) network = `network shared with the host (pasta is installed, but not ${missing.join(', ')})`;
    else {
      const tools = netTools as NetworkTools;
      // pasta as a user of its own first; as root where the host refuses that user a user namespace.
      let failure = '';
      for (const pastaUser of [true, false]) {
        const withNet = make(blockUserNamespaces, { tools, pastaUser });
        const netFailure = await probe(withNet, dataDir, programPaths);
        if (netFailure) {
          failure ||= netFailure;
          continue;
        }
        launcher = withNet;
        const extra = settings.hostPorts.length > 0 ? ` and port${settings.hostPorts.length > 1 ? 's' : ''} ${settings.hostPorts.join(', ')}` : '';
        const runs = pastaUser ? 'pasta runs as a user of its own' : `pasta runs as root: as a user of its own ${failure}`;
        const nat = outboundNat(settings.uidRange, netTools.ip !== undefined);
        network = `a network namespace of its own per sandbox (pasta: ${nat}; of the host's loopback only the API${extra} reachable; ${runs})`;
        break;
      }
      if (launcher.ownNetwork === false) network = `network shared with the host (pasta is installed, but ${failure})`;
    }
  }
  const r = settings.uidRange;
  return { launcher, isolated: true, summary: `sandbox isolation: on (bubblewrap; a user of its own per sandbox from uids ${r.first}-${r.last}; ${limits.describe()}; ${network}${note})` };
}

/**
 * What the outbound NAT keeps sandboxes from, for the start-up line, after installing the host
 * guard (host-guard.ts) where it can: with it every address of the host, whenever gained; without
 * it, the routes' snapshot at each start (ip), and the line names what stays open and why.
 */
function outboundNat(uids: IsolationSettings['uidRange'], ip: boolean): string {
  const nft = which('nft');
  const guardFailure = !nft ? 'nft, from nftables, is not installed' : installHostGuard(nft, uids);
  if (!guardFailure) return `outbound NAT without the host's own addresses, also those it gains later and IPv6 link-local ones, nor the cloud metadata addresses (nftables table inet ${hostGuardTable(uids)})`;
  if (!ip) return `outbound NAT, also to the host's own addresses and the cloud metadata addresses (NOT isolated: ${guardFailure}; nor is ip, from iproute2, installed for routes)`;
  return `outbound NAT without the host's addresses it had when each sandbox started; NOT isolated: addresses it gains later and its IPv6 link-local ones (${guardFailure})`;
}

/** Starts a throwaway sandbox that checks it can read the agent server's program; the failure, if any. */
async function probe(launcher: BubblewrapLauncher, dataDir: string, programPaths: string[]): Promise<string | undefined> {
  const dir = join(dataDir, 'isolation-probe');
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { mode: 0o700 });
  try {
    const checks = programPaths.filter((p) => existsSync(p));
    const net = launcher.ownNetwork ? { port: await freeLoopbackPort(), hostPorts: [] } : undefined;
    const launch = launcher.prepare({ name: 'isolation-probe', dir, argv: ['/bin/sh', '-c', 'for p do test -r "$p" || { echo "cannot read $p" >&2; exit 1; }; done', 'probe', ...checks], env: { PATH: '/usr/bin:/bin' }, ...(net ? { net } : {}) });
    const res = spawnSync(launch.command, launch.args, { cwd: launch.cwd, env: launch.env, encoding: 'utf8', timeout: 20_000 });
    if (res.status === 0) return undefined;
    const why = (res.stderr || res.error?.message || `exit ${res.status ?? res.signal}`).trim().split('\n').slice(-3).join('; ');
    return `a probe sandbox failed: ${why}`;
  } catch (err) {
    return `a probe sandbox failed: ${err instanceof Error ? err.message : String(err)}`;
  } finally {
    await launcher.release(dir);
    rmSync(dir, { recursive: true, force: true });
  }
}

/** A TCP port free on 127.0.0.1 now (the kernel's choice), for an agent server to listen on behind pasta. */
export function freeLoopbackPort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as AddressInfo;
      srv.close(() => resolvePort(port));
    });
  });
}

/** A program on PATH, by its real path: tools run inside the sandbox too, where only system directories are mounted. `keepName`: pasta is a link to passt that acts by its name. */
function which(cmd: string, keepName = false): string | undefined {
  for (const d of (process.env.PATH ?? '/usr/sbin:/usr/bin:/sbin:/bin').split(':')) {
    const p = join(d || '.', cmd);
    try {
      if (statSync(p).isFile()) return keepName ? p : realpathSync(p);
    } catch {
      // not here
    }
  }
  return undefined;
}

/** The installation prefix of the running Node (…/bin/node → …), which the agent server runs on. */
function nodePrefix(): string {
  return dirname(dirname(realpathSync(process.execPath)));
}

function realOrUndefined(p: string): string | undefined {
  try {
    return realpathSync(p);
  } catch {
    return undefined;
  }
}

function within(p: string, dir: string): boolean {
  return p === dir || p.startsWith(dir.endsWith(sep) ? dir : dir + sep);
}
