// Command hooks as real child processes: stdin JSON, exit codes, JSON decisions, env, timeout.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { hookEnv, runCommandHook, type HookEventInput } from './executor.ts';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

const input: HookEventInput = { event_type: 'PreToolUse', tool_name: 'terminal', tool_input: { command: 'ls' }, tool_response: null, message: null, session_id: 's1', working_dir: '/w', metadata: {} };

function run(command: string, timeout = 30) {
  const cwd = mkdtempSync(join(tmpdir(), 'hook-exec-'));
  dirs.push(cwd);
  return runCommandHook({ command, timeout }, input, { cwd, env: hookEnv(input, cwd, { MY_TOKEN: 'tok-123' }), killGraceMs: 200 });
}

describe('runCommandHook', () => {
  it('passes the event on stdin and the OPENHANDS_* variables and secrets in the environment', async () => {
    const r = await run('cat; echo; echo "$OPENHANDS_EVENT_TYPE $OPENHANDS_TOOL_NAME $OPENHANDS_SESSION_ID $MY_TOKEN"; pwd');
    expect(r).toMatchObject({ success: true, blocked: false, exit_code: 0, error: null });
    const [json, vars, cwd] = r.stdout.trim().split('\n');
    expect(JSON.parse(json!)).toEqual(input);
    expect(vars).toBe('PreToolUse terminal s1 tok-123');
    expect(cwd).toContain('hook-exec-');
  });

  it('exit 2 blocks (stderr explains), another non-zero exit is a non-blocking error', async () => {
    expect(await run('echo no >&2; exit 2')).toMatchObject({ success: false, blocked: true, exit_code: 2, stderr: 'no\n', error: null });
    expect(await run('exit 1')).toMatchObject({ success: false, blocked: false, exit_code: 1, error: 'Hook exited with code 1' });
  });

  it('reads a JSON decision: deny and continue:false block; reason and additionalContext are kept', async () => {
    expect(await run(`echo '{"decision":"deny","reason":"not today"}'`)).toMatchObject({ blocked: true, decision: 'deny', reason: 'not today', success: true });
    expect(await run(`echo '{"continue":false}'`)).toMatchObject({ blocked: true });
    expect(await run(`echo '{"decision":"allow","additionalContext":"ctx"}'`)).toMatchObject({ blocked: false, decision: 'allow', additional_context: 'ctx' });
    expect(await run('echo plain text')).toMatchObject({ blocked: false, stdout: 'plain text\n', decision: null });
  });

  it('a hook past its timeout is killed with its process group: exit_code -1, an error', async () => {
    const r = await run('trap "" TERM; sleep 30 & wait', 1);
    expect(r).toMatchObject({ success: false, blocked: false, exit_code: -1, error: 'Hook timed out after 1 seconds' });
  });

  it('a command that does not exist is a non-blocking failure', async () => {
    const r = await run('/no/such/hook.sh');
    expect(r).toMatchObject({ success: false, blocked: false, exit_code: 127 });
  });
});
