// Inline `!`command`` in a skill's text runs when the skill is loaded through invoke_skill, and its
// output takes the command's place (OpenHands skills/execute.py): 10 s per command, 50 KB of
// output, code spans and fenced blocks never run (an unclosed fence runs to the end), `\!`x``
// stays literal. Commands run in the workspace with a minimal environment (no server secrets).
import { execFile } from 'node:child_process';

export const COMMAND_TIMEOUT_MS = 10_000;
export const MAX_COMMAND_OUTPUT = 50 * 1024;

const PATTERN = /(?<fenced>```[\s\S]*?(?:```|$))|(?<escaped>\\!`[^`]+`)|(?<inline>(?<!!)`[^`]+`)|!`(?<cmd>[^`]+)`/g;

function runCommand(command: string, cwd: string, signal?: AbortSignal): Promise<string> {
  const env = Object.fromEntries(Object.entries({ PATH: process.env['PATH'], HOME: process.env['HOME'], LANG: 'C.UTF-8' }).filter(([, v]) => v !== undefined)) as Record<string, string>;
  return new Promise((resolve) => {
    execFile('bash', ['-c', command], { cwd, env, timeout: COMMAND_TIMEOUT_MS, killSignal: 'SIGKILL', maxBuffer: 4 * MAX_COMMAND_OUTPUT, ...(signal ? { signal } : {}) }, (err, stdout, stderr) => {
      if (err) {
        const e = err as NodeJS.ErrnoException & { killed?: boolean; code?: number | string };
        if (e.killed && !signal?.aborted) return resolve(`[Error: Command \`${command}\` timed out after ${COMMAND_TIMEOUT_MS / 1000}s]`);
        if (typeof e.code === 'number') return resolve(`[Error: Command \`${command}\` exited with code ${e.code}: ${String(stderr).trim()}]`);
        return resolve(`[Error: Failed to execute command \`${command}\`: ${e.message}]`);
      }
      let out = String(stdout).trim();
      if (Buffer.byteLength(out) > MAX_COMMAND_OUTPUT) out = `${Buffer.from(out).subarray(0, MAX_COMMAND_OUTPUT).toString('utf8')}\n... [output truncated]`;
      resolve(out);
    });
  });
}

export async function renderCommands(content: string, cwd: string, signal?: AbortSignal): Promise<string> {
  const parts: (string | (() => Promise<string>))[] = [];
  let last = 0;
  for (const m of content.matchAll(PATTERN)) {
    parts.push(content.slice(last, m.index));
    last = m.index + m[0].length;
    const g = m.groups!;
    if (g['cmd'] !== undefined) {
      const cmd = g['cmd'];
      parts.push(() => runCommand(cmd, cwd, signal));
    }
    else if (g['escaped'] !== undefined) parts.push(g['escaped'].slice(1));
    else parts.push(m[0]);
  }
  parts.push(content.slice(last));
  // One after another, as written: a later command may depend on an earlier one's effect.
  let out = '';
  for (const p of parts) out += typeof p === 'string' ? p : await p();
  return out;
}
