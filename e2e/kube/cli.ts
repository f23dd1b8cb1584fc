// `agentyard <command>` as a real child process for the cluster suites: its output kept line by
// line (for readiness and for failure messages), killed with any signal, and never left behind.
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { eventually } from '../embedded/harness.ts';
import { TEST_IMAGE } from './node-agent.ts';

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

/**
 * The control plane the restart and fault suites run as real processes on the test cluster: the
 * API on a fixed port (agent servers push events to that address and reach the model gateway there,
 * so it must stay across restarts) in front of the scripted provider, and the controller with short
 * Lease timings (a killed leader keeps the Lease until it runs out, so a restart takes over soon).
 */
export interface ClusterPlane {
  kubeconfigPath: string;
  namespace: string;
  /** The sandbox domain the host proxy serves. */
  domain: string;
  proxyPort: number;
  apiPort: number;
  apiDataDir: string;
  apiKey: string;
  llmUrl: string;
  providerKey: string;
}

export function runClusterApi(p: ClusterPlane): CliProcess {
  return runCli(['api'], {
    loopbackDomain: p.domain,
    serviceProxyPort: p.proxyPort,
    env: {
      KUBECONFIG: p.kubeconfigPath,
      AGENTYARD_SANDBOX_NAMESPACE: p.namespace,
      AGENTYARD_PORT: String(p.apiPort),
      AGENTYARD_HOST: '127.0.0.1',
      AGENTYARD_DATA_DIR: p.apiDataDir,
      AGENTYARD_API_KEY: p.apiKey,
      // The model gateway: only the API holds the provider's address and key.
      LLM_MODEL: 'openai/scripted',
      LLM_BASE_URL: p.llmUrl,
      LLM_API_KEY: p.providerKey,
      AGENTYARD_LOG_LEVEL: 'warn',
    },
  });
}

export function runClusterController(p: ClusterPlane): CliProcess {
  return runCli(['controller'], {
    loopbackDomain: p.domain,
    serviceProxyPort: p.proxyPort,
    env: {
      KUBECONFIG: p.kubeconfigPath,
      AGENTYARD_SANDBOX_NAMESPACE: p.namespace,
      STORAGE_CLASS: 'standard',
      AGENTYARD_SANDBOX_IMAGE: TEST_IMAGE,
      RUNTIME_BASE_URL: `${p.domain}:${p.proxyPort}`,
      AGENTYARD_API_URL: `http://127.0.0.1:${p.apiPort}`,
      LLM_MODEL: 'openai/scripted',
      AGENTYARD_LEASE_DURATION_SECONDS: '3',
      AGENTYARD_LEASE_RENEW_DEADLINE_SECONDS: '2',
      AGENTYARD_LEASE_RETRY_PERIOD_SECONDS: '0.5',
      AGENTYARD_LOG_LEVEL: 'warn',
    },
  });
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
