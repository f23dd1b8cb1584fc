// Runs one command hook as a child process, Claude-Code/OpenHands protocol: the event as JSON on
// stdin; exit 0 = success (stdout may be a JSON decision), exit 2 = block, any other exit = a
// non-blocking error. The command runs in its own process group so a timeout takes its children too.
import { spawn } from 'node:child_process';
import type { HookDefinition } from '../../api/agent-server/hooks.ts';
import type { HookEventType } from '../../api/events/index.ts';

/** What a hook reads on stdin (OpenHands `HookEvent`). */
export interface HookEventInput {
  event_type: HookEventType;
  tool_name: string | null;
  tool_input: Record<string, unknown> | null;
  tool_response: Record<string, unknown> | null;
  message: string | null;
  session_id: string | null;
  working_dir: string | null;
  metadata: Record<string, unknown>;
}

export interface HookResult {
  success: boolean;
  blocked: boolean;
  exit_code: number;
  stdout: string;
  stderr: string;
  decision: 'allow' | 'deny' | null;
  reason: string | null;
  additional_context: string | null;
  error: string | null;
}

export interface RunOptions {
  cwd: string;
  /** The whole environment of the child (see hookEnv). */
  env: Record<string, string>;
  /** Grace between SIGTERM and SIGKILL on timeout. Default 1 s, as OpenHands. */
  killGraceMs?: number;
}

/** Output kept per stream; the rest is dropped (an event holds at most 50k characters anyway). */
const MAX_CAPTURE = 1024 * 1024;

/** Only what a shell needs: the agent server's own environment holds keys hooks must not see. */
export function baseEnv(): Record<string, string> {
  const base = { PATH: process.env.PATH, HOME: process.env.HOME, USER: process.env.USER, LANG: 'C.UTF-8', TERM: 'dumb' };
  return Object.fromEntries(Object.entries(base).filter((e): e is [string, string] => e[1] !== undefined));
}

/** The environment of a hook: base, the conversation's secrets, then the OPENHANDS_* variables. */
export function hookEnv(input: HookEventInput, projectDir: string, secrets: Readonly<Record<string, string>>): Record<string, string> {
  return {
    ...baseEnv(),
    ...secrets,
    OPENHANDS_PROJECT_DIR: projectDir,
    OPENHANDS_SESSION_ID: input.session_id ?? '',
    OPENHANDS_EVENT_TYPE: input.event_type,
    ...(input.tool_name ? { OPENHANDS_TOOL_NAME: input.tool_name } : {}),
  };
}

function failed(error: string): HookResult {
  return { success: false, blocked: false, exit_code: -1, stdout: '', stderr: '', decision: null, reason: null, additional_context: null, error };
}

/** Reads `decision`, `reason`, `additionalContext` and `continue` from a JSON stdout; other stdout is left as is. */
function applyJsonOutput(result: HookResult): void {
  if (!result.stdout.trim()) return;
  let out: unknown;
  try {
    out = JSON.parse(result.stdout);
  } catch {
    return;
  }
  if (typeof out !== 'object' || out === null || Array.isArray(out)) return;
  const o = out as Record<string, unknown>;
  if (typeof o['decision'] === 'string') {
    const d = o['decision'].toLowerCase();
    if (d === 'allow') result.decision = 'allow';
    if (d === 'deny') {
      result.decision = 'deny';
      result.blocked = true;
    }
  }
  if ('reason' in o && o['reason'] != null) result.reason = String(o['reason']);
  if ('additionalContext' in o && o['additionalContext'] != null) result.additional_context = String(o['additionalContext']);
  if ('continue' in o && !o['continue']) result.blocked = true;
}

/**
 * Runs a command hook to completion (or its timeout: SIGTERM to the group, SIGKILL after the
 * grace, exit_code -1). Never rejects: a hook that cannot start is a failed, non-blocking result.
 * An `async` hook is started and not awaited; it is killed at its timeout all the same.
 */
export function runCommandHook(hook: HookDefinition, input: HookEventInput, opts: RunOptions): Promise<HookResult> {
  const command = hook.command ?? '';
  if (!command) return Promise.resolve(failed("'command' is required when type is 'command'"));
  const timeoutMs = (hook.timeout ?? 60) * 1000;
  return new Promise((resolve) => {
    let child: ReturnType<typeof spawn>;
    try {
      child = spawn('/bin/sh', ['-c', command], { cwd: opts.cwd, env: opts.env, detached: true, stdio: ['pipe', hook.async ? 'ignore' : 'pipe', hook.async ? 'ignore' : 'pipe'] });
    } catch (err) {
      resolve(failed(`Hook execution failed: ${(err as Error).message}`));
      return;
    }
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    let outLen = 0;
    let errLen = 0;
    child.stdout?.on('data', (b: Buffer) => {
      if (outLen < MAX_CAPTURE) out.push(b);
      outLen += b.length;
    });
    child.stderr?.on('data', (b: Buffer) => {
      if (errLen < MAX_CAPTURE) err.push(b);
      errLen += b.length;
    });
    // A hook that does not read its stdin closes the pipe early: that is not an error.
    child.stdin?.on('error', () => {});
    child.stdin?.end(JSON.stringify(input));

    let timedOut = false;
    let killTimer: NodeJS.Timeout | undefined;
    const group = (signal: NodeJS.Signals) => {
      try {
        if (child.pid) process.kill(-child.pid, signal);
      } catch {
        // already gone
      }
    };
    const timer = setTimeout(() => {
      timedOut = true;
      group('SIGTERM');
      killTimer = setTimeout(() => group('SIGKILL'), opts.killGraceMs ?? 1000);
    }, timeoutMs);

    let spawnError: Error | undefined;
    child.once('error', (e) => (spawnError = e));
    child.once('close', (code, signal) => {
      clearTimeout(timer);
      clearTimeout(killTimer);
      if (hook.async) return;
      if (spawnError) return resolve(failed(`Hook execution failed: ${spawnError.message}`));
      const stdout = Buffer.concat(out).toString('utf8').slice(0, MAX_CAPTURE);
      const stderr = Buffer.concat(err).toString('utf8').slice(0, MAX_CAPTURE);
      if (timedOut) return resolve({ ...failed(`Hook timed out after ${hook.timeout ?? 60} seconds`), stdout, stderr });
      const exit = code ?? (signal ? -1 : 0);
      const result: HookResult = { success: exit === 0, blocked: exit === 2, exit_code: exit, stdout, stderr, decision: null, reason: null, additional_context: null, error: null };
      applyJsonOutput(result);
      if (exit !== 0 && exit !== 2) result.error = `Hook exited with code ${exit}${signal ? ` (signal ${signal})` : ''}`;
      resolve(result);
    });
    if (hook.async) {
      child.unref();
      timer.unref();
      resolve({ success: true, blocked: false, exit_code: 0, stdout: '', stderr: '', decision: null, reason: null, additional_context: null, error: null });
    }
  });
}
