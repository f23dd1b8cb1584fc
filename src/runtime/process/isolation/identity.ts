// Which host user a sandbox runs as, kept beside its runtime record in
// <dataDir>/sandboxes/<name>/sandbox-user.json (root-only, never inside the sandbox's view). A
// sandbox keeps its uid across pause, resume and restarts of `agentyard up`, so its files stay its
// own; the uid is free again once the sandbox directory is deleted.
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const FILE = 'sandbox-user.json';

export interface SandboxIdentity {
  uid: number;
  /** The user its network's pasta runs as (network.ts), or with pasta as root its group; another id of the range: never the sandbox's own. */
  netUid?: number;
  /** The cgroup directories made for it, removed when the sandbox is deleted. */
  cgroups?: string[];
}

export function readIdentity(sandboxDir: string): SandboxIdentity | undefined {
  try {
    const parsed = JSON.parse(readFileSync(join(sandboxDir, FILE), 'utf8')) as SandboxIdentity;
    return Number.isInteger(parsed.uid) ? parsed : undefined;
  } catch {
    return undefined;
  }
}

export function writeIdentity(sandboxDir: string, identity: SandboxIdentity): void {
  writeFileSync(join(sandboxDir, FILE), JSON.stringify(identity), { mode: 0o600 });
}

/**
 * The lowest uid of the range that no other sandbox of this installation holds and no process on
 * the machine runs as (another installation sharing the range, a leftover): two sandboxes never
 * share a user, nor a sandbox and another's pasta. Synchronous from the read to the caller's write, so two starts cannot pick one uid.
 */
export function allocateUid(sandboxesRoot: string, range: { first: number; last: number }, busy: ReadonlySet<number> = processUids()): number {
  const taken = new Set(busy);
  for (const name of existsSync(sandboxesRoot) ? readdirSync(sandboxesRoot) : []) {
    const id = readIdentity(join(sandboxesRoot, name));
    if (id) taken.add(id.uid);
    if (id?.netUid !== undefined) taken.add(id.netUid);
  }
  for (let uid = range.first; uid <= range.last; uid++) if (!taken.has(uid)) return uid;
  throw new Error(`every uid of the sandbox range ${range.first}-${range.last} is in use; widen AGENTYARD_SANDBOX_UID_RANGE`);
}

/** Real uids of the processes running now (from /proc). */
export function processUids(): Set<number> {
  const uids = new Set<number>();
  for (const pid of readdirSync('/proc')) {
    if (!/^\d+$/.test(pid)) continue;
    try {
      const m = /^Uid:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
      if (m) uids.add(Number(m[1]));
    } catch {
      // exited meanwhile
    }
  }
  return uids;
}
