import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { combinedExit, plan, runSuites } from './run-suites.ts';

const run = promisify(execFile);

// A stand-in for vitest's bin: says when it started and ended, and exits with the code its run (the
// last argument) is given in the environment.
const dir = mkdtempSync(join(tmpdir(), 'agentyard-run-suites-'));
const fake = join(dir, 'fake-vitest.mjs');
writeFileSync(
  fake,
  `const project = process.argv.at(-1);
console.log(project + ' start ' + Date.now());
setTimeout(() => { console.error(project + ' end ' + Date.now()); process.exit(Number(process.env['EXIT_' + project] ?? 0)); }, 400);
`,
);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('npm test runs its vitest runs side by side', () => {
  it('runs unit and e2e at the same time, prints the buffered project whole, and fails if either fails', async () => {
    const out = new PassThrough();
    let printed = '';
    out.on('data', (d: Buffer) => (printed += d.toString()));
    process.env.EXIT_unit = '3';
    try {
      const finished = await runSuites(
        [
          { name: 'e2e', args: ['e2e'], live: false },
          { name: 'unit', args: ['unit'], live: false },
        ],
        fake,
        out,
      );
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
      for (const name of ['unit', 'e2e']) expect(printed).toMatch(new RegExp(`──── ${name} \\(ran beside the others; \\d+ s\\) ────\\n${name} start \\d+\\n${name} end \\d+\\n──── end of ${name} ────`));
    } finally {
      delete process.env.EXIT_unit;
    }
  });

  it('runs every test file in one vitest run, one after another', () => {
    expect(plan([])).toEqual([{ name: 'vitest', args: [], live: true }]);
  });

  it("the runs together list every test file of the repository once (vitest's own file lists)", async () => {
    const vitest = join(import.meta.dirname, '..', '..', '..', 'node_modules', 'vitest', 'vitest.mjs');
    const list = async (args: string[]) => {
      const { stdout } = await run(process.execPath, [vitest, 'list', '--filesOnly', ...args], { cwd: join(import.meta.dirname, '..', '..', '..'), env: { ...process.env, NO_COLOR: '1' } });
      return stdout.split('\n').filter((l) => l.trim());
    };
    const [all, ...parts] = await Promise.all([list([]), ...plan([]).map((r) => list(r.args))]);
    expect(all.length).toBeGreaterThan(200);
    expect(parts.every((p) => p.length > 0)).toBe(true);
    expect(parts.flat().sort()).toEqual(all.sort());
  }, 60_000);

  it('with arguments it is one plain vitest run; every run passing is exit 0', () => {
    expect(plan(['e2e/helm', '-t', 'render'])).toEqual([{ name: 'vitest', args: ['e2e/helm', '-t', 'render'], live: true }]);
    expect(combinedExit([0, 0])).toBe(0);
    expect(combinedExit([0, null])).toBe(1);
  });
});
