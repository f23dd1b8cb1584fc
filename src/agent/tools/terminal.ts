// `terminal`: a persistent bash session per conversation. cwd and exported variables survive
// between calls because every command runs in the same shell; a random marker printed after each
// command tells where its output ends and carries the exit code and working directory.
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { optional, requireString, textContent, ToolArgumentError, type AgentTool, type ToolContext, type ToolResult } from './tool.ts';

/** Output the model sees is capped; the middle is cut, keeping the start and the end. */
export const MAX_OUTPUT_CHARS = 30_000;
const DEFAULT_TIMEOUT_S = 120;

export class TerminalSession {
  #shell: ChildProcessWithoutNullStreams | undefined;
  #buffer = '';
  #onData: (() => void) | undefined;
  readonly #cwd: string;
  readonly #env: NodeJS.ProcessEnv;

  constructor(cwd: string, env: Record<string, string>) {
    this.#cwd = cwd;
    this.#env = { PATH: process.env.PATH, HOME: process.env.HOME, LANG: 'C.UTF-8', TERM: 'dumb', PAGER: 'cat', GIT_PAGER: 'cat', ...env };
  }

  #ensure(): ChildProcessWithoutNullStreams {
    if (this.#shell && this.#shell.exitCode === null) return this.#shell;
    const shell = spawn('bash', ['--noprofile', '--norc'], { cwd: this.#cwd, env: this.#env, detached: true });
    shell.stdout.setEncoding('utf8');
    shell.stderr.setEncoding('utf8');
    const take = (chunk: string) => {
      this.#buffer += chunk;
      this.#onData?.();
    };
    shell.stdout.on('data', take);
    shell.stderr.on('data', take);
    shell.stdin.write('exec 2>&1; export PS1=""; stty -echo 2>/dev/null\n');
    this.#shell = shell;
    return shell;
  }

  /** Runs a command and waits for its marker, or for the timeout (the command then keeps running). */
  async run(command: string, timeoutMs: number, signal?: AbortSignal): Promise<{ output: string; exitCode: number; cwd: string; timedOut: boolean }> {
    const shell = this.#ensure();
    const marker = `__AGENTYARD_${randomBytes(8).toString('hex')}__`;
    this.#buffer = '';
    shell.stdin.write(`${command}\n__ay_rc=$?; printf '\\n${marker} %s %s\\n' "$__ay_rc" "$PWD"\n`);
    const pattern = new RegExp(`\\n?${marker} (\\d+) (.*)\\n`);
    const found = await this.#waitFor(pattern, timeoutMs, signal);
    if (!found) return { output: this.#drain(), exitCode: -1, cwd: this.#cwd, timedOut: true };
    const output = this.#buffer.slice(0, found.index);
    this.#buffer = this.#buffer.slice(found.index + found[0].length);
    return { output, exitCode: Number(found[1]), cwd: found[2] ?? this.#cwd, timedOut: false };
  }

  /** Sends raw input to a running program (`is_input`); `C-c` interrupts it. */
  async input(text: string, waitMs: number): Promise<string> {
    const shell = this.#ensure();
    if (text === 'C-c') {
      spawn('pkill', ['-INT', '-P', String(shell.pid)]);
    } else {
      shell.stdin.write(text.endsWith('\n') ? text : `${text}\n`);
    }
    await new Promise((r) => setTimeout(r, waitMs));
    return this.#drain();
  }

  async close(): Promise<void> {
    const shell = this.#shell;
    this.#shell = undefined;
    if (!shell || shell.exitCode !== null) return;
    const exited = new Promise<void>((resolve) => shell.once('exit', () => resolve()));
    try {
      process.kill(-shell.pid!, 'SIGKILL');
    } catch {
      shell.kill('SIGKILL');
    }
    await exited;
  }

  #drain(): string {
    const out = this.#buffer;
    this.#buffer = '';
    return out;
  }

  #waitFor(pattern: RegExp, timeoutMs: number, signal?: AbortSignal): Promise<RegExpExecArray | undefined> {
    return new Promise((resolve) => {
      const check = () => {
        const m = pattern.exec(this.#buffer);
        if (m) finish(m);
      };
      const finish = (m: RegExpExecArray | undefined) => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        this.#onData = undefined;
        resolve(m);
      };
      const onAbort = () => finish(undefined);
      const timer = setTimeout(() => finish(undefined), timeoutMs);
      signal?.addEventListener('abort', onAbort, { once: true });
      this.#onData = check;
      check();
    });
  }
}

export function capOutput(text: string): string {
  if (text.length <= MAX_OUTPUT_CHARS) return text;
  const half = Math.floor(MAX_OUTPUT_CHARS / 2);
  return `${text.slice(0, half)}\n<response clipped: ${text.length - MAX_OUTPUT_CHARS} characters omitted>\n${text.slice(-half)}`;
}

export function terminalTool(session: () => TerminalSession): AgentTool {
  return {
    name: 'terminal',
    definitionKind: 'TerminalTool',
    actionKind: 'TerminalAction',
    observationKind: 'TerminalObservation',
    description:
      'Execute a bash command in a persistent shell session (working directory and exported variables persist). ' +
      'Long-running commands time out after `timeout` seconds and keep running; send input to them with is_input=true (C-c interrupts). reset=true starts a fresh shell.',
    parameters: {
      type: 'object',
      properties: {
        command: { type: 'string', description: 'The bash command, or input text when is_input is true.' },
        is_input: { type: 'boolean', description: 'Send the command as input to the running process.' },
        timeout: { type: 'number', description: `Seconds to wait for the command (default ${DEFAULT_TIMEOUT_S}).` },
        reset: { type: 'boolean', description: 'Restart the shell before running.' },
        summary: { type: 'string', description: 'About 10 words describing the action.' },
      },
      required: ['command'],
    },
    toAction: (args) => ({
      kind: 'TerminalAction',
      command: requireString(args, 'command'),
      is_input: optional<boolean>(args, 'is_input', 'boolean') ?? false,
      timeout: optional<number>(args, 'timeout', 'number') ?? null,
      reset: optional<boolean>(args, 'reset', 'boolean') ?? false,
    }),
    async execute(action, ctx: ToolContext): Promise<ToolResult> {
      const command = String(action.command);
      const s = session();
      if (action.reset) await s.close();
      if (action.is_input) {
        if (!command) throw new ToolArgumentError('is_input needs the text to send');
        const out = ctx.mask(capOutput(await s.input(command, 1_000)));
        return result(ctx.mask(command), out, null, false, ctx.workspaceDir, `${out}\n[Input sent to the running process]`);
      }
      const timeoutMs = Math.max(1, Number(action.timeout ?? DEFAULT_TIMEOUT_S)) * 1000;
      const run = await s.run(command, timeoutMs, ctx.signal);
      const out = ctx.mask(capOutput(run.output.replace(/\n$/, '')));
      const suffix = run.timedOut
        ? `\n[The command did not finish within ${timeoutMs / 1000} s and is still running. Send input with is_input=true, C-c to interrupt, or reset=true.]`
        : `\n[Current working directory: ${run.cwd}]\n[Command finished with exit code ${run.exitCode}]`;
      return result(ctx.mask(command), out, run.timedOut ? null : run.exitCode, run.timedOut, run.cwd, out + suffix);
    },
  };
}

function result(command: string, output: string, exitCode: number | null, timedOut: boolean, cwd: string, text: string): ToolResult {
  return {
    observation: {
      kind: 'TerminalObservation',
      content: textContent(output),
      is_error: false,
      command,
      exit_code: exitCode,
      timeout: timedOut,
      metadata: { exit_code: exitCode ?? -1, pid: -1, working_dir: cwd, prefix: '', suffix: '' },
    },
    text,
    isError: false,
  };
}
