// Process facts ProcessRuntime decides on, read from the kernel rather than remembered: whether a
// pid is alive (not a zombie), whether it is still our agent server (pids get recycled), which
// boot of the machine we are in (a reboot kills children without anyone stopping them).
import { readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';

export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return !isZombie(pid);
  } catch {
    return false;
  }
}

function isZombie(pid: number): boolean {
  try {
    return /\) Z /.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
}

/** Alive and still an agent server (a recycled pid is not). */
export function isAgentServer(pid: number): boolean {
  if (!isAlive(pid)) return false;
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('agent-server');
  } catch {
    return true; // no /proc: trust the pid
  }
}

/**
 * Signals the whole process group the agent server leads (its tools' processes too). `groupOnly`:
 * never the pid itself (its leader is known dead, the pid may be recycled).
 */
export function signalGroup(pid: number, signal: NodeJS.Signals, opts: { groupOnly?: boolean } = {}): void {
  try {
    process.kill(-pid, signal);
  } catch {
    if (opts.groupOnly) return;
    try {
      process.kill(pid, signal);
    } catch {
      // already gone
    }
  }
}

function groupAlive(pid: number): boolean {
  try {
    process.kill(-pid, 0);
    return true;
  } catch {
    return isAlive(pid);
  }
}

/** SIGTERM to the group, SIGKILL after `graceMs`; resolves once the leader is gone. */
export async function stopGroup(pid: number, graceMs: number): Promise<void> {
  signalGroup(pid, 'SIGTERM');
  const deadline = Date.now() + graceMs;
  while (isAlive(pid) && Date.now() < deadline) await sleep(25);
  // Whatever the agent's tools left in the group goes too: a paused sandbox holds no processes.
  if (groupAlive(pid)) signalGroup(pid, 'SIGKILL');
  const killDeadline = Date.now() + 5_000;
  while (isAlive(pid) && Date.now() < killDeadline) await sleep(10);
}

/** This boot of the machine (Linux); undefined elsewhere. */
export function bootId(): string | undefined {
  try {
    return readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim() || undefined;
  } catch {
    return undefined;
  }
}
