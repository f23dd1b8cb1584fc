// `terminal`: commands in the conversation's persistent shell, with the OpenHands
// TerminalAction/TerminalObservation shapes and rules: one command at a time; a command that
// outlives its wait keeps running and is reached with an empty command (more output) or
// is_input (C-c, or a line of input); notes for the model go in metadata.prefix/suffix.
// Secrets (OpenHands): a command gets exactly the secrets whose names it mentions, exported for
// that command; the others are nowhere in the shell's environment.
import { randomBytes } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { hostname, userInfo } from 'node:os';
import { join } from 'node:path';
import type { TerminalAction, TerminalObservation } from '../../api/events/index.ts';
import { capOutput, MAX_OUTPUT_CHARS } from './output.ts';
import { SHELL_NAME, type TerminalSession, type WaitResult } from './terminal-session.ts';
import { optional, requireString, textContent, ToolArgumentError, type AgentTool, type ToolContext } from './tool.ts';

export interface TerminalToolOptions {
  /** The conversation's shell, created on first use. */
  session(): TerminalSession;
  /** A directory outside the workspace for the full text of capped outputs. */
  outputDir(): string;
  /** The conversation's secrets as they are now (secrets added later included). */
  secrets?(): Readonly<Record<string, string>>;
}

/**
 * The secrets a command names: their name as a whole word (`$TOKEN`, `${TOKEN}`, `TOKEN=`, `"TOKEN"`),
 * never as part of a longer name (`MY_TOKEN_2`). Case matters, as it does for the variable.
 */
export function secretsNamedIn(command: string, secrets: Readonly<Record<string, string>>): Record<string, string> {
  return Object.fromEntries(Object.entries(secrets).filter(([name]) => SHELL_NAME.test(name) && new RegExp(`(?<![A-Za-z0-9_])${name}(?![A-Za-z0-9_])`).test(command)));
}

const MORE_PREFIX = '[Below is the output of the previous command.]\n';
const SPECIAL_KEY = /^(C-[a-z]|UP|DOWN|LEFT|RIGHT|HOME|END|PGUP|PGDN|TAB|ESC|BS|ENTER)$/i;

const who = (() => {
  try {
    return { username: userInfo().username, hostname: hostname() };
  } catch {
    return { username: null, hostname: hostname() };
  }
})();

export function terminalTool(opts: TerminalToolOptions): AgentTool<TerminalAction> {
  const error = (command: string, text: string): TerminalObservation => ({
    kind: 'TerminalObservation',
    content: textContent(`ERROR: ${text}`),
    is_error: true,
    command,
    exit_code: -1,
    timeout: false,
  });

  /** The observation for a wait: masked and capped output, the full text kept on disk when capped. */
  const observe = (command: string, r: WaitResult, ctx: ToolContext, note: { prefix?: string; timeoutS?: number; noChangeS: number }): TerminalObservation => {
    const full = ctx.mask(r.output.replace(/\n$/, ''));
    let suffix = '';
    let saveDir: string | undefined;
    if (full.length > MAX_OUTPUT_CHARS) {
      saveDir = opts.outputDir();
      mkdirSync(saveDir, { recursive: true, mode: 0o700 });
      const file = join(saveDir, `terminal-${Date.now()}-${randomBytes(3).toString('hex')}.txt`);
      writeFileSync(file, full, { mode: 0o600 });
      suffix += `\n[Output truncated: the full output (${full.length} characters) is in ${file}]`;
    }
    if (r.end === 'no_change') {
      suffix += `\n[The command has no new output after ${note.noChangeS} seconds. You may wait longer to see additional output by sending empty command '', send other commands to interact with the current process, send keys ("C-c") to interrupt/kill the previous command before sending your new command, or use the timeout parameter in terminal for future commands.]`;
    } else if (r.end === 'hard_timeout') {
      suffix += `\n[The command timed out after ${note.timeoutS} seconds. You may wait longer to see additional output by sending empty command '', send other commands to interact with the current process, send keys to interrupt/kill the command, or use the timeout parameter in terminal for future commands.]`;
    } else if (r.end === 'aborted') {
      suffix += "\n[The run was stopped while the command was running; it may still be running. Send an empty command to see more of its output, or C-c with is_input=true to interrupt it.]";
    } else if (r.end === 'exited') {
      suffix += `\n[The shell exited with code ${r.exitCode}; the next command starts a new shell in the workspace, without the variables exported before.]`;
    }
    const finished = r.end === 'done' || r.end === 'exited';
    const exitCode = finished ? r.exitCode : -1;
    return {
      kind: 'TerminalObservation',
      content: textContent(capOutput(full)),
      is_error: false,
      command: ctx.mask(command),
      exit_code: exitCode,
      timeout: r.end === 'no_change' || r.end === 'hard_timeout',
      metadata: { exit_code: exitCode, pid: -1, ...who, working_dir: r.cwd, py_interpreter_path: null, prefix: note.prefix ?? '', suffix },
      ...(saveDir ? { full_output_save_dir: saveDir } : {}),
    };
  };

  return {
    name: 'terminal',
    definitionKind: 'TerminalTool',
    actionKind: 'TerminalAction',
    observationKind: 'TerminalObservation',
    description: [
      'Execute a bash command in a persistent shell session: the working directory and exported variables persist between calls.',
      '* One command at a time; chain several with && or ;. For long-running programs, run them in the background: `cmd > out.log 2>&1 &`.',
      '* A command that produces no new output for a while (or exceeds `timeout`) keeps running: send an empty command to see more output,',
      '  send text with is_input=true to answer a prompt, or send `C-c` with is_input=true to interrupt it.',
      '* reset=true starts a fresh shell (all variables and state are lost); use it when the terminal is unresponsive.',
      `* Output longer than ${MAX_OUTPUT_CHARS} characters is cut in the middle; the full text is saved to a file named in the result.`,
    ].join('\n'),
    parameters: {
      type: 'object',
      properties: {
        command: { type: 'string', description: "The bash command to execute. Empty ('') to see more output of the running command. With is_input=true: text to send to it, or C-c to interrupt it." },
        is_input: { type: 'boolean', description: 'If true, the command is input to the running process instead of a new command. Default false.' },
        timeout: { type: 'number', minimum: 0, description: 'Optional. Seconds to wait before returning while the command keeps running. Without it, the call returns once the command has produced no new output for 30 seconds.' },
        reset: { type: 'boolean', description: 'If true, start a fresh shell before running the command. Cannot be combined with is_input. Default false.' },
      },
      required: ['command'],
    },
    toAction(args) {
      const action: TerminalAction = {
        kind: 'TerminalAction',
        command: requireString(args, 'command'),
        is_input: optional<boolean>(args, 'is_input', 'boolean') ?? false,
        timeout: optional<number>(args, 'timeout', 'number') ?? null,
        reset: optional<boolean>(args, 'reset', 'boolean') ?? false,
      };
      if (action.timeout !== null && action.timeout !== undefined && action.timeout < 0) throw new ToolArgumentError('timeout must be a number of seconds >= 0');
      if (action.reset && action.is_input) throw new ToolArgumentError('reset=true cannot be combined with is_input=true');
      return action;
    },
    async execute(action, ctx) {
      const s = opts.session();
      const command = action.command;
      const signal = ctx.signal;
      const noChangeS = s.noChangeTimeoutMs / 1000;
      const hardTimeoutMs = action.timeout === null || action.timeout === undefined ? undefined : action.timeout * 1000;
      if (action.reset) {
        await s.close();
        if (!command.trim()) {
          const text = 'Terminal session has been reset. All previous environment variables and session state have been cleared.';
          return { kind: 'TerminalObservation', content: textContent(text), is_error: false, command: '', exit_code: -1, timeout: false };
        }
      }
      if (action.is_input) {
        if (!s.busy) return error(ctx.mask(command), 'No previous running command to interact with.');
        if (command.trim() === 'C-c') return observe(command, await s.interrupt(signal), ctx, { noChangeS });
        if (SPECIAL_KEY.test(command.trim())) return error(ctx.mask(command), `The key ${command.trim()} is not supported by this terminal; send C-c to interrupt the command, or use reset=true.`);
        return observe(command, await s.input(command, signal), ctx, { noChangeS });
      }
      if (!command.trim()) {
        if (!s.busy) return error('', 'No previous running command to retrieve logs from.');
        return observe(command, await s.more({ ...(hardTimeoutMs !== undefined ? { hardTimeoutMs } : {}), ...(signal ? { signal } : {}) }), ctx, { prefix: MORE_PREFIX, noChangeS, ...(action.timeout != null ? { timeoutS: action.timeout } : {}) });
      }
      if (s.busy) {
        return error(
          ctx.mask(command),
          `Your command "${ctx.mask(command)}" is NOT executed. The previous command is still running - you CANNOT send new commands until the previous command is completed. ` +
            "By setting is_input to true, you can interact with the current process: send an empty command '' to retrieve more output, text to answer it, or C-c to interrupt it.",
        );
      }
      const exports = secretsNamedIn(command, opts.secrets?.() ?? {});
      const r = await s.run(command, { exports, ...(hardTimeoutMs !== undefined ? { hardTimeoutMs } : {}), ...(signal ? { signal } : {}) });
      return observe(command, r, ctx, { noChangeS, ...(action.timeout != null ? { timeoutS: action.timeout } : {}) });
    },
  };
}
