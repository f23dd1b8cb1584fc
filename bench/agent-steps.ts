// Agent servers side by side (issue #16, items 3 and 4): ours (bin/agentyard agent-server) and, when
// hack/openhands-server.sh installed it, the real OpenHands agent server 1.58.2, each a process of
// its own started the same way and driven over the same HTTP API by the same fast fake model (a
// bare OpenAI-compatible server in this process: it answers `think` calls, then `finish`).
// Figures for each: cold start (spawn → GET /alive 200), RSS idle and after 100 steps, create
// (POST /api/conversations), per agent step (the gap between two model requests of a run: the
// response's events, the tool, the next request), per step late in a STEPS-step conversation
// against a 10-step one (target ≤ 1.2×), an events search page and a full WebSocket replay.
// Knobs: STEPS (ours, default 1000), PEER_STEPS (OpenHands, default 300), BENCH_PEER=0 skips it.
//   node bench/agent-steps.ts
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { WebSocket } from 'ws';
import { AGENT_SERVER_MEMORY_ENV } from '../src/agent-server/memory-env.ts';
import { freePort } from '../src/testing/ports.ts';

type Record = (name: string, value: number, unit: string, note?: string) => void;

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const KEY = 'bench-steps-key';

/** The fake model: answers the planned replies in order, `finish` when none is left; notes when each request came. */
class FastModel {
  readonly #server: Server;
  #planned = 0;
  #n = 0;
  arrivals: number[] = [];
  #finished: (() => void) | undefined;
  url = '';

  constructor() {
    this.#server = createServer((req, res) => {
      const at = performance.now();
      req.resume();
      req.on('end', () => {
        this.arrivals.push(at);
        const step = this.#planned > 0;
        if (step) this.#planned--;
        const id = `call_${++this.#n}`;
        const call = step ? { name: 'think', arguments: JSON.stringify({ thought: `Step ${this.#n}: look at the next file.` }) } : { name: 'finish', arguments: JSON.stringify({ message: 'done' }) };
        const body = JSON.stringify({
          id: `chatcmpl-${this.#n}`,
          object: 'chat.completion',
          created: Math.floor(Date.now() / 1000),
          model: 'scripted',
          choices: [{ index: 0, finish_reason: 'tool_calls', message: { role: 'assistant', content: null, tool_calls: [{ id, type: 'function', function: call }] } }],
          usage: { prompt_tokens: 1000, completion_tokens: 20, total_tokens: 1020 },
        });
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
        res.end(body);
        if (!step) this.#finished?.();
      });
    });
  }

  async start(): Promise<void> {
    await new Promise<void>((r) => this.#server.listen(0, '127.0.0.1', r));
    this.url = `http://127.0.0.1:${(this.#server.address() as AddressInfo).port}/v1`;
  }

  /** The next run: `steps` think calls, then finish; resolves when finish was answered. */
  plan(steps: number): Promise<void> {
    this.#planned = steps;
    this.arrivals = [];
    return new Promise((r) => (this.#finished = r));
  }

  close(): Promise<void> {
    this.#server.closeAllConnections();
    return new Promise((r) => this.#server.close(() => r()));
  }
}

interface Proc {
  name: string;
  url: string;
  pid: number;
  workDir: string;
  startMs: number;
  stop(): Promise<void>;
}

async function startProcess(name: string, cmd: string, args: string[], opts: { cwd: string; env: NodeJS.ProcessEnv; port: number; workDir: string; timeoutMs: number }): Promise<Proc> {
  const t0 = performance.now();
  const child: ChildProcess = spawn(cmd, args, { cwd: opts.cwd, env: opts.env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout!.on('data', (d: Buffer) => (out = (out + d.toString()).slice(-20_000)));
  child.stderr!.on('data', (d: Buffer) => (out = (out + d.toString()).slice(-20_000)));
  const url = `http://127.0.0.1:${opts.port}`;
  const stop = async () => {
    if (child.exitCode !== null || !child.pid) return;
    const exited = new Promise((r) => child.once('exit', r));
    process.kill(-child.pid, 'SIGTERM');
    const timer = setTimeout(() => child.pid && process.kill(-child.pid, 'SIGKILL'), 10_000);
    await exited;
    clearTimeout(timer);
  };
  const until = t0 + opts.timeoutMs;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`${name} exited (${child.exitCode}) while starting:\n${out.slice(-3000)}`);
    if (performance.now() > until) {
      await stop();
      throw new Error(`${name} did not answer /alive within ${opts.timeoutMs / 1000} s:\n${out.slice(-3000)}`);
    }
    const status = await call(url, 'GET', '/alive').then((r) => r.status, () => 0);
    if (status === 200) break;
    await new Promise((r) => setTimeout(r, 5));
  }
  return { name, url, pid: child.pid!, workDir: opts.workDir, startMs: performance.now() - t0, stop };
}


function call(url: string, method: string, path: string, body?: unknown): Promise<{ status: number; body: any }> {
  return new Promise((resolveCall, reject) => {
    const text = body === undefined ? undefined : JSON.stringify(body);
    const req = request(url + path, { method, headers: { 'x-session-api-key': KEY, ...(text ? { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(text)) } : {}) } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const raw = Buffer.concat(chunks).toString('utf8');
        let parsed: unknown = raw;
        try {
          parsed = JSON.parse(raw);
        } catch {
          // not JSON
        }
        resolveCall({ status: res.statusCode ?? 0, body: parsed });
      });
    });
    req.on('error', reject);
    req.end(text);
  });
}

function rssMiB(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : NaN;
}

/** User + system CPU time of a process so far, in ms (clock ticks of 10 ms). */
function cpuMs(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;
const gaps = (xs: number[]) => xs.slice(1).map((t, i) => t - xs[i]!);

interface Figures {
  startMs: number;
  idleRss: number;
  rss100: number;
  rssEnd: number;
  /** RSS 12 s after the last request: what a sandbox holds while it waits for its user (src/agent-server/idle-collect.ts). */
  rssRested: number;
  createMs: number;
  stepShort: number;
  stepLong: number;
  cpuShort: number;
  cpuLong: number;
  steps: number;
  events: number;
  searchMs: number;
  replayMs: number;
}

async function drive(p: Proc, model: FastModel, steps: number): Promise<Figures> {
  await new Promise((r) => setTimeout(r, 1_000));
  const idleRss = rssMiB(p.pid);
  const body = { agent: { kind: 'Agent', llm: { model: 'openai/scripted', base_url: model.url, api_key: 'sk-bench', usage_id: 'agent' }, tools: [] }, workspace: { kind: 'LocalWorkspace', working_dir: p.workDir }, autotitle: false, max_iterations: 1000 };
  const create = async (): Promise<[string, number]> => {
    const t0 = performance.now();
    const r = await call(p.url, 'POST', '/api/conversations', body);
    if (r.status >= 300) throw new Error(`${p.name}: create answered ${r.status}: ${JSON.stringify(r.body)}`);
    return [r.body.id as string, performance.now() - t0];
  };
  const creates: number[] = [];
  for (let i = 0; i < 3; i++) creates.push((await create())[1]);
  const run = async (id: string, n: number): Promise<number[]> => {
    const done = model.plan(n);
    const r = await call(p.url, 'POST', `/api/conversations/${id}/events`, { role: 'user', content: [{ type: 'text', text: `run ${n} steps` }], run: true });
    if (r.status >= 300) throw new Error(`${p.name}: send answered ${r.status}: ${JSON.stringify(r.body)}`);
    await done;
    const arrivals = model.arrivals;
    for (;;) {
      const s = (await call(p.url, 'GET', `/api/conversations/${id}`)).body?.execution_status;
      if (s === 'finished') break;
      if (s === 'error' || s === 'stuck') throw new Error(`${p.name}: the run ended ${s}`);
      await new Promise((r) => setTimeout(r, 10));
    }
    return gaps(arrivals.slice(0, n + 1)); // n think steps: n gaps up to the finish request
  };
  // A first run warms the code paths up (JIT, the model client, the tool) for both servers alike.
  await run((await create())[0], 10);
  // Per step: the median gap between model requests (wall time, at the mercy of a busy machine) and
  // the server's CPU time per step (user + system, from /proc), which a busy machine disturbs less.
  const shortGaps: number[] = [];
  let cpu = cpuMs(p.pid);
  for (let i = 0; i < 5; i++) shortGaps.push(...(await run((await create())[0], 10)));
  const cpuShort = (cpuMs(p.pid) - cpu) / 50;
  const stepShort = median(shortGaps);
  const [long] = await create();
  let rss100 = NaN;
  let last: number[] = [];
  let cpuLong = NaN;
  for (let done = 0; done < steps; done += 100) {
    cpu = cpuMs(p.pid);
    const n = Math.min(100, steps - done);
    last = await run(long, n);
    cpuLong = (cpuMs(p.pid) - cpu) / n;
    if (done === 0) rss100 = rssMiB(p.pid);
  }
  const stepLong = median(last.slice(-50));
  const events = Number((await call(p.url, 'GET', `/api/conversations/${long}/events/count`)).body);
  const searches: number[] = [];
  for (let i = 0; i < 30; i++) {
    const t0 = performance.now();
    const r = await call(p.url, 'GET', `/api/conversations/${long}/events/search?limit=100`);
    if (r.status !== 200) throw new Error(`${p.name}: search answered ${r.status}`);
    searches.push(performance.now() - t0);
  }
  const replayMs = await replay(p, long, events);
  const rssEnd = rssMiB(p.pid);
  await new Promise((r) => setTimeout(r, 12_000));
  return { startMs: p.startMs, idleRss, rss100, rssEnd, rssRested: rssMiB(p.pid), createMs: median(creates), stepShort, stepLong, cpuShort, cpuLong, steps, events, searchMs: median(searches), replayMs };
}

/** A new WebSocket asking for everything: ms until `events` frames arrived. */
function replay(p: Proc, id: string, events: number): Promise<number> {
  return new Promise((resolveReplay, reject) => {
    const t0 = performance.now();
    const ws = new WebSocket(`${p.url.replace('http', 'ws')}/sockets/events/${id}?resend_all=true`, { headers: { 'x-session-api-key': KEY } });
    let frames = 0;
    const timer = setTimeout(() => (ws.terminate(), reject(new Error(`${p.name}: replay got ${frames} of ${events} frames`))), 60_000);
    ws.on('message', () => {
      if (++frames >= events) {
        clearTimeout(timer);
        ws.close();
        resolveReplay(performance.now() - t0);
      }
    });
    ws.on('error', reject);
  });
}

async function ours(dir: string): Promise<Proc> {
  const port = await freePort();
  const workDir = join(dir, 'ours-work');
  mkdirSync(workDir, { recursive: true });
  // The memory settings every agent server runs with (src/agent-server/memory-env.ts); for an
  // experiment, BENCH_AGENT_ENV='{"NAME":"value"}' overrides them and BENCH_AGENT_NODE_OPTIONS adds flags.
  const memory: { [name: string]: string } = { ...AGENT_SERVER_MEMORY_ENV, ...(JSON.parse(process.env.BENCH_AGENT_ENV ?? '{}') as { [name: string]: string }) };
  const env = { ...process.env, OH_SESSION_API_KEYS_0: KEY, ...memory, NODE_OPTIONS: `${memory.NODE_OPTIONS ?? ''} ${process.env.BENCH_AGENT_NODE_OPTIONS ?? ''}`, AGENTYARD_LOG_LEVEL: 'error' };
  return startProcess('agentyard', join(root, 'bin', 'agentyard'), ['agent-server', '--port', String(port), '--host', '127.0.0.1', '--workspace', workDir, '--data-dir', join(dir, 'ours-data')], { cwd: dir, env, port, workDir, timeoutMs: 60_000 });
}

async function peer(dir: string, bin: string): Promise<Proc> {
  const { openhandsEnv } = await import('../e2e/parity/servers.ts');
  const port = await freePort();
  const home = join(dir, 'openhands');
  const workDir = join(home, 'work');
  mkdirSync(join(home, 'tmux'), { recursive: true });
  mkdirSync(workDir, { recursive: true });
  const env = { ...openhandsEnv(home, workDir), OH_SESSION_API_KEYS_0: KEY };
  return startProcess('openhands', bin, ['--host', '127.0.0.1', '--port', String(port)], { cwd: home, env, port, workDir, timeoutMs: 240_000 });
}

export async function benchAgentSteps(record: Record): Promise<void> {
  const steps = Number(process.env.STEPS ?? 1000);
  const peerSteps = Number(process.env.PEER_STEPS ?? 300);
  const dir = mkdtempSync(join(tmpdir(), 'agentyard-steps-'));
  const model = new FastModel();
  await model.start();
  try {
    // One unmeasured start first, as bench/cold-start.ts does: the first start after a source change
    // compiles every module and loads the type stripper (+15 MiB for that process's life, seconds
    // of start); agent servers on a machine start with Node's compile cache filled (bin/agentyard).
    await (await ours(dir)).stop();
    const o = await ours(dir);
    let a: Figures;
    try {
      a = await drive(o, model, steps);
    } finally {
      await o.stop();
    }
    let b: Figures | undefined;
    let skipped = '';
    if (process.env.BENCH_PEER === '0') skipped = 'BENCH_PEER=0';
    else {
      const { openhandsBinary } = await import('../e2e/parity/servers.ts');
      const bin = openhandsBinary();
      if (!bin) skipped = 'the OpenHands agent server is not installed (hack/openhands-server.sh)';
      else {
        const p = await peer(dir, bin);
        try {
          b = await drive(p, model, Math.min(peerSteps, steps));
        } finally {
          await p.stop();
        }
      }
    }
    const vs = (x: number, y: number | undefined, lowerIsBetter = true) => (y === undefined ? `OpenHands: ${skipped}` : `OpenHands ${y.toFixed(y < 10 ? 2 : 0)}; ours/OpenHands ${(x / y).toFixed(2)}x${lowerIsBetter ? '' : ''}`);
    const ratio = a.stepLong / a.stepShort;
    record('agent server: cold start to /alive', a.startMs, 'ms', vs(a.startMs, b?.startMs));
    record('agent server: RSS idle', a.idleRss, 'MiB', `${a.idleRss <= 100 ? 'met' : `MISSED by ${(a.idleRss - 100).toFixed(0)} MiB`} (target ≤ 100); ${vs(a.idleRss, b?.idleRss)}`);
    record('agent server: RSS after 100 steps', a.rss100, 'MiB', `${a.rss100 <= 120 ? 'met' : `MISSED by ${(a.rss100 - 120).toFixed(0)} MiB`} (target ≤ 120); ${vs(a.rss100, b?.rss100)}`);
    record(`agent server: RSS after ${a.steps} steps`, a.rssEnd, 'MiB', b ? `OpenHands after ${b.steps}: ${b.rssEnd.toFixed(0)} MiB` : '');
    record(`agent server: RSS 12 s after ${a.steps} steps`, a.rssRested, 'MiB', b ? `OpenHands: ${b.rssRested.toFixed(0)} MiB` : 'idle, waiting for its user');
    record('agent server: create conversation', a.createMs, 'ms', vs(a.createMs, b?.createMs));
    const cpuRatio = a.cpuLong / a.cpuShort;
    record('agent server: per step, 10-step conversations', a.stepShort, 'ms', `wall, median gap between model requests; ${vs(a.stepShort, b?.stepShort)}`);
    record(`agent server: per step at step ${a.steps}`, a.stepLong, 'ms', `wall; ${ratio.toFixed(2)}x the 10-step one${b ? `; OpenHands at step ${b.steps}: ${b.stepLong.toFixed(1)} ms, ${(b.stepLong / b.stepShort).toFixed(2)}x its 10-step one` : ''}`);
    record('agent server: CPU per step, 10-step conversations', a.cpuShort, 'ms', `server process user+system; ${vs(a.cpuShort, b?.cpuShort)}`);
    record(`agent server: CPU per step, steps ${a.steps - 99}-${a.steps}`, a.cpuLong, 'ms', `${cpuRatio.toFixed(2)}x the 10-step one: ${cpuRatio <= 1.2 ? 'met' : 'MISSED'} (target ≤ 1.2x)${b ? `; OpenHands at steps ${b.steps - 99}-${b.steps}: ${b.cpuLong.toFixed(1)} ms, ${(b.cpuLong / b.cpuShort).toFixed(2)}x its 10-step one` : ''}`);
    record(`agent server: events search page (${a.events} events)`, a.searchMs, 'ms', b ? `OpenHands (${b.events} events) ${b.searchMs.toFixed(2)}; ours/OpenHands ${(a.searchMs / b.searchMs).toFixed(2)}x` : vs(a.searchMs, undefined));
    record(`agent server: WebSocket replay of ${a.events} events`, a.replayMs, 'ms', b ? `OpenHands (${b.events} events) ${b.replayMs.toFixed(0)}; per event ours/OpenHands ${((a.replayMs / a.events) / (b.replayMs / b.events)).toFixed(2)}x` : vs(a.replayMs, undefined));
  } finally {
    await model.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const rows: string[] = [];
  await benchAgentSteps((name, value, unit, note = '') => rows.push(`${name.padEnd(48)} ${`${value.toFixed(value < 10 ? 2 : 0)} ${unit}`.padStart(12)}  ${note}`));
  console.log(rows.join('\n'));
}
