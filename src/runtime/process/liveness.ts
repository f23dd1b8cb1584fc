// Liveness of embedded agent servers: who tells the controller, within a second or two, that a
// sandbox's process died or stopped answering. Children spawned by this process report their exit
// at once; children adopted after a restart of `agentyard up` (not ours to wait for) are found dead
// by a cheap pid check every `pollMs`; a /ready probe every `probeMs` catches a process that is
// alive but hung. Each finding only pokes the controller: ProcessRuntime.observe() decides what it
// means, from the kernel and runtime.json, so nothing here has to survive a restart.
import type { SandboxRef } from '../types.ts';
import { isAlive } from './processes.ts';

export interface LivenessOptions {
  /** Pid check interval (default 1 s). */
  pollMs?: number;
  /** /ready probe interval for serving agent servers (default 5 s); any answer (503 too) means alive. */
  probeMs?: number;
  /** One probe's timeout (default 2 s). */
  probeTimeoutMs?: number;
}

interface Tracked {
  ref: SandboxRef;
  pid: number;
  url?: string;
  probing?: boolean;
}

export class ProcessLiveness {
  readonly #tracked = new Map<string, Tracked>();
  readonly #o: Required<LivenessOptions>;
  #changed: ((ref: SandboxRef) => void) | undefined;

  constructor(opts: LivenessOptions = {}) {
    this.#o = { pollMs: 1_000, probeMs: 5_000, probeTimeoutMs: 2_000, ...opts };
  }

  /** The agent server of `ref` is process `pid` (serving at `url` once known). */
  track(ref: SandboxRef, pid: number, url?: string): void {
    const known = this.#tracked.get(ref.name);
    if (known?.pid === pid && known.url === url) return;
    this.#tracked.set(ref.name, { ref, pid, ...(url ? { url } : {}) });
  }

  /** Stopped on purpose (pause, delete, shutdown): not a death to report. */
  untrack(name: string): void {
    this.#tracked.delete(name);
  }

  /** A tracked process exited (the spawn's exit event): reported at once. */
  exited(name: string, pid: number): void {
    const t = this.#tracked.get(name);
    if (t?.pid !== pid) return;
    this.#tracked.delete(name);
    this.#changed?.(t.ref);
  }

  async run(changed: (ref: SandboxRef) => void, signal: AbortSignal): Promise<void> {
    this.#changed = changed;
    const poll = setInterval(() => this.#poll(), this.#o.pollMs);
    const probe = setInterval(() => this.#probeAll(), this.#o.probeMs);
    poll.unref();
    probe.unref();
    await new Promise<void>((resolve) => {
      if (signal.aborted) resolve();
      else signal.addEventListener('abort', () => resolve(), { once: true });
    });
    clearInterval(poll);
    clearInterval(probe);
    this.#changed = undefined;
  }

  #poll(): void {
    for (const [name, t] of this.#tracked) {
      if (isAlive(t.pid)) continue;
      this.#tracked.delete(name);
      this.#changed?.(t.ref);
    }
  }

  #probeAll(): void {
    for (const t of this.#tracked.values()) {
      if (!t.url || t.probing) continue;
      t.probing = true;
      void healthy(t.url, this.#o.probeTimeoutMs).then((ok) => {
        t.probing = false;
        // A failed probe is not yet a death: observe() gives it its grace, then puts it down.
        if (!ok && this.#tracked.get(t.ref.name) === t) this.#changed?.(t.ref);
      });
    }
  }
}

export async function healthy(url: string, timeoutMs = 2_000): Promise<boolean> {
  return (await readiness(url, timeoutMs)) !== 'down';
}

/**
 * What the agent server's `/ready` says: `ready` (200: it serves its API), `initializing` (it
 * answers, 503: still restoring its stored conversations, or closing), `down` (no answer in time).
 * `/ready` and not `/health`: `/health` answers 200 as soon as it listens, before its conversations
 * are back, so a client sent there then would get 503s or find its conversation missing.
 */
export async function readiness(url: string, timeoutMs = 2_000): Promise<'ready' | 'initializing' | 'down'> {
  try {
    const res = await fetch(`${url}/ready`, { signal: AbortSignal.timeout(timeoutMs) });
    await res.body?.cancel();
    return res.ok ? 'ready' : 'initializing';
  } catch {
    return 'down';
  }
}
