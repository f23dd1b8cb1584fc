// Starts `agentyard up` as a real child process and talks to it over HTTP only.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { startScriptedLlm, type ScriptedLlm } from '../../src/testing/scripted-llm/server.ts';

const repoRoot = join(import.meta.dirname, '..', '..');

export interface RunningService {
  url: string;
  apiKey: string;
  dataDir: string;
  process: ChildProcess;
  output: string[];
  api<T = unknown>(method: string, path: string, body?: unknown, key?: string): Promise<{ status: number; body: T; headers: Headers }>;
  /** SIGTERM and wait; `kill -9` semantics with `signal: 'SIGKILL'`. */
  stop(signal?: NodeJS.Signals): Promise<void>;
}

export interface StartOptions {
  dataDir?: string;
  env?: Record<string, string>;
  port?: number;
}

export async function startService(opts: StartOptions = {}): Promise<RunningService> {
  const dataDir = opts.dataDir ?? mkdtempSync(join(tmpdir(), 'agentyard-e2e-'));
  const child = spawn(process.execPath, [join(repoRoot, 'src/cli/main.ts'), 'up', '--port', String(opts.port ?? 0), '--data-dir', dataDir], {
    cwd: repoRoot,
    env: { ...process.env, AGENTYARD_LOG_LEVEL: 'info', ...opts.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const output: string[] = [];
  child.stderr!.on('data', (chunk: Buffer) => output.push(chunk.toString()));
  const lines = createInterface({ input: child.stdout! });
  const ready = new Promise<{ url: string; apiKey: string }>((resolve, reject) => {
    let printed: string | undefined;
    lines.on('line', (line) => {
      output.push(line);
      // The admin key is printed only at the first start; later it is read where an operator finds it.
      printed ??= /^API key: (\S+)$/.exec(line)?.[1];
      const url = /agentyard is up at (\S+)/.exec(line)?.[1];
      if (url) resolve({ url, apiKey: printed ?? opts.env?.AGENTYARD_API_KEY ?? readFileSync(join(dataDir, 'api-key'), 'utf8').trim() });
    });
    child.once('exit', (code) => reject(new Error(`agentyard up exited with ${code}:\n${output.join('')}`)));
  });
  const { url, apiKey } = await ready;

  const api: RunningService['api'] = async (method, path, body, key = apiKey) => {
    const res = await fetch(url + path, {
      method,
      headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    let parsed: unknown = text;
    try {
      parsed = JSON.parse(text);
    } catch {
      // not JSON: keep the text
    }
    return { status: res.status, body: parsed as never, headers: res.headers };
  };

  const stop = async (signal: NodeJS.Signals = 'SIGTERM') => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    child.kill(signal);
    await exited;
  };

  return { url, apiKey, dataDir, process: child, output, api, stop };
}

/** The LLM_* settings that point `agentyard up` at a scripted model. */
export function scriptedModelEnv(llm: ScriptedLlm): Record<string, string> {
  return { LLM_MODEL: 'openai/scripted', LLM_BASE_URL: llm.url, LLM_API_KEY: 'sk-test-not-a-secret' };
}

export interface ServiceWithModel {
  llm: ScriptedLlm;
  svc: RunningService;
  /** Stops both and removes the data directory. */
  stop(): Promise<void>;
}

/** A scripted model and `agentyard up` using it (`opts.env` on top), as most suites start. */
export async function startServiceWithModel(opts: StartOptions = {}): Promise<ServiceWithModel> {
  const llm = await startScriptedLlm();
  const svc = await startService({ ...opts, env: { ...scriptedModelEnv(llm), ...opts.env } }).catch(async (err: unknown) => {
    await llm.close();
    throw err;
  });
  return {
    llm,
    svc,
    async stop() {
      await svc.stop();
      await llm.close();
      removeDataDir(svc.dataDir);
    },
  };
}

export function removeDataDir(dir: string): void {
  removeSandboxCgroups(dir);
  rmSync(dir, { recursive: true, force: true });
}

/**
 * Isolated sandboxes keep their (empty) cgroups while stopped, until deleted; a test's data
 * directory goes with its sandboxes undeleted, so their cgroups go here, outside the data dir.
 */
function removeSandboxCgroups(dataDir: string): void {
  const root = join(dataDir, 'sandboxes');
  for (const name of existsSync(root) ? readdirSync(root) : []) {
    let cgroups: string[] = [];
    try {
      cgroups = (JSON.parse(readFileSync(join(root, name, 'sandbox-user.json'), 'utf8')) as { cgroups?: string[] }).cgroups ?? [];
    } catch {
      continue; // not isolated
    }
    for (const dir of cgroups) {
      // The processes of a sandbox stopped a moment ago may still be leaving it: retry briefly.
      for (let i = 0; i < 250 && existsSync(dir); i++) {
        try {
          rmdirSync(dir);
          rmdirSync(dirname(dir)); // the installation's parent, once empty
        } catch {
          Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 20);
        }
      }
    }
  }
}

/** Polls `probe` until it returns a value (not undefined). Fails with the last value seen. */
export async function eventually<T>(probe: () => Promise<T | undefined>, what: string, timeoutMs = 60_000, intervalMs = 200): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const value = await probe();
      if (value !== undefined) return value;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}${last ? `: ${String(last)}` : ''}`);
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}
