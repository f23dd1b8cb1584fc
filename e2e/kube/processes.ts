// Child processes of a test cluster: output to a log file, stop() = SIGTERM then SIGKILL, and a
// last-chance SIGKILL of everything still running when the test process exits, so a crashed
// suite does not leave an etcd or API server behind.
import { spawn, type ChildProcess } from 'node:child_process';
import { openSync, closeSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
export { freePort } from '../../src/testing/ports.ts';

const live = new Set<ChildProcess>();
let exitHookInstalled = false;

function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.on('exit', () => {
    for (const child of live) child.kill('SIGKILL');
  });
}

export class ManagedProcess {
  readonly name: string;
  readonly logFile: string;
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  readonly #child: ChildProcess;
  #exit: { code: number | null; signal: NodeJS.Signals | null } | undefined;

  constructor(name: string, bin: string, args: string[], logFile: string, env?: NodeJS.ProcessEnv) {
    installExitHook();
    this.name = name;
    this.logFile = logFile;
    const fd = openSync(logFile, 'a');
    try {
      this.#child = spawn(bin, args, { stdio: ['ignore', fd, fd], ...(env ? { env } : {}) });
    } finally {
      closeSync(fd);
    }
    live.add(this.#child);
    this.exited = new Promise((resolve) => {
      const done = (code: number | null, signal: NodeJS.Signals | null): void => {
        live.delete(this.#child);
        this.#exit = { code, signal };
        resolve(this.#exit);
      };
      this.#child.once('exit', done);
      this.#child.once('error', () => done(-1, null));
    });
  }

  get pid(): number | undefined {
    return this.#child.pid;
  }

  get running(): boolean {
    return this.#exit === undefined;
  }

  /** Throws with the log tail when the process has already died (for readiness loops). */
  async assertRunning(): Promise<void> {
    if (this.running) return;
    throw new Error(`${this.name} exited (${JSON.stringify(this.#exit)}):\n${await this.logTail()}`);
  }

  async stop(graceMs = 10_000): Promise<void> {
    if (!this.running) return;
    this.#child.kill('SIGTERM');
    const timer = setTimeout(() => this.#child.kill('SIGKILL'), graceMs);
    await this.exited;
    clearTimeout(timer);
  }

  async logTail(lines = 40): Promise<string> {
    const text = await readFile(this.logFile, 'utf8').catch(() => '');
    return text.split('\n').slice(-lines).join('\n');
  }
}


/** Polls `check` until it returns true; every failure of `alive` aborts the wait at once. */
export async function waitFor(what: string, check: () => Promise<boolean>, alive: () => Promise<void>, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    await alive();
    try {
      if (await check()) return;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${last ? `: ${String(last)}` : ''}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
