import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { afterAll, describe, expect, it } from 'vitest';
import { combinedExit, plan, runSuites } from './run-suites.ts';

// A stand-in for vitest's bin: says when it started and ended, and exits with the code its project
// is given in the environment.
const dir = mkdtempSync(join(tmpdir(), 'agentyard-run-suites-'));
const fake = join(dir, 'fake-vitest.mjs');
writeFileSync(
  fake,
  `const project = process.argv[process.argv.indexOf('--project') + 1];
console.log(project + ' start ' + Date.now());
setTimeout(() => { console.error(project + ' end ' + Date.now()); process.exit(Number(process.env['EXIT_' + project] ?? 0)); }, 400);
`,
);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('npm test runs the two projects side by side', () => {
  it('runs unit and e2e at the same time, prints the buffered project whole, and fails if either fails', async () => {
    const out = new PassThrough();
    let printed = '';
    out.on('data', (d: Buffer) => (printed += d.toString()));
    process.env.EXIT_unit = '3';
    try {
      const runs = plan([]);
      expect(runs.map((r) => [r.name, r.args.join(' '), r.live])).toEqual([
        ['e2e', '--project e2e', true],
        ['unit', '--project unit', false],
      ]);
      const finished = await runSuites(runs.map((r) => ({ ...r, live: false })), fake, out);
      expect(finished.map((f) => [f.name, f.code])).toEqual([
        ['e2e', 0],
        ['unit', 3],
      ]);
      expect(combinedExit(finished.map((f) => f.code))).toBe(3);
      const at = (what: string) => Number(new RegExp(`${what} (\\d+)`).exec(printed)?.[1]);
      // Each started before the other ended: they overlapped.
      expect(at('unit start')).toBeLessThan(at('e2e end'));
      expect(at('e2e start')).toBeLessThan(at('unit end'));
      // Each project's output is one block with its heading, not interleaved with the other's.
      for (const name of ['unit', 'e2e']) expect(printed).toMatch(new RegExp(`──── ${name} \\(ran beside the other project; \\d+ s\\) ────\\n${name} start \\d+\\n${name} end \\d+\\n──── end of ${name} ────`));
    } finally {
      delete process.env.EXIT_unit;
    }
  });

  it('with arguments it is one plain vitest run; every run passing is exit 0', () => {
    expect(plan(['e2e/helm', '-t', 'render'])).toEqual([{ name: 'vitest', args: ['e2e/helm', '-t', 'render'], live: true }]);
    expect(combinedExit([0, 0])).toBe(0);
    expect(combinedExit([0, null])).toBe(1);
  });
});
