// ProcessRuntime: embedded mode's sandboxes. Each sandbox is an `agentyard agent-server` child
// process on a loopback port, with its workspace and state under <dataDir>/sandboxes/<name>/.
// Children run detached in their own process group and are recorded in runtime.json, so a crashed
// or restarted `agentyard up` finds them again instead of forgetting them.
//
// What observe() makes of a sandbox directory (nothing is remembered in memory):
//   process alive, /ready answers 200        → running (also after `agentyard up` crashed: re-adopted)
//   process alive, /ready answers 503        → starting: restoring its conversations (failed after startTimeoutMs)
//   process alive, not answering yet         → starting (failed once it never listened within startTimeoutMs)
//   process gone, stopped by pause/stopAll   → paused (the reconciler restarts it unless the user paused it)
//   process gone, the machine rebooted since → paused likewise: nobody stopped it, but nothing failed either
//   process gone otherwise                   → exited: it died on its own (see agent-server.log); the
//                                              reconciler restarts it on its intact state, with backoff
//   process alive, /ready unanswered too long → exited: hung; put down (SIGKILL) so it can be restarted
//   never listened within startTimeoutMs     → exited likewise (killed): a death before it was ready
//
// Liveness (liveness.ts) pokes the controller within about a second of a death, so it does not wait
// for its next deadline to look.
import { LABEL_WARM_POOL } from '../../api/warm-pool.ts';
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { closeSync, existsSync, mkdirSync, openSync, readdirSync, readFileSync, readSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { SINK_ENV } from '../../api/event-sink.ts';
import { GATEWAY_MODEL_RETRIES } from '../../api/model-gateway.ts';
import type { Sandbox } from '../../api/sandbox.ts';
import type { Logger } from '../../util/log.ts';
import type { RuntimeState, SandboxRef, SandboxRuntime } from '../types.ts';
import { preserveSandboxData } from './archive.ts';
import { FsObjectStore } from '../../objstore/fs-store.ts';
import type { ObjectStore } from '../../objstore/types.ts';
import { freeLoopbackPort, PlainLauncher, type SandboxLauncher } from './isolation/launcher.ts';
import { ProcessLiveness, readiness, type LivenessOptions } from './liveness.ts';
import { bootId, isAgentServer, isAlive, signalGroup, stopGroup } from './processes.ts';
import { AGENT_SERVER_MEMORY_ENV } from '../../agent-server/memory-env.ts';

const repoRoot = resolve(import.meta.dirname, '..', '..', '..');
const LOG_FILE = 'agent-server.log';

interface RuntimeRecord {
  pid?: number;
  url?: string;
  startedAt?: string;
  /** The machine boot the process was started in. */
  bootId?: string;
  /** Size of the log before this start: the `{"listening": url}` line of this run comes after it. */
  logOffset?: number;
  /** 'pause': the user or the lifecycle paused it; 'shutdown': `agentyard up` stopped cleanly; 'failed': put down (never came up, or hung). */
  stopped?: 'pause' | 'shutdown' | 'failed';
  message?: string;
  /** How the process ended, when this process saw it end (its own child). */
  exit?: { code: number | null; signal: string | null };
  /** Since when a listening agent server has not answered /ready at all (ms since epoch): its grace survives a restart of `up`. */
  unhealthySince?: number;
  /** Since when it has answered /ready with 503 (restoring its conversations): bounded by the start timeout. */
  unreadySince?: number;
}

export interface ProcessRuntimeOptions {
  dataDir: string;
  /** Command that runs the agent server; default: this repository's CLI on the current Node. */
  command?: string[];
  /** Extra environment for every agent server (log level). */
  env?: Record<string, string>;
  /** Extra environment for one sandbox's agent server (its Canvas App ingress URL: facade/app-backend-relay.ts). */
  sandboxEnv?: (sandbox: string) => Record<string, string>;
  /**
   * The model agents use, through the model gateway: each agent server gets LLM_MODEL, LLM_BASE_URL
   * = the gateway and its sandbox's model token as LLM_API_KEY, never the provider's key.
   */
  model?: { model: string; gatewayUrl: string };
  /** The API's base URL: agent servers push events to `${sinkBaseUrl}/api/v1/webhooks/<sandbox>`. */
  sinkBaseUrl?: string;
  /** An agent server that has not printed its listening line after this long has failed (default 120 s). */
  startTimeoutMs?: number;
  /** SIGTERM → SIGKILL grace when stopping (default 10 s). */
  stopGraceMs?: number;
  /** A serving agent server that answers no /ready this long is hung: killed and reported exited (default 30 s). */
  unresponsiveAfterMs?: number;
  liveness?: LivenessOptions;
  log?: Logger;
  /** How the child is spawned: as its own user in its own namespaces, or plainly (default). */
  launcher?: SandboxLauncher;
  /** Where a deleted sandbox's workspace archive and conversation files go; default <dataDir>/objects. */
  objects?: ObjectStore;
  /** Whether a conversation still exists: a deleted one's files are not kept. Default: all are. */
  keepConversation?: (conversationId: string) => Promise<boolean>;
}

export class ProcessRuntime implements SandboxRuntime {
  readonly #o: ProcessRuntimeOptions;
  readonly #launcher: SandboxLauncher;
  readonly #liveness: ProcessLiveness;
  readonly #objects: ObjectStore;

  constructor(opts: ProcessRuntimeOptions) {
    this.#o = opts;
    this.#launcher = opts.launcher ?? new PlainLauncher();
    this.#liveness = new ProcessLiveness(opts.liveness);
    this.#objects = opts.objects ?? new FsObjectStore(join(opts.dataDir, 'objects'));
  }

  watch(changed: (sandbox: SandboxRef) => void, signal: AbortSignal): Promise<void> {
    return this.#liveness.run(changed, signal);
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
    if (rec.stopped === 'failed') return { phase: 'exited', runtimeId: name, death: { id: deathId(rec), reason: 'AgentServerFailed', message: rec.message ?? 'The agent server failed' } };
    if (!rec.pid || !isAgentServer(rec.pid)) {
      this.#liveness.untrack(name);
      const rebooted = rec.bootId !== undefined && rec.bootId !== bootId();
      if (!rec.pid || rec.stopped || rebooted) return { phase: 'paused', runtimeId: name };
      // Its tools may outlive it (kill -9 reaches the leader only): nothing of a dead sandbox keeps running.
      // While any member is left the kernel keeps the group id, so it cannot name someone else's group.
      if (!rebooted && !isAlive(rec.pid)) signalGroup(rec.pid, 'SIGKILL', { groupOnly: true });
      const how = rec.exit ? (rec.exit.signal ? ` (killed by ${rec.exit.signal})` : ` (exit code ${rec.exit.code})`) : '';
      return { phase: 'exited', runtimeId: name, death: { id: deathId(rec), reason: 'AgentServerExited', message: `The agent server process exited unexpectedly${how}; see ${join(this.dirOf(name), LOG_FILE)}` } };
    }
    const url = rec.url ?? this.#listeningUrl(name, rec.logOffset ?? 0);
    if (url && !rec.url) this.#write(name, { ...rec, url });
    this.#liveness.track(refOf(sb), rec.pid, url);
    const probe = url ? await readiness(url) : 'down';
    if (probe === 'ready') {
      if (rec.unhealthySince !== undefined || rec.unreadySince !== undefined) {
        const { unhealthySince: _, unreadySince: __, ...rest } = this.#read(name);
        this.#write(name, rest);
      }
      return { phase: 'running', runtimeId: name, url: url! };
    }
    if (probe === 'initializing') {
      // It answers, but is not ready to serve (restoring its conversations): starting, not hung. One
      // that never gets ready within the start timeout is put down like one that never listened.
      const since = rec.unreadySince ?? Date.now();
      if (rec.unreadySince === undefined || rec.unhealthySince !== undefined) {
        const { unhealthySince: _, ...rest } = this.#read(name);
        this.#write(name, { ...rest, unreadySince: since });
      }
      const limit = this.#o.startTimeoutMs ?? 120_000;
      if (Date.now() - since >= limit) {
        const message = `The agent server answered but did not become ready (/ready) within ${Math.round(limit / 1000)} s; see ${join(this.dirOf(name), LOG_FILE)}`;
        await this.#putDown(name, message);
        return { phase: 'exited', runtimeId: name, death: { id: deathId(rec), reason: 'AgentServerFailed', message } };
      }
      return { phase: 'starting', runtimeId: name, message: 'The agent server is restoring its conversations (/ready answers 503)' };
    }
    if (url) {
      // Listening once, not answering now: hung (or very busy). After a grace it is put down.
      const since = rec.unhealthySince ?? Date.now();
      if (rec.unhealthySince === undefined) this.#write(name, { ...this.#read(name), unhealthySince: since });
      const grace = this.#o.unresponsiveAfterMs ?? 30_000;
      if (Date.now() - since >= grace) {
        const message = `The agent server stopped answering /ready for ${Math.round(grace / 1000)} s and was killed; see ${join(this.dirOf(name), LOG_FILE)}`;
        await this.#putDown(name, message);
        return { phase: 'exited', runtimeId: name, death: { id: deathId(rec), reason: 'AgentServerUnresponsive', message } };
      }
      return { phase: 'starting', runtimeId: name, message: 'The agent server does not answer /ready' };
    }
    const startedAt = Date.parse(rec.startedAt ?? '');
    if (Date.now() - startedAt > (this.#o.startTimeoutMs ?? 120_000)) {
      const message = `The agent server did not start listening within ${Math.round((this.#o.startTimeoutMs ?? 120_000) / 1000)} s; see ${join(this.dirOf(name), LOG_FILE)}`;
      await this.#putDown(name, message);
      return { phase: 'exited', runtimeId: name, death: { id: deathId(rec), reason: 'AgentServerFailed', message } };
    }
    return { phase: 'starting', runtimeId: name, message: 'Waiting for the agent server to listen' };
  }

  async start(sb: Sandbox, opts: { sessionKey: string; modelToken?: string }): Promise<RuntimeState> {
    const current = await this.observe(sb);
    if (current.phase === 'running' || current.phase === 'starting') return current;
    const name = sb.metadata.name;
    const dir = this.dirOf(name);
    for (const sub of ['workspace', 'state', 'home']) mkdirSync(join(dir, sub), { recursive: true, mode: 0o700 });
    const logPath = join(dir, LOG_FILE);
    const logOffset = existsSync(logPath) ? statSync(logPath).size : 0;
    const logFd = openSync(logPath, 'a', 0o600);
    const base = this.#o.command ?? [process.execPath, join(repoRoot, 'src/cli/main.ts'), 'agent-server'];
    // A sandbox with a network of its own listens on a port chosen here, which pasta forwards from
    // the host's loopback (same number, so the listening line's URL holds on both sides).
    const net = this.#launcher.ownNetwork ? { port: await freeLoopbackPort(), hostPorts: this.#apiPorts() } : undefined;
    const argv = [...base, '--port', String(net?.port ?? 0), '--host', '127.0.0.1', '--workspace', join(dir, 'workspace'), '--data-dir', join(dir, 'state')];
    const cmd = argv[0];
    let child;
    try {
      const launch = this.#launcher.prepare({ name, dir, argv, env: { ...this.#env(name, opts.sessionKey, opts.modelToken), ...(sb.metadata.labels?.[LABEL_WARM_POOL] !== undefined ? { AGENTYARD_WARM_UP: '1' } : {}) }, ...(net ? { net } : {}) });
      child = spawn(launch.command, launch.args, {
        cwd: launch.cwd,
        detached: true, // its own process group: pause stops the agent's tools with it
        stdio: ['ignore', logFd, logFd],
        env: launch.env,
      });
    } finally {
      closeSync(logFd);
    }
    child.unref();
    // A spawn failure (missing command) arrives as an event; without a listener it would crash us.
    child.once('error', (err) => this.#o.log?.error({ sandbox: name, err }, 'agent server could not be spawned'));
    if (child.pid === undefined) {
      return { phase: 'failed', runtimeId: name, reason: 'SpawnFailed', message: `Could not start the agent server (${cmd})` };
    }
    const boot = bootId();
    this.#write(name, { pid: child.pid, startedAt: new Date().toISOString(), logOffset, ...(boot ? { bootId: boot } : {}) });
    this.#watchChild(sb, child.pid, child);
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
    // Throws while the object store is unreachable: the directory stays and the delete is retried.
    const kept = await preserveSandboxData(dir, name, { objects: this.#objects, ...(this.#o.keepConversation ? { keepConversation: this.#o.keepConversation } : {}) });
    await this.#launcher.release(dir);
    rmSync(dir, { recursive: true, force: true });
    this.#o.log?.info({ sandbox: name, archive: kept.archiveKey, conversationFiles: kept.conversationFiles, store: this.#objects.location }, 'sandbox deleted; workspace archived');
  }

  /**
   * Stops agent servers for a clean shutdown of `agentyard up` (all of them by default); the next
   * start of the service resumes them, since they were not paused by anyone.
   */
  async stopAll(names?: string[]): Promise<void> {
    const root = join(this.#o.dataDir, 'sandboxes');
    const all = names ?? (existsSync(root) ? readdirSync(root) : []);
    await Promise.all(all.filter((n) => existsSync(this.dirOf(n))).map((n) => this.#stop(n, 'shutdown')));
  }

  /** The host loopback ports an agent server reaches the API on (event sink, model gateway): all a sandbox with its own network may reach of the host. */
  #apiPorts(): number[] {
    const ports: number[] = [];
    for (const u of [this.#o.sinkBaseUrl, this.#o.model?.gatewayUrl]) {
      if (!u) continue;
      const url = new URL(u);
      ports.push(Number(url.port || (url.protocol === 'https:' ? 443 : 80)));
    }
    return ports;
  }

  secretKeyFor(sessionKey: string): string {
    return createHash('sha256').update(`agentyard-secrets:${sessionKey}`).digest('hex');
  }

  /** Only what the agent server needs: the parent's environment (its own secrets) stays out. */
  #env(name: string, sessionKey: string, modelToken: string | undefined): Record<string, string> {
    const dir = this.dirOf(name);
    return {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      // Its own home: the agent's `git config --global` and dotfiles stay in the sandbox.
      HOME: join(dir, 'home'),
      ...(process.env.LANG ? { LANG: process.env.LANG } : {}),
      ...(process.env.TZ ? { TZ: process.env.TZ } : {}),
      ...AGENT_SERVER_MEMORY_ENV,
      ...this.#o.env,
      ...this.#o.sandboxEnv?.(name),
      // A warm-pool member has no model token until a user claims it (it gets it then, at its hand-over).
      ...(this.#o.model ? { LLM_MODEL: this.#o.model.model, LLM_BASE_URL: this.#o.model.gatewayUrl, LLM_NUM_RETRIES: String(GATEWAY_MODEL_RETRIES), ...(modelToken ? { LLM_API_KEY: modelToken } : {}) } : {}),
      OH_SESSION_API_KEYS_0: sessionKey,
      // Seals the conversation secrets the agent server persists; derived so it survives restarts.
      OH_SECRET_KEY: this.secretKeyFor(sessionKey),
      ...(this.#o.sinkBaseUrl ? { [SINK_ENV.url]: `${this.#o.sinkBaseUrl.replace(/\/+$/, '')}/api/v1/webhooks/${name}`, [SINK_ENV.key]: sessionKey } : {}),
    };
  }

  /** Our own child: its exit is recorded (how it ended, for the message) and reported at once. */
  #watchChild(sb: Sandbox, pid: number, child: { once(event: 'exit', fn: (code: number | null, signal: NodeJS.Signals | null) => void): unknown }): void {
    const name = sb.metadata.name;
    this.#liveness.track(refOf(sb), pid);
    child.once('exit', (code, signal) => {
      const rec = this.#read(name);
      if (rec.pid === pid && !rec.stopped && existsSync(this.dirOf(name))) this.#write(name, { ...rec, exit: { code, signal } });
      this.#liveness.exited(name, pid);
    });
  }

  async #stop(name: string, why: 'pause' | 'shutdown', message?: string): Promise<void> {
    this.#liveness.untrack(name);
    const rec = this.#read(name);
    if (rec.pid && isAgentServer(rec.pid)) {
      await stopGroup(rec.pid, this.#o.stopGraceMs ?? 10_000);
      this.#o.log?.info({ sandbox: name, pid: rec.pid, why }, 'agent server stopped');
    }
    if (rec.stopped !== why || rec.url || rec.message !== message) {
      this.#write(name, { ...(rec.pid ? { pid: rec.pid } : {}), stopped: why, ...(message ? { message } : {}) });
    }
  }

  /** Kills a hung (or never ready) agent server at once; the record keeps which start it was, so its death is counted once. */
  async #putDown(name: string, message: string): Promise<void> {
    this.#liveness.untrack(name);
    const rec = this.#read(name);
    if (rec.pid && isAgentServer(rec.pid)) {
      signalGroup(rec.pid, 'SIGKILL');
      await stopGroup(rec.pid, 0);
      this.#o.log?.warn({ sandbox: name, pid: rec.pid }, message);
    }
    this.#write(name, { ...(rec.pid ? { pid: rec.pid } : {}), ...(rec.startedAt ? { startedAt: rec.startedAt } : {}), stopped: 'failed', message });
  }

  /** This run's `{"listening": url}` line; the agent server's log lines share the file. */
  #listeningUrl(name: string, offset: number): string | undefined {
    let text: string;
    try {
      text = readFrom(join(this.dirOf(name), LOG_FILE), offset);
    } catch {
      return undefined;
    }
    for (const line of text.split('\n')) {
      if (!line.startsWith('{"listening"')) continue;
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
    writeFileSync(join(this.dirOf(name), 'runtime.json'), JSON.stringify(rec), { mode: 0o600 });
  }
}

/** The file from `offset` on, at most 1 MiB: the listening line comes early. */
function readFrom(path: string, offset: number): string {
  const fd = openSync(path, 'r');
  try {
    const buf = Buffer.alloc(1 << 20);
    const n = readSync(fd, buf, 0, buf.length, offset);
    return buf.subarray(0, n).toString('utf8');
  } finally {
    closeSync(fd);
  }
}

/** One start of one process: a death of it is this id, however often it is observed. */
function deathId(rec: RuntimeRecord): string {
  return `pid ${rec.pid ?? '?'} started ${rec.startedAt ?? '?'}`;
}

function refOf(sb: Sandbox): SandboxRef {
  return { ...(sb.metadata.namespace ? { namespace: sb.metadata.namespace } : {}), name: sb.metadata.name };
}
