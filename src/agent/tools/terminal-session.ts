// A persistent bash process per conversation. cwd and exported variables survive between calls
// because every command runs in the same shell. Secrets are never part of the shell's environment:
// a command gets the ones it names exported on its own line, and they are unset when it ends. Each command is handed to `eval` as one ANSI-C
// quoted line followed by a printf of a random marker carrying the exit code and working
// directory; bash reads its input a line at a time, so a command that reads stdin sees only what is
// sent later as input, never the marker. A command that outlives its wait keeps running: its
// output goes on collecting until the marker shows up.
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { sandboxBaseEnv } from '../sandbox-env.ts';

export interface TerminalSessionOptions {
  /** Return after this long without new output, the command still running (OpenHands: 30 s). */
  noChangeTimeoutMs?: number;
  /** How long input sent to a running program waits for output to settle. */
  inputSettleMs?: number;
}

export const DEFAULT_NO_CHANGE_TIMEOUT_MS = 30_000;
const DEFAULT_INPUT_SETTLE_MS = 2_000;
/** Beyond this much unread output the middle is dropped, so `yes` cannot exhaust memory. */
const MAX_BUFFER_CHARS = 4_000_000;

/** How a wait ended: the command finished, went quiet, hit its hard timeout, the run was aborted, or the shell died. */
export type WaitEnd = 'done' | 'no_change' | 'hard_timeout' | 'aborted' | 'exited';

export interface WaitResult {
  end: WaitEnd;
  output: string;
  /** The command's exit code when `end` is done or exited, else -1 (still running). */
  exitCode: number;
  cwd: string;
}

interface Pending {
  pattern: RegExp;
}

/** `$'...'` quoting: any text becomes one line bash reads back byte for byte. */
export function ansiCQuote(text: string): string {
  const body = text.replace(/[\\'\x00-\x1f\x7f]/g, (c) => {
    if (c === '\\') return '\\\\';
    if (c === "'") return "\\'";
    if (c === '\n') return '\\n';
    if (c === '\t') return '\\t';
    return `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`;
  });
  return `$'${body}'`;
}

/** A name bash can export (and a command can name). */
export const SHELL_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

export class TerminalSession {
  readonly #initialCwd: string;
  readonly #env: NodeJS.ProcessEnv;
  readonly #noChangeMs: number;
  readonly #inputSettleMs: number;
  #shell: ChildProcessWithoutNullStreams | undefined;
  #buffer = '';
  #scanFrom = 0;
  #onChange: (() => void) | undefined;
  #pending: Pending | undefined;
  /** The shell's output streams have ended (after it exited): nothing more will arrive. */
  #drained = false;
  #cwd: string;

  constructor(cwd: string, opts: TerminalSessionOptions = {}) {
    this.#initialCwd = cwd;
    this.#cwd = cwd;
    // Only what a shell needs: the agent server's own environment holds keys the agent must not see.
    this.#env = sandboxBaseEnv();
    this.#noChangeMs = opts.noChangeTimeoutMs ?? DEFAULT_NO_CHANGE_TIMEOUT_MS;
    this.#inputSettleMs = opts.inputSettleMs ?? DEFAULT_INPUT_SETTLE_MS;
  }

  /** A command is still running from an earlier call. */
  get busy(): boolean {
    return this.#pending !== undefined && this.#alive();
  }

  get cwd(): string {
    return this.#cwd;
  }

  get noChangeTimeoutMs(): number {
    return this.#noChangeMs;
  }

  /**
   * Starts a command and waits for it: until it ends, `hardTimeoutMs` passes, or (without one) it
   * goes quiet. `exports` are exported for this command only (and the programs it starts): once it
   * ends each is unset again, unless the command gave it another value of its own.
   */
  async run(command: string, opts: { hardTimeoutMs?: number; signal?: AbortSignal; exports?: Readonly<Record<string, string>> } = {}): Promise<WaitResult> {
    if (this.busy) throw new Error('TerminalSession.run while a command is running; check busy first');
    const shell = this.#ensure();
    const marker = `__AGENTYARD_${randomBytes(8).toString('hex')}__`;
    this.#take();
    this.#pending = { pattern: new RegExp(`\\n?${marker} (\\d+) ([^\\n]*)\\n`, 'g') };
    const vars = Object.entries(opts.exports ?? {}).filter(([k]) => SHELL_NAME.test(k));
    const before = vars.map(([k, v]) => `export ${k}=${ansiCQuote(v)}; `).join('');
    const after = vars.map(([k, v]) => `[ "\${${k}-}" = ${ansiCQuote(v)} ] && unset ${k}; `).join('');
    // One line: bash has read all of it before the command starts, so stdin holds only later input
    // (secret values travel on the shell's stdin, never in a process's arguments).
    shell.stdin.write(`${before}eval ${ansiCQuote(command)}; __ay_rc=$?; ${after}printf '\\n${marker} %s %s\\n' "$__ay_rc" "$PWD"\n`);
    return this.#wait(opts.hardTimeoutMs, opts.signal);
  }

  /** More output of the running command (the model sent an empty command). */
  async more(opts: { hardTimeoutMs?: number; signal?: AbortSignal } = {}): Promise<WaitResult> {
    return this.#wait(opts.hardTimeoutMs, opts.signal);
  }

  /** Sends a line of input to the running program and waits for its output to settle. */
  async input(text: string, signal?: AbortSignal): Promise<WaitResult> {
    this.#ensure().stdin.write(text.endsWith('\n') ? text : `${text}\n`);
    return this.#wait(undefined, signal, this.#inputSettleMs);
  }

  /** Ctrl-C: SIGINT to every process below the shell (a terminal would signal its foreground group). */
  async interrupt(signal?: AbortSignal): Promise<WaitResult> {
    const pid = this.#shell?.pid;
    if (pid !== undefined) {
      for (const child of descendants(pid)) {
        try {
          process.kill(child, 'SIGINT');
        } catch {
          // already gone
        }
      }
    }
    return this.#wait(undefined, signal, this.#inputSettleMs);
  }

  async close(): Promise<void> {
    const shell = this.#shell;
    this.#shell = undefined;
    this.#pending = undefined;
    this.#cwd = this.#initialCwd;
    this.#take();
    if (!shell || shell.exitCode !== null || shell.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => shell.once('exit', () => resolve()));
    try {
      // The whole process group: background jobs die with the shell.
      process.kill(-shell.pid!, 'SIGKILL');
    } catch {
      shell.kill('SIGKILL');
    }
    await exited;
  }

  #alive(): boolean {
    return this.#shell !== undefined && this.#shell.exitCode === null && this.#shell.signalCode === null;
  }

  #ensure(): ChildProcessWithoutNullStreams {
    if (this.#shell && this.#alive()) return this.#shell;
    this.#pending = undefined;
    this.#drained = false;
    this.#cwd = this.#initialCwd;
    const shell = spawn('bash', ['--noprofile', '--norc'], { cwd: this.#initialCwd, env: this.#env, detached: true });
    shell.stdout.setEncoding('utf8');
    shell.stderr.setEncoding('utf8');
    const take = (chunk: string) => {
      this.#append(chunk);
      this.#onChange?.();
    };
    shell.stdout.on('data', take);
    shell.stderr.on('data', take);
    shell.on('close', () => {
      if (this.#shell === shell) this.#drained = true;
      this.#onChange?.();
    });
    shell.stdin.on('error', () => undefined); // EPIPE after the shell died; the exit is reported instead
    shell.stdin.write('exec 2>&1\n');
    this.#shell = shell;
    return shell;
  }

  #append(chunk: string): void {
    this.#buffer += chunk;
    if (this.#buffer.length > MAX_BUFFER_CHARS) {
      const half = MAX_BUFFER_CHARS / 4;
      const dropped = this.#buffer.length - 2 * half;
      this.#buffer = `${this.#buffer.slice(0, half)}\n[... ${dropped} characters of output dropped ...]\n${this.#buffer.slice(-half)}`;
      this.#scanFrom = half;
    }
  }

  /** Everything collected so far, leaving the buffer empty. */
  #take(): string {
    const out = this.#buffer;
    this.#buffer = '';
    this.#scanFrom = 0;
    return out;
  }

  #finished(): WaitResult | undefined {
    const pending = this.#pending;
    if (!pending) return undefined;
    pending.pattern.lastIndex = Math.max(0, this.#scanFrom - 64);
    const m = pending.pattern.exec(this.#buffer);
    if (!m) {
      this.#scanFrom = this.#buffer.length;
      return undefined;
    }
    const output = this.#buffer.slice(0, m.index);
    this.#buffer = this.#buffer.slice(m.index + m[0].length);
    this.#scanFrom = 0;
    this.#pending = undefined;
    this.#cwd = m[2] || this.#cwd;
    return { end: 'done', output, exitCode: Number(m[1]), cwd: this.#cwd };
  }

  #wait(hardTimeoutMs: number | undefined, signal: AbortSignal | undefined, quietMs = this.#noChangeMs): Promise<WaitResult> {
    return new Promise((resolve) => {
      let quietTimer: NodeJS.Timeout | undefined;
      let hardTimer: NodeJS.Timeout | undefined;
      const finish = (result: WaitResult) => {
        clearTimeout(quietTimer);
        clearTimeout(hardTimer);
        signal?.removeEventListener('abort', onAbort);
        this.#onChange = undefined;
        resolve(result);
      };
      const stillRunning = (end: WaitEnd) => finish({ end, output: this.#take(), exitCode: -1, cwd: this.#cwd });
      const onAbort = () => stillRunning('aborted');
      const armQuiet = () => {
        if (hardTimeoutMs !== undefined) return; // an explicit timeout replaces the no-output one
        clearTimeout(quietTimer);
        quietTimer = setTimeout(() => stillRunning('no_change'), quietMs);
      };
      const check = () => {
        const done = this.#finished();
        if (done) return finish(done);
        const shell = this.#shell;
        if (!this.#alive()) {
          if (shell && !this.#drained) return; // its last output is still on the way
          this.#pending = undefined;
          return finish({ end: 'exited', output: this.#take(), exitCode: shell?.exitCode ?? -1, cwd: this.#cwd });
        }
        armQuiet();
      };
      if (signal?.aborted) return onAbort();
      signal?.addEventListener('abort', onAbort, { once: true });
      if (hardTimeoutMs !== undefined) hardTimer = setTimeout(() => stillRunning('hard_timeout'), hardTimeoutMs);
      this.#onChange = check;
      check();
    });
  }
}

/** Every process below `pid`, from /proc (Linux); empty where /proc is not available. */
function descendants(pid: number): number[] {
  const out: number[] = [];
  const visit = (p: number) => {
    let tasks: string[];
    try {
      tasks = readdirSync(`/proc/${p}/task`);
    } catch {
      return;
    }
    for (const t of tasks) {
      let children: string;
      try {
        children = readFileSync(`/proc/${p}/task/${t}/children`, 'utf8');
      } catch {
        continue;
      }
      for (const c of children.split(/\s+/).filter(Boolean).map(Number)) {
        out.push(c);
        visit(c);
      }
    }
  };
  visit(pid);
  return out;
}
