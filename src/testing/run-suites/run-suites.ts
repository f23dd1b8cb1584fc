// `npm test` (hence `make test`): two vitest processes at the same time, each running its files one
// at a time as before: the e2e project and the unit project. Why: vitest runs
// availableParallelism() - 1 workers, which is ONE on the 2-core machines this project is tested on,
// so every file of both projects ran one after another (21 min, CI at c3f2346). The e2e suites stay
// in one run, file after file (fileParallelism off): they share the machine's network, cgroups and
// users. The real-node suites (e2e/node) ran beside the others for a while, and that broke both
// sides in one CI-like run: e2e/embedded/isolation found the host's own link-local addresses
// unreachable while the node's network (kube-router's iptables and ipsets) was up, and the story's
// kill -9 step failed. The unit files fill the spare CPU. Not under nice: on a machine busy with other work,
// a niced run starved for 20 s and more, past the unit tests' timeout.
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
  return [
    { name: 'e2e', args: ['--project', 'e2e'], live: true },
    { name: 'unit', args: ['--project', 'unit'], live: false },
  ];
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
