import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createMasker } from '../mask.ts';
import { capOutput, MAX_OUTPUT_CHARS, TerminalSession, terminalTool } from './terminal.ts';

const dirs: string[] = [];
const sessions: TerminalSession[] = [];
afterEach(async () => {
  for (const s of sessions.splice(0)) await s.close();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function setup(secrets: Record<string, string> = {}) {
  const dir = mkdtempSync(join(tmpdir(), 'terminal-'));
  dirs.push(dir);
  const session = new TerminalSession(dir, secrets);
  sessions.push(session);
  const tool = terminalTool(() => session);
  const ctx = { workspaceDir: dir, mask: createMasker(secrets) };
  const run = async (args: Record<string, unknown>) => tool.execute(tool.toAction(args), ctx);
  return { dir, run };
}

describe('terminal', () => {
  it('keeps the working directory and exported variables between calls', async () => {
    const { dir, run } = setup();
    await run({ command: 'mkdir -p sub && cd sub && export GREETING=hello' });
    const r = await run({ command: 'pwd; echo $GREETING' });
    expect(r.observation).toMatchObject({ kind: 'TerminalObservation', exit_code: 0, timeout: false, command: 'pwd; echo $GREETING' });
    expect(r.text).toContain(`${join(dir, 'sub')}\nhello`);
    expect(r.text).toContain('[Command finished with exit code 0]');
  });

  it('reports exit codes and stderr', async () => {
    const { run } = setup();
    const r = await run({ command: 'echo oops >&2; false' });
    expect(r.observation.exit_code).toBe(1);
    expect(r.text).toContain('oops');
  });

  it('returns on timeout with the command still running, and C-c interrupts it', async () => {
    const { run } = setup();
    const r = await run({ command: 'echo started; sleep 30', timeout: 1 });
    expect(r.observation).toMatchObject({ timeout: true, exit_code: null });
    expect(r.text).toContain('started');
    await run({ command: 'C-c', is_input: true });
    const after = await run({ command: 'echo alive' });
    expect(after.text).toContain('alive');
  });

  it('reset starts a fresh shell', async () => {
    const { run } = setup();
    await run({ command: 'export X=1' });
    const r = await run({ command: 'echo "x=$X"', reset: true });
    expect(r.text).toContain('x=\n');
  });

  it('exports secrets to commands and masks them in the output', async () => {
    const { run } = setup({ API_TOKEN: 'tok-12345-secret' });
    const r = await run({ command: 'echo "token is $API_TOKEN"' });
    expect(r.text).toContain('token is <secret-hidden>');
    expect(JSON.stringify(r.observation)).not.toContain('tok-12345-secret');
  });

  it('caps long output, keeping the start and the end', () => {
    const long = `${'a'.repeat(MAX_OUTPUT_CHARS)}END`;
    const capped = capOutput(long);
    expect(capped.length).toBeLessThan(MAX_OUTPUT_CHARS + 100);
    expect(capped.startsWith('aaa')).toBe(true);
    expect(capped.endsWith('END')).toBe(true);
  });
});
