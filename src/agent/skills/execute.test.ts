import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { renderCommands } from './execute.ts';

const dir = mkdtempSync(join(tmpdir(), 'skill-exec-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('inline commands in skills', () => {
  it('runs !`cmd` in the workspace, one after another, and keeps code and escaped commands', async () => {
    const text = [
      'Branch: !`echo main`',
      'Here: !`touch made && pwd`',
      'Made: !`ls made`',
      'Literal: \\!`echo no`',
      'Code: `echo no` and',
      '```',
      '!`echo never`',
      '```',
      'Fails: !`exit 3`',
    ].join('\n');
    expect(await renderCommands(text, dir)).toBe(
      ['Branch: main', `Here: ${dir}`, 'Made: made', 'Literal: !`echo no`', 'Code: `echo no` and', '```', '!`echo never`', '```', 'Fails: [Error: Command `exit 3` exited with code 3: ]'].join('\n'),
    );
  });

  it('never runs what follows an unclosed fence, and gives no server environment to commands', async () => {
    process.env['AGENTYARD_TEST_SECRET'] = 'do-not-leak';
    try {
      expect(await renderCommands('a !`echo "[$AGENTYARD_TEST_SECRET]"`\n```\n!`echo never`', dir)).toBe('a []\n```\n!`echo never`');
    } finally {
      delete process.env['AGENTYARD_TEST_SECRET'];
    }
  });
});
