// ProcessRuntime: embedded mode's sandboxes. Each sandbox is an `agentyard agent-server` child
// process on a loopback port, with its workspace and state under <dataDir>/sandboxes/<name>/.
// Children run detached in their own process group and are recorded in runtime.json, so a crashed
// or restarted `agentyard up` finds them again instead of forgetting them.
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, openSync, closeSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { SINK_ENV } from '../../api/event-sink.ts';
import type { Sandbox } from '../../api/sandbox.ts';
import type { Logger } from '../../util/log.ts';
import type { RuntimeState, SandboxRuntime } from '../types.ts';
import { archiveWorkspace } from './archive.ts';

const repoRoot = resolve(import.meta.dirname, '..', '..', '..');
const STOP_GRACE_MS = 10_000;

interface RuntimeRecord {
  pid?: number;
  url?: string;
  startedAt?: string;
  /** 'pause': the user or the lifecycle paused it; 'shutdown': `agentyard up` stopped cleanly. */
  stopped?: 'pause' | 'shutdown';
}

export interface ProcessRuntimeOptions {
  dataDir: string;
  /** Command that runs the agent server; default: this repository's CLI on the current Node. */
  command?: string[];
  /** Extra environment for every agent server (model settings, log level). */
  env?: Record<string, string>;
  /** The API's base URL: agent servers push events to `${sinkBaseUrl}/api/v1/webhooks/<sandbox>`. */
  sinkBaseUrl?: string;
  log?: Logger;
}

export class ProcessRuntime implements SandboxRuntime {
  readonly #o: ProcessRuntimeOptions;

  constructor(opts: ProcessRuntimeOptions) {
    this.#o = opts;
  }

  dirOf(name: string): string {
    return join(this.#o.dataDir, 'sandboxes', name);
  }

  workspaceOf(name: string): string {
    return join(this.dirOf(name), 'workspace');
  }

  async observe(sb: Sandbox): Promise<RuntimeState> {
    const name = sb.metadata.name;
    if (!existsSync(this.dirOf(name))) return { phase: 'absent' };
    const rec = this.#read(name);
    if (!rec.pid || !isAgentServer(rec.pid)) {
      if (rec.pid && !rec.stopped) {
        return { phase: 'failed', runtimeId: name, reason: 'AgentServerExited', message: `The agent server process exited unexpectedly; see ${join(this.dirOf(name), 'agent-server.log')}` };
      }
      return { phase: 'paused', runtimeId: name };
    }
    const url = rec.url ?? this.#listeningUrl(name);
    if (url && !rec.url) this.#write(name, { ...rec, url });
    if (url && (await healthy(url))) return { phase: 'running', runtimeId: name, url };
    return { phase: 'starting', runtimeId: name, message: 'Waiting for the agent server to answer /health' };
  }

  async start(sb: Sandbox, opts: { sessionKey: string }): Promise<RuntimeState> {
    const current = await this.observe(sb);
    if (current.phase === 'running' || current.phase === 'starting') return current;
    const name = sb.metadata.name;
    const dir = this.dirOf(name);
    for (const sub of ['workspace', 'state']) mkdirSync(join(dir, sub), { recursive: true });
    rmSync(join(dir, 'agent-server.out'), { force: true });
    const out = openSync(join(dir, 'agent-server.out'), 'w');
    const err = openSync(join(dir, 'agent-server.log'), 'a');
    const [cmd, ...args] = this.#o.command ?? [process.execPath, join(repoRoot, 'src/cli/main.ts'), 'agent-server'];
    const child = spawn(cmd!, [...args, '--port', '0', '--host', '127.0.0.1', '--workspace', join(dir, 'workspace'), '--data-dir', join(dir, 'state')], {
      cwd: join(dir, 'workspace'),
      detached: true,
      stdio: ['ignore', out, err],
      env: {
        PATH: process.env.PATH ?? '/usr/bin:/bin',
        HOME: process.env.HOME ?? dir,
        ...this.#o.env,
        OH_SESSION_API_KEYS_0: opts.sessionKey,
        // Seals the conversation secrets the agent server persists; derived so it survives restarts.
        OH_SECRET_KEY: createHash('sha256').update(`agentyard-secrets:${opts.sessionKey}`).digest('hex'),
        ...(this.#o.sinkBaseUrl ? { [SINK_ENV.url]: `${this.#o.sinkBaseUrl.replace(/\/+$/, '')}/api/v1/webhooks/${name}`, [SINK_ENV.key]: opts.sessionKey } : {}),
      },
    });
    closeSync(out);
    closeSync(err);
    child.unref();
    if (child.pid === undefined) {
      return { phase: 'failed', runtimeId: name, reason: 'SpawnFailed', message: `Could not start the agent server (${cmd})` };
    }
    this.#write(name, { pid: child.pid, startedAt: new Date().toISOString() });
    this.#o.log?.info({ sandbox: name, pid: child.pid }, 'agent server started');
    return { phase: 'starting', runtimeId: name };
  }

  async pause(sb: Sandbox): Promise<RuntimeState> {
    const name = sb.metadata.name;
    if (!existsSync(this.dirOf(name))) return { phase: 'absent' };
    await this.#stop(name, 'pause');
    return { phase: 'paused', runtimeId: name };
  }

  async delete(sb: Sandbox): Promise<void> {
    const name = sb.metadata.name;
    const dir = this.dirOf(name);
    if (!existsSync(dir)) return;
    await this.#stop(name, 'pause');
    await archiveWorkspace(dir, join(this.#o.dataDir, 'archive'), name);
    rmSync(dir, { recursive: true, force: true });
  }

  /** Stops every agent server for a clean shutdown; the next start of `agentyard up` resumes them. */
  async stopAll(names: string[]): Promise<void> {
    await Promise.all(names.filter((n) => existsSync(this.dirOf(n))).map((n) => this.#stop(n, 'shutdown')));
  }

  async #stop(name: string, why: 'pause' | 'shutdown'): Promise<void> {
    const rec = this.#read(name);
    if (rec.pid && isAgentServer(rec.pid)) {
      signalGroup(rec.pid, 'SIGTERM');
      const deadline = Date.now() + STOP_GRACE_MS;
      while (isAlive(rec.pid) && Date.now() < deadline) await sleep(50);
      if (isAlive(rec.pid)) signalGroup(rec.pid, 'SIGKILL');
      this.#o.log?.info({ sandbox: name, pid: rec.pid, why }, 'agent server stopped');
    }
    if (rec.stopped !== why || rec.url) this.#write(name, { ...(rec.pid ? { pid: rec.pid } : {}), stopped: why });
  }

  #listeningUrl(name: string): string | undefined {
    let text: string;
    try {
      text = readFileSync(join(this.dirOf(name), 'agent-server.out'), 'utf8');
    } catch {
      return undefined;
    }
    // The agent server also logs to stdout; its `{"listening": url}` line is the one we need.
    for (const line of text.split('\n')) {
      if (!line.includes('"listening"')) continue;
      try {
        const url = (JSON.parse(line) as { listening?: unknown }).listening;
        if (typeof url === 'string') return url;
      } catch {
        // a partial line: not written completely yet
      }
    }
    return undefined;
  }

  #read(name: string): RuntimeRecord {
    try {
      return JSON.parse(readFileSync(join(this.dirOf(name), 'runtime.json'), 'utf8')) as RuntimeRecord;
    } catch {
      return {};
    }
  }

  #write(name: string, rec: RuntimeRecord): void {
    writeFileSync(join(this.dirOf(name), 'runtime.json'), JSON.stringify(rec));
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return !isZombie(pid);
  } catch {
    return false;
  }
}

function isZombie(pid: number): boolean {
  try {
    return /\) Z /.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
}

/** Alive and still our agent server (a recycled pid is not). */
function isAgentServer(pid: number): boolean {
  if (!isAlive(pid)) return false;
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('agent-server');
  } catch {
    return true; // no /proc: trust the pid
  }
}

function signalGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    try {
      process.kill(pid, signal);
    } catch {
      // already gone
    }
  }
}

async function healthy(url: string): Promise<boolean> {
  try {
    const res = await fetch(`${url}/health`, { signal: AbortSignal.timeout(2_000) });
    await res.body?.cancel();
    return res.ok;
  } catch {
    return false;
  }
}
