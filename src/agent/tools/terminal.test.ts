import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { TerminalObservation } from '../../api/events/index.ts';
import { createMasker } from '../mask.ts';
import { capOutput, MAX_OUTPUT_CHARS, observationText } from './output.ts';
import { ansiCQuote, TerminalSession, type TerminalSessionOptions } from './terminal-session.ts';
import { secretsNamedIn, terminalTool } from './terminal.ts';
import { ToolArgumentError } from './tool.ts';

const dirs: string[] = [];
const sessions: TerminalSession[] = [];
afterEach(async () => {
  for (const s of sessions.splice(0)) await s.close();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function tempDir(prefix: string) {
  const d = mkdtempSync(join(tmpdir(), prefix));
  dirs.push(d);
  return d;
}

function setup(opts: { secrets?: Record<string, string>; session?: TerminalSessionOptions } = {}) {
  const dir = tempDir('terminal-');
  const outputs = tempDir('terminal-out-');
  const session = new TerminalSession(dir, { noChangeTimeoutMs: 400, inputSettleMs: 300, ...opts.session });
  sessions.push(session);
  const tool = terminalTool({ session: () => session, outputDir: () => outputs, secrets: () => opts.secrets ?? {} });
  const mask = createMasker(opts.secrets ?? {});
  const run = async (args: Record<string, unknown>, signal?: AbortSignal) => {
    const observation = (await tool.execute(tool.toAction(args), { workspaceDir: dir, mask, ...(signal ? { signal } : {}) })) as TerminalObservation;
    return { observation, text: observationText(observation) };
  };
  return { dir, outputs, session, tool, run };
}

/** Polls until `check` holds (a wait, not a timing assertion). */
async function until(check: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 200; i++) {
    if (check()) return;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`never happened: ${what}`);
}

describe('terminal', () => {
  it('keeps the working directory and exported variables between calls', async () => {
    const { dir, run } = setup();
    await run({ command: 'mkdir -p sub && cd sub && export GREETING=hello' });
    const r = await run({ command: 'pwd; echo $GREETING' });
    expect(r.observation).toMatchObject({ kind: 'TerminalObservation', exit_code: 0, timeout: false, is_error: false, command: 'pwd; echo $GREETING', metadata: { exit_code: 0, working_dir: join(dir, 'sub') } });
    expect(r.text).toBe(`${join(dir, 'sub')}\nhello\n[Current working directory: ${join(dir, 'sub')}]\n[Command finished with exit code 0]`);
  });

  it('reports exit codes and stderr, and runs multi-line commands with quotes and heredocs verbatim', async () => {
    const { run } = setup();
    const failed = await run({ command: 'echo oops >&2; false' });
    expect(failed.observation.exit_code).toBe(1);
    expect(failed.text).toContain('oops');
    const heredoc = await run({ command: "cat <<'EOF'\na 'b' \"c\" \\ $HOME\tx\nEOF\necho after" });
    expect(heredoc.observation.content).toEqual([{ type: 'text', text: "a 'b' \"c\" \\ $HOME\tx\nafter" }]);
    expect(ansiCQuote("it's\n")).toBe("$'it\\'s\\n'");
  });

  it('a command reading stdin gets the input sent later, never the end marker', async () => {
    const { run } = setup();
    const waiting = await run({ command: 'read answer; echo "got $answer"' });
    expect(waiting.observation).toMatchObject({ timeout: true, exit_code: -1 });
    expect(waiting.text).toContain('has no new output after 0.4 seconds');
    const answered = await run({ command: 'forty-two', is_input: true });
    expect(answered.observation).toMatchObject({ exit_code: 0, timeout: false });
    expect(answered.text).toContain('got forty-two');
  });

  it('refuses a new command while one runs; C-c interrupts it and the shell goes on', async () => {
    const { run, session } = setup();
    const r = await run({ command: 'echo started; sleep 30' });
    expect(r.observation).toMatchObject({ timeout: true, exit_code: -1 });
    expect(r.text).toContain('started');
    expect(session.busy).toBe(true);
    const refused = await run({ command: 'echo next' });
    expect(refused.observation.is_error).toBe(true);
    expect(refused.text).toContain('is NOT executed');
    const interrupted = await run({ command: 'C-c', is_input: true });
    expect(interrupted.observation.exit_code).toBe(130);
    expect(session.busy).toBe(false);
    expect((await run({ command: 'echo alive' })).text).toContain('alive');
  });

  it('an explicit timeout returns while the command runs on; an empty command collects the rest', async () => {
    const { run } = setup({ session: { noChangeTimeoutMs: 10_000 } });
    const r = await run({ command: 'echo begin; sleep 0.6; echo end', timeout: 0.2 });
    expect(r.observation).toMatchObject({ timeout: true, exit_code: -1 });
    expect(r.text).toContain('The command timed out after 0.2 seconds');
    const rest = await run({ command: '' });
    expect(rest.observation).toMatchObject({ exit_code: 0, timeout: false, metadata: { prefix: '[Below is the output of the previous command.]\n' } });
    expect(rest.text).toContain('end');
  });

  it('answers input, an empty command or a special key without a running command with clear errors', async () => {
    const { run, tool } = setup();
    expect((await run({ command: 'y', is_input: true })).text).toContain('No previous running command to interact with');
    expect((await run({ command: '' })).text).toContain('No previous running command to retrieve logs from');
    await run({ command: 'sleep 30' });
    expect((await run({ command: 'C-z', is_input: true })).text).toMatch(/not supported/);
    expect(() => tool.toAction({ command: 'x', is_input: true, reset: true })).toThrow(ToolArgumentError);
    expect(() => tool.toAction({ command: 'x', timeout: -1 })).toThrow(ToolArgumentError);
    expect(() => tool.toAction({ timeout: 3 })).toThrow(/command/);
  });

  it('reset starts a fresh shell, with or without a command', async () => {
    const { run } = setup();
    await run({ command: 'export X=1; cd /' });
    const r = await run({ command: 'echo "x=$X"; pwd', reset: true });
    expect(r.text).toMatch(/^x=\n/);
    expect(r.observation.metadata?.working_dir).not.toBe('/');
    expect((await run({ command: '', reset: true })).text).toContain('Terminal session has been reset');
  });

  it('a shell that exits is reported, and the next command gets a new one', async () => {
    const { dir, run } = setup();
    await run({ command: 'cd /tmp' });
    const r = await run({ command: 'echo bye; exit 3' });
    expect(r.observation.exit_code).toBe(3);
    expect(r.text).toContain('bye');
    expect(r.text).toContain('The shell exited with code 3');
    expect((await run({ command: 'pwd' })).text).toContain(dir);
  });

  it('an aborted run returns at once, the command still running', async () => {
    const { run, session } = setup({ session: { noChangeTimeoutMs: 30_000 } });
    const abort = new AbortController();
    const pending = run({ command: 'echo go; sleep 30' }, abort.signal);
    await until(() => session.busy, 'command started');
    abort.abort();
    const r = await pending;
    expect(r.observation).toMatchObject({ exit_code: -1, timeout: false });
    expect(r.text).toContain('The run was stopped while the command was running');
    expect(session.busy).toBe(true);
  });

  it('exports secrets to commands and masks them in the output and the command', async () => {
    const { run } = setup({ secrets: { API_TOKEN: 'tok-12345-secret' } });
    const r = await run({ command: 'echo "token is $API_TOKEN"; printf %s tok-12345-secret | base64' });
    expect(r.text).toContain('token is <secret-hidden>\n<secret-hidden>');
    const again = await run({ command: 'echo tok-12345-secret' });
    expect(again.observation.command).toBe('echo <secret-hidden>');
    expect(JSON.stringify([r.observation, again.observation])).not.toContain('tok-12345-secret');
  });

  it('exports a secret only to the commands that name it, and only while they run', async () => {
    const { run } = setup({ secrets: { API_TOKEN: 'tok-12345-secret', OTHER: 'other-9876' } });
    const out = (r: { observation: TerminalObservation }) => (r.observation.content as { text: string }[])[0]!.text;
    // Not named: neither the variable nor its value is in the environment.
    const unnamed = await run({ command: 'env | grep -c -e "^API_TOK" -e "^OTH" -e 12345 -e 9876; true' });
    expect(out(unnamed).trim()).toBe('0');
    const named = await run({ command: 'echo "[${API_TOKEN}]"; env | grep -c "^API_TOKEN="; env | grep -c "^OTH"; bash -c \'printf %s "$API_TOKEN" | wc -c\'' });
    expect(out(named).split('\n')).toEqual(['[<secret-hidden>]', '1', '0', '16']);
    // Gone again for the next command, unless it names it too; a value the command set itself stays.
    expect(out(await run({ command: 'env | grep -c "^API_TOK"; true' })).trim()).toBe('0');
    await run({ command: 'export OTHER=mine' });
    expect(out(await run({ command: 'env | grep "^OTH"' })).trim()).toBe('OTHER=mine');
  });

  it('finds secret names as whole words only', () => {
    const secrets = { GITHUB_TOKEN: 'a', TOKEN: 'b', lower: 'c', 'not-a-name': 'd' };
    expect(Object.keys(secretsNamedIn('git push https://x:$GITHUB_TOKEN@host', secrets))).toEqual(['GITHUB_TOKEN']);
    expect(Object.keys(secretsNamedIn('echo ${TOKEN}; GITHUB_TOKEN= x', secrets)).sort()).toEqual(['GITHUB_TOKEN', 'TOKEN']);
    expect(Object.keys(secretsNamedIn('echo $MY_GITHUB_TOKEN_2 $TOKENS $LOWER not-a-name', secrets))).toEqual([]);
    expect(Object.keys(secretsNamedIn('echo "$lower"', secrets))).toEqual(['lower']);
  });

  it('caps long output, keeping start and end, with the full masked text in a file outside the workspace', async () => {
    const { dir, outputs, run } = setup({ secrets: { KEY: 'sekrit-value' } });
    const r = await run({ command: 'echo "first $KEY"; seq 1 20000; echo last-line' });
    const body = (r.observation.content as { text: string }[])[0]!.text;
    expect(body.length).toBeLessThan(MAX_OUTPUT_CHARS + 100);
    expect(body.startsWith('first <secret-hidden>')).toBe(true);
    expect(body.endsWith('last-line')).toBe(true);
    expect(r.observation.full_output_save_dir).toBe(outputs);
    const file = /the full output \(\d+ characters\) is in (\S+)\]/.exec(r.text)?.[1];
    expect(file?.startsWith(outputs)).toBe(true);
    expect(file?.startsWith(dir)).toBe(false);
    const full = readFileSync(file!, 'utf8');
    expect(full).toContain('\n12345\n');
    expect(full).not.toContain('sekrit-value');
    expect(capOutput('abcdef', 4)).toBe('ab\n<response clipped: 2 characters omitted>\nef');
  });

  it('close kills the shell and its background jobs', async () => {
    const { run, session } = setup();
    const r = await run({ command: 'sleep 300 & echo $!' });
    const pid = Number((r.observation.content as { text: string }[])[0]!.text.trim());
    expect(() => process.kill(pid, 0)).not.toThrow();
    await session.close();
    await until(() => {
      try {
        process.kill(pid, 0);
        return existsSync(`/proc/${pid}`) && readFileSync(`/proc/${pid}/stat`, 'utf8').split(' ')[2] === 'Z';
      } catch {
        return true;
      }
    }, 'background job gone');
  });
});
