// CPU, memory and process limits per sandbox. A cgroup per sandbox when `agentyard up` may make
// cgroups (root, with the cpu, memory and pids controllers writable: v1 hierarchies, or a v2 tree
// that can delegate them), since only a cgroup limits a sandbox as a whole and throttles CPU rather
// than killing. Otherwise resource limits (rlimits) per process, which is weaker: memory is capped
// per process (RLIMIT_DATA), the process count per sandbox user (RLIMIT_NPROC), CPU not at all.
//
// Cgroups live below `agentyard up`'s own cgroup, in agentyard-<installation>/<sandbox>, so they
// nest inside whatever limits the host gave the service and two installations never share one.
import { existsSync, mkdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { SandboxLimits } from './settings.ts';

const CONTROLLERS = ['cpu', 'memory', 'pids'] as const;
const CPU_PERIOD_US = 100_000;

export type LimitKind = 'cgroup-v1' | 'cgroup-v2' | 'rlimit';

export interface PreparedLimits {
  /** Cgroup directories of this sandbox (to remove on delete). */
  cgroups: string[];
  /** `cgroup.procs` files the launching process writes its pid to before it becomes the sandbox. */
  procsFiles: string[];
  /** prlimit options that apply rlimits instead (rlimit only). */
  rlimits?: string[];
}

export class Limits {
  readonly kind: LimitKind;
  /** Why cgroups are not used (rlimit only). */
  readonly reason: string | undefined;
  readonly limits: SandboxLimits;
  /** cgroup-v1: controller → installation directory; cgroup-v2: 'unified' → installation directory. */
  readonly #bases: Map<string, string>;

  private constructor(kind: LimitKind, limits: SandboxLimits, bases: Map<string, string>, reason?: string) {
    this.kind = kind;
    this.limits = limits;
    this.#bases = bases;
    this.reason = reason;
  }

  /** Finds out what this host allows; `proc` is where /proc/self lives (tests point it elsewhere). */
  static detect(installation: string, limits: SandboxLimits, proc = '/proc/self'): Limits {
    let mounts: CgroupMount[];
    let own: Map<string, string>;
    try {
      mounts = cgroupMounts(readFileSync(join(proc, 'mountinfo'), 'utf8'));
      own = ownCgroups(readFileSync(join(proc, 'cgroup'), 'utf8'));
    } catch {
      return new Limits('rlimit', limits, new Map(), 'no cgroup information in /proc');
    }
    const dir = `agentyard-${installation}`;
    const v1 = new Map<string, string>();
    for (const c of CONTROLLERS) {
      const m = mounts.find((x) => x.version === 1 && x.controllers.includes(c));
      const path = own.get(c);
      if (m && path !== undefined) v1.set(c, join(locate(m, path), dir));
    }
    if (v1.size === CONTROLLERS.length) {
      const failed = tryMkdirs([...v1.values()]);
      return failed ? new Limits('rlimit', limits, new Map(), `cannot create cgroups (${failed})`) : new Limits('cgroup-v1', limits, v1);
    }
    const unified = mounts.find((x) => x.version === 2);
    const path = own.get('');
    if (unified && path !== undefined && v1.size === 0) {
      const parent = locate(unified, path);
      const available = readOr(join(parent, 'cgroup.controllers'), '').split(/\s+/);
      const missing = CONTROLLERS.filter((c) => !available.includes(c));
      if (missing.length > 0) return new Limits('rlimit', limits, new Map(), `cgroup v2 does not delegate ${missing.join(', ')} to ${parent}`);
      const base = join(parent, dir);
      const enable = CONTROLLERS.map((c) => `+${c}`).join(' ');
      const failed =
        tryMkdirs([base]) ?? tryWrite(join(parent, 'cgroup.subtree_control'), enable, `${parent} holds processes or is not delegated`) ?? tryWrite(join(base, 'cgroup.subtree_control'), enable);
      return failed ? new Limits('rlimit', limits, new Map(), `cannot use cgroup v2 (${failed})`) : new Limits('cgroup-v2', limits, new Map([['unified', base]]));
    }
    return new Limits('rlimit', limits, new Map(), 'the cpu, memory and pids cgroup controllers are not all available');
  }

  describe(): string {
    const l = this.limits;
    const what = `${l.cpus} CPU, ${Math.round(l.memoryBytes / 1024 / 1024)} MiB memory, ${l.pids} processes`;
    if (this.kind !== 'rlimit') return `${what} per sandbox (${this.kind.replace('-', ' ')})`;
    return `${Math.round(l.memoryBytes / 1024 / 1024)} MiB data per process and ${l.pids} processes per sandbox (rlimits; CPU unlimited: ${this.reason})`;
  }

  /** Creates (or finds) the sandbox's cgroups with the limits written, or says which rlimits to apply. */
  prepare(name: string): PreparedLimits {
    const l = this.limits;
    if (this.kind === 'rlimit') {
      return { cgroups: [], procsFiles: [], rlimits: [`--data=${l.memoryBytes}`, `--nproc=${l.pids}`] };
    }
    const files: Record<string, [string, string][]> =
      this.kind === 'cgroup-v1'
        ? {
            cpu: [
              ['cpu.cfs_period_us', String(CPU_PERIOD_US)],
              ['cpu.cfs_quota_us', String(Math.round(l.cpus * CPU_PERIOD_US))],
            ],
            memory: [['memory.limit_in_bytes', String(l.memoryBytes)]],
            pids: [['pids.max', String(l.pids)]],
          }
        : {
            unified: [
              ['cpu.max', `${Math.round(l.cpus * CPU_PERIOD_US)} ${CPU_PERIOD_US}`],
              ['memory.max', String(l.memoryBytes)],
              ['memory.swap.max', '0'],
              ['pids.max', String(l.pids)],
            ],
          };
    const cgroups: string[] = [];
    for (const [controller, base] of this.#bases) {
      const dir = join(base, name);
      mkdirSync(dir, { recursive: true });
      for (const [file, value] of files[controller] ?? []) {
        // memory.swap.max is absent without swap accounting: the memory limit then is the whole limit.
        if (file === 'memory.swap.max' && !existsSync(join(dir, file))) continue;
        writeFileSync(join(dir, file), value);
      }
      cgroups.push(dir);
    }
    return { cgroups, procsFiles: cgroups.map((d) => join(d, 'cgroup.procs')) };
  }

  /**
   * Removes a deleted sandbox's cgroups. Its processes were just killed; the kernel may still be
   * tearing down its PID namespace, so this waits (up to `waitMs`) for each cgroup to empty.
   */
  static async release(cgroups: readonly string[], waitMs = 5_000): Promise<void> {
    const deadline = Date.now() + waitMs;
    for (const dir of cgroups) {
      while (existsSync(dir)) {
        try {
          rmdirSync(dir);
        } catch (err) {
          if ((err as NodeJS.ErrnoException).code !== 'EBUSY' || Date.now() > deadline) break; // an empty directory left behind costs nothing
          await sleep(20);
        }
      }
      // The installation's v1 directory goes with its last sandbox (a v2 one keeps its delegation).
      const parent = dirname(dir);
      if (!existsSync(dir) && !existsSync(join(parent, 'cgroup.subtree_control'))) {
        try {
          rmdirSync(parent);
        } catch {
          // other sandboxes still have theirs
        }
      }
    }
  }
}

interface CgroupMount {
  version: 1 | 2;
  controllers: string[];
  mountPoint: string;
  /** The part of the hierarchy mounted there ("/" unless a container sees a subtree). */
  root: string;
}

/** cgroup mounts from /proc/self/mountinfo. */
export function cgroupMounts(mountinfo: string): CgroupMount[] {
  const out: CgroupMount[] = [];
  for (const line of mountinfo.split('\n')) {
    const [left, right] = line.split(' - ');
    if (!left || !right) continue;
    const f = left.split(' ');
    const [fstype, , options = ''] = right.split(' ');
    const unescape = (s: string) => s.replace(/\\(\d{3})/g, (_, o: string) => String.fromCharCode(parseInt(o, 8)));
    if (fstype === 'cgroup2') out.push({ version: 2, controllers: [], mountPoint: unescape(f[4]!), root: unescape(f[3]!) });
    else if (fstype === 'cgroup') out.push({ version: 1, controllers: options.split(','), mountPoint: unescape(f[4]!), root: unescape(f[3]!) });
  }
  return out;
}

/** Controller (or '' for v2) → this process's cgroup path, from /proc/self/cgroup. */
export function ownCgroups(text: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const line of text.split('\n')) {
    const m = /^\d+:([^:]*):(.*)$/.exec(line);
    if (!m) continue;
    if (m[1] === '') out.set('', m[2]!);
    else for (const c of m[1]!.split(',')) out.set(c, m[2]!);
  }
  return out;
}

function locate(m: CgroupMount, path: string): string {
  const rel = m.root !== '/' && path.startsWith(m.root) ? path.slice(m.root.length) : path;
  return join(m.mountPoint, rel);
}

function tryMkdirs(dirs: string[]): string | undefined {
  for (const d of dirs) {
    try {
      mkdirSync(d, { recursive: true });
    } catch (err) {
      return `${d}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`;
    }
  }
  return undefined;
}

function tryWrite(file: string, value: string, hint?: string): string | undefined {
  try {
    writeFileSync(file, value);
    return undefined;
  } catch (err) {
    return `${file}: ${(err as NodeJS.ErrnoException).code ?? String(err)}${hint ? `; ${hint}` : ''}`;
  }
}

function readOr(file: string, fallback: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return fallback;
  }
}
