// One-shot commands for `/api/bash/*` and `/sockets/bash-events` (OpenHands `BashEventService`):
// each command runs in its own process group with a minimal environment; its output is stored and
// published as BashOutput chunks (at most 1 MiB characters per stream per chunk), the last one
// carrying the exit code. A timeout sends SIGTERM to the group, SIGKILL a second later: exit_code -1.
// No conversation's secrets are exported, even to a command naming one: these commands belong to the
// sandbox, not to a conversation (as in OpenHands, where only the agent's terminal gets secrets);
// every loaded conversation's secret values are masked in their outputs all the same.
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync, statSync } from 'node:fs';
import { isAbsolute, resolve } from 'node:path';
import { StringDecoder } from 'node:string_decoder';
import type { BashCommand, BashOutput, ExecuteBashRequest, StoredBashEvent as BashEvent } from '../../api/agent-server/bash.ts';
import { baseEnv } from '../../agent/hooks/executor.ts';
import { createMasker } from '../../agent/mask.ts';
import type { Logger } from '../../util/log.ts';
import type { BashEventStore } from './store.ts';

export const MAX_CHUNK_CHARS = 1024 * 1024;

export const hexId = () => randomUUID().replace(/-/g, '');

export type BashListener = (event: BashEvent, seq: number) => void;

export interface BashServiceOptions {
  store: BashEventStore;
  workspaceDir: string;
  /** Values masked in every output: the secrets of the conversations loaded right now. */
  secrets(): Readonly<Record<string, string>>;
  log: Logger;
  /** Between SIGTERM and SIGKILL. Default 1 s, as OpenHands. */
  killGraceMs?: number;
  maxChunkChars?: number;
}

interface Running {
  pid: number | undefined;
  done: Promise<BashOutput>;
}

export class BashService {
  readonly #o: BashServiceOptions;
  readonly #listeners = new Set<BashListener>();
  readonly #running = new Map<string, Running>();
  #closed = false;

  constructor(o: BashServiceOptions) {
    this.#o = o;
  }

  subscribe(listener: BashListener): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** Records the command and starts it; its output follows as events. */
  start(req: ExecuteBashRequest): { command: BashCommand; done: Promise<BashOutput> } {
    const command: BashCommand = { id: hexId(), timestamp: new Date().toISOString(), command: req.command, cwd: req.cwd ?? null, timeout: req.timeout ?? 300, kind: 'BashCommand' };
    // Recorded with secrets masked; run as given.
    const recorded: BashCommand = { ...command, command: createMasker(this.#o.secrets())(command.command) };
    this.#publish(recorded);
    const run: Running = { pid: undefined, done: Promise.resolve(undefined as unknown as BashOutput) };
    run.done = this.#run(command, run).finally(() => this.#running.delete(command.id));
    this.#running.set(command.id, run);
    return { command: recorded, done: run.done };
  }

  /** Runs a command to the end; the final output (the one with the exit code), whatever the number of chunks before it. */
  async execute(req: ExecuteBashRequest): Promise<BashOutput> {
    return this.start(req).done;
  }

  /** The directory commands run in when the request names none (relative `cwd`s are taken inside it). */
  get workspaceDir(): string {
    return this.#o.workspaceDir;
  }

  /**
   * Stops a running command as a timeout does (SIGTERM to its group, SIGKILL after the grace) and
   * waits for its final output to be recorded. False when no command with this id is running.
   */
  async stop(commandId: string): Promise<boolean> {
    const run = this.#running.get(commandId);
    if (!run) return false;
    this.#signal(run.pid, 'SIGTERM');
    const grace = this.#o.killGraceMs ?? 1000;
    let timer: NodeJS.Timeout | undefined;
    const killed = new Promise<void>((ok) => {
      timer = setTimeout(() => {
        this.#signal(run.pid, 'SIGKILL');
        ok();
      }, grace);
    });
    await Promise.race([run.done, killed]);
    clearTimeout(timer);
    await run.done;
    return true;
  }

  /** Kills what still runs (their final outputs are recorded) and stops publishing. */
  async close(): Promise<void> {
    this.#closed = true;
    const runs = [...this.#running.values()];
    for (const r of runs) this.#signal(r.pid, 'SIGKILL');
    await Promise.allSettled(runs.map((r) => r.done));
    this.#listeners.clear();
  }

  #publish(event: BashEvent): void {
    const seq = this.#o.store.append(event);
    for (const l of this.#listeners) {
      try {
        l(event, seq);
      } catch (err) {
        this.#o.log.warn({ err }, 'bash event listener failed');
      }
    }
  }

  #output(command: BashCommand, order: number, fields: Pick<BashOutput, 'stdout' | 'stderr' | 'exit_code'>): BashOutput {
    const out: BashOutput = { id: hexId(), timestamp: new Date().toISOString(), command_id: command.id, order, ...fields, kind: 'BashOutput' };
    this.#publish(out);
    return out;
  }

  #signal(pid: number | undefined, signal: NodeJS.Signals): void {
    try {
      if (pid) process.kill(-pid, signal);
    } catch {
      // the group is gone already
    }
  }

  #run(command: BashCommand, run: Running): Promise<BashOutput> {
    const mask = createMasker(this.#o.secrets());
    const max = this.#o.maxChunkChars ?? MAX_CHUNK_CHARS;
    const cwd = command.cwd == null ? this.#o.workspaceDir : isAbsolute(command.cwd) ? command.cwd : resolve(this.#o.workspaceDir, command.cwd);
    let order = 0;
    return new Promise<BashOutput>((done) => {
      const fail = (message: string) => done(this.#output(command, order, { stdout: null, stderr: mask(`Error executing command: ${message}`), exit_code: -1 }));
      if (this.#closed) return fail('the agent server is shutting down');
      if (!existsSync(cwd) || !statSync(cwd).isDirectory()) return fail(`the working directory ${cwd} does not exist`);
      let child: ReturnType<typeof spawn>;
      try {
        child = spawn('bash', ['-c', command.command], { cwd, env: baseEnv(), detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
      } catch (err) {
        return fail((err as Error).message);
      }
      run.pid = child.pid;
      const buffers = { stdout: '', stderr: '' };
      const pipe = (stream: NodeJS.ReadableStream | null, key: 'stdout' | 'stderr') => {
        const decoder = new StringDecoder('utf8');
        stream?.on('data', (b: Buffer) => {
          // Masked before cutting, so a secret inside the buffer is never split between two chunks.
          buffers[key] = mask(buffers[key] + decoder.write(b));
          while (buffers[key].length > max) {
            const chunk = buffers[key].slice(0, max);
            buffers[key] = buffers[key].slice(max);
            this.#output(command, order++, { stdout: key === 'stdout' ? chunk : null, stderr: key === 'stderr' ? chunk : null, exit_code: null });
          }
        });
        stream?.on('end', () => (buffers[key] = mask(buffers[key] + decoder.end())));
      };
      pipe(child.stdout, 'stdout');
      pipe(child.stderr, 'stderr');

      let timedOut = false;
      let killTimer: NodeJS.Timeout | undefined;
      const timer = setTimeout(() => {
        timedOut = true;
        this.#signal(child.pid, 'SIGTERM');
        killTimer = setTimeout(() => this.#signal(child.pid, 'SIGKILL'), this.#o.killGraceMs ?? 1000);
      }, command.timeout * 1000);

      let ended = false;
      // A command that could not start (a missing cwd) gets 'error' and maybe no 'close'.
      child.once('error', (err) => {
        if (child.pid !== undefined || ended) return;
        ended = true;
        clearTimeout(timer);
        fail(err.message);
      });
      child.once('close', (code) => {
        clearTimeout(timer);
        clearTimeout(killTimer);
        if (ended) return;
        ended = true;
        if (timedOut) this.#o.log.warn({ commandId: command.id, timeout: command.timeout }, 'bash command timed out');
        const exit = timedOut ? -1 : (code ?? -1);
        done(this.#output(command, order, { stdout: buffers.stdout || null, stderr: buffers.stderr || null, exit_code: exit }));
      });
    });
  }
}
