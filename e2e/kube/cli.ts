// `agentyard <command>` as a real child process for the cluster suites: its output kept line by
// line (for readiness and for failure messages), killed with any signal, and never left behind.
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { eventually } from '../embedded/harness.ts';

const CLI = join(import.meta.dirname, '../../src/cli/main.ts');
/** Preload that resolves the test sandbox domain to loopback inside the child (see host-proxy.ts). */
const LOOPBACK = join(import.meta.dirname, 'loopback-preload.ts');

export interface CliProcess {
  child: ChildProcess;
  lines: string[];
  exited: Promise<number | null>;
  /** Sends `signal` (SIGTERM by default) and waits for the exit; nothing if already exited. */
  stop(signal?: NodeJS.Signals): Promise<void>;
}

const live = new Set<ChildProcess>();
process.on('exit', () => {
  for (const child of live) child.kill('SIGKILL');
});

export interface CliOptions {
  env: Record<string, string>;
  /** Resolve `*.<domain>` to 127.0.0.1 in the child, where the test host proxy listens. */
  loopbackDomain?: string;
  /** The host proxy's port: in-cluster Service names (`*.svc`) connect there in the child. */
  serviceProxyPort?: number;
}

export function runCli(args: string[], opts: CliOptions): CliProcess {
  const preload = opts.loopbackDomain ? ['--import', LOOPBACK] : [];
  const child = spawn(process.execPath, [...preload, CLI, ...args], {
    env: { PATH: process.env.PATH ?? '', ...(opts.loopbackDomain ? { AGENTYARD_TEST_LOOPBACK_DOMAIN: opts.loopbackDomain } : {}), ...(opts.serviceProxyPort ? { AGENTYARD_TEST_SERVICE_PROXY_PORT: String(opts.serviceProxyPort) } : {}), ...opts.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  live.add(child);
  const lines: string[] = [];
  createInterface({ input: child.stdout! }).on('line', (l) => lines.push(l));
  createInterface({ input: child.stderr! }).on('line', (l) => lines.push(l));
  const exited = new Promise<number | null>((r) =>
    child.once('exit', (code) => {
      live.delete(child);
      r(code);
    }),
  );
  const stop = async (signal: NodeJS.Signals = 'SIGTERM') => {
    if (child.exitCode === null && child.signalCode === null) child.kill(signal);
    await exited;
  };
  return { child, lines, exited, stop };
}

/** The URL `agentyard api` printed once it listens. */
export function apiUrlOf(p: CliProcess, timeoutMs = 30_000): Promise<string> {
  return whileRunning(p, eventually(async () => p.lines.map((l) => /agentyard api is up at (\S+)/.exec(l)?.[1]).find(Boolean), 'the API to listen', timeoutMs, 50));
}

/** Resolves once `agentyard controller` holds the Lease (after a killed leader's lease runs out). */
export function leading(p: CliProcess, timeoutMs = 30_000): Promise<true> {
  return whileRunning(p, eventually(async () => (p.lines.some((l) => l.includes('"leading"')) ? true : undefined), 'the controller to lead', timeoutMs, 50));
}

/** `wait`, failing at once (with the process's output) if the process exits first. */
function whileRunning<T>(p: CliProcess, wait: Promise<T>): Promise<T> {
  const died = p.exited.then((code) => {
    throw new Error(`agentyard ${p.child.spawnargs.at(-1)} exited with ${code}:\n${p.lines.join('\n')}`);
  });
  died.catch(() => undefined);
  return Promise.race([wait, died]);
}
