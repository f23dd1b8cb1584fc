// `npm test` (hence `make test`): every test file in one vitest run. On the 2-core machines this
// project is tested on, vitest runs one worker, so the files run one after another (about 21 min),
// except the e2e-paired project's (vitest.config.ts), which run two at a time before all others.
// Two or three vitest processes side by side were tried (about 18-20 min): the e2e suites that probe
// the host's network (e2e/embedded/isolation) saw the other runs' servers come and go, and races
// under load failed unit tests, in CI-like runs. The runner keeps the side-by-side mode (runSuites
// takes several runs) for a split that is proven safe. Not under nice: on a busy machine a niced run
// starved past the unit tests' 20 s timeout.
//
// With arguments (`npm test -- e2e/helm`), it is plain `vitest run <arguments>`.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export interface SuiteRun {
  /** Printed as the heading of the project's output, and in the summary. */
  name: string;
  /** vitest arguments after `run`. */
  args: string[];
  /** Output streamed as it comes (the long pole); the others' is printed whole when they finish. */
  live: boolean;
}

/** What `npm test [-- args]` runs. */
export function plan(args: string[]): SuiteRun[] {
  if (args.length) return [{ name: 'vitest', args, live: true }];
  // One run, every file after the other: with the unit run beside the e2e run, the e2e suites that
  // probe the host's listeners (e2e/embedded/isolation) saw the unit tests' servers come and go, and
  // races under load failed unit tests (two CI-like runs at 0b581c1's parent and before).
  return [{ name: 'vitest', args: [], live: true }];
}

/** The exit code of the whole run: the first failure's, 0 when every run passed. */
export function combinedExit(codes: (number | null)[]): number {
  for (const c of codes) if (c !== 0) return c ?? 1;
  return 0;
}

export interface Finished {
  name: string;
  code: number | null;
  seconds: number;
}

/** Runs the plan; resolves with each run's exit code and wall time, in plan order. */
export async function runSuites(runs: SuiteRun[], vitest: string, out: NodeJS.WritableStream = process.stdout): Promise<Finished[]> {
  const children: ChildProcess[] = [];
  // Ctrl-C or a CI timeout stops both runs, not just the one in the foreground.
  const stop = (signal: NodeJS.Signals) => {
    for (const c of children) if (c.exitCode === null) c.kill(signal);
  };
  process.on('SIGINT', stop).on('SIGTERM', stop);
  // Colours as a terminal would get them, also for the buffered run.
  const env = { ...process.env, ...(process.stdout.isTTY && !process.env.NO_COLOR ? { FORCE_COLOR: '1' } : {}) };
  const finished = Promise.all(
    runs.map(
      (run) =>
        new Promise<Finished>((resolve) => {
          const started = Date.now();
          const child = spawn(process.execPath, [vitest, 'run', ...run.args], { stdio: ['ignore', run.live ? 'inherit' : 'pipe', run.live ? 'inherit' : 'pipe'], env });
          children.push(child);
          const chunks: Buffer[] = [];
          child.stdout?.on('data', (d: Buffer) => chunks.push(d));
          child.stderr?.on('data', (d: Buffer) => chunks.push(d));
          child.on('close', (code, signal) => {
            const seconds = Math.round((Date.now() - started) / 1000);
            if (!run.live) out.write(`\n──── ${run.name} (ran beside the others; ${seconds} s) ────\n${Buffer.concat(chunks).toString()}──── end of ${run.name} ────\n\n`);
            resolve({ name: run.name, code: code ?? (signal ? 1 : null), seconds });
          });
        }),
    ),
  );
  return finished.finally(() => process.off('SIGINT', stop).off('SIGTERM', stop));
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
  const vitest = join(root, 'node_modules', 'vitest', 'vitest.mjs');
  if (!existsSync(vitest)) {
    console.error(`no vitest at ${vitest}: run make deps`);
    process.exit(1);
  }
  const finished = await runSuites(plan(process.argv.slice(2)), vitest);
  if (finished.length > 1) console.log(`\nruns: ${finished.map((f) => `${f.name} ${f.code === 0 ? 'passed' : `FAILED (${f.code})`} in ${f.seconds} s`).join(', ')}`);
  process.exit(combinedExit(finished.map((f) => f.code)));
}
