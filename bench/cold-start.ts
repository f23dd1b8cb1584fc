// Agent server cold start and idle memory beside their floor: a bare Node HTTP server started the
// same way (a fresh `node` process, the same launcher, timed from spawn until `GET /alive` answers
// 200). Runs interleaved (A, B, A, B, ...) so that a busy machine slows both alike; reports medians.
// Issue #16's targets: start ≤ 6× the bare server's, idle RSS ≤ 100 MiB.
// `node bench/cold-start.ts [runs]` prints the figures alone; `make bench` includes them.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { AGENT_SERVER_MEMORY_ENV } from '../src/agent-server/memory-env.ts';

type Record = (name: string, value: number, unit: string, note?: string) => void;

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const launcher = join(root, 'bin', 'agentyard');

// The floor: what Node needs to answer /alive at all.
const BARE = `import { createServer } from 'node:http';
const s = createServer((req, res) => { res.writeHead(req.url === '/alive' ? 200 : 404, { 'content-type': 'application/json' }); res.end('{"status":"ok"}'); });
s.listen(0, '127.0.0.1', () => process.stdout.write(JSON.stringify({ listening: 'http://127.0.0.1:' + s.address().port }) + '\\n'));
`;

interface Start {
  ms: number;
  rssMiB: number;
}

/** Spawns, waits for the `{"listening"}` line, polls /alive, then samples RSS after the process idles. */
async function startOnce(cmd: string, args: string[], env: NodeJS.ProcessEnv): Promise<Start> {
  const t0 = performance.now();
  const child = spawn(cmd, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
  try {
    const url = await listening(child);
    for (;;) {
      const res = await fetch(`${url}/alive`).catch(() => undefined);
      if (res?.ok) break;
      await new Promise((r) => setTimeout(r, 2));
    }
    const ms = performance.now() - t0;
    // Idle: what the process holds once start-up garbage could have been collected.
    await new Promise((r) => setTimeout(r, 1_000));
    return { ms, rssMiB: rssOf(child.pid!) };
  } finally {
    child.kill('SIGTERM');
    await new Promise((r) => (child.exitCode !== null ? r(undefined) : child.once('exit', r)));
  }
}

function listening(child: ChildProcess): Promise<string> {
  return new Promise((resolveUrl, reject) => {
    let out = '';
    let err = '';
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const m = /\{"listening":"([^"]+)"\}/.exec(out);
      if (m) resolveUrl(m[1]!);
    });
    child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
    child.once('exit', (code) => reject(new Error(`exited ${code} before listening: ${err.slice(-2000)}`)));
  });
}

function rssOf(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : NaN;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

export async function benchColdStart(record: Record, runs = 7): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'agentyard-cold-'));
  try {
    const bareFile = join(dir, 'bare.mjs');
    writeFileSync(bareFile, BARE);
    const node = join(root, 'node_modules', '.bin', 'node');
    // The launcher's own environment for agent servers (bin/agentyard sets NODE_OPTIONS etc.): the
    // bare server gets the same, so the ratio compares the programs, not the settings.
    const env = { ...process.env, ...AGENT_SERVER_MEMORY_ENV, AGENTYARD_LOG_LEVEL: 'error' };
    const bare: Start[] = [];
    const agent: Start[] = [];
    // One unmeasured start of each: the first run fills the page cache (and the compile cache).
    await startOnce(node, [bareFile], env);
    await startOnce(launcher, ['agent-server', '--port', '0', '--host', '127.0.0.1', '--workspace', join(dir, 'ws'), '--data-dir', join(dir, 'data')], env);
    for (let i = 0; i < runs; i++) {
      bare.push(await startOnce(node, [bareFile], env));
      agent.push(await startOnce(launcher, ['agent-server', '--port', '0', '--host', '127.0.0.1', '--workspace', join(dir, 'ws'), '--data-dir', join(dir, `data-${i}`)], env));
    }
    const [bMs, aMs] = [median(bare.map((s) => s.ms)), median(agent.map((s) => s.ms))];
    const [bRss, aRss] = [median(bare.map((s) => s.rssMiB)), median(agent.map((s) => s.rssMiB))];
    record('cold start: bare node http server', bMs, 'ms', `spawn → GET /alive 200, median of ${runs}`);
    record('cold start: agent server', aMs, 'ms', `${(aMs / bMs).toFixed(1)}x the bare server (target ≤ 6x)`);
    record('idle rss: bare node http server', bRss, 'MiB', '1 s after /alive');
    record('idle rss: agent server', aRss, 'MiB', `${(aRss / bRss).toFixed(1)}x the bare server (target ≤ 100 MiB)`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const rows: string[] = [];
  await benchColdStart((name, value, unit, note = '') => rows.push(`${name.padEnd(36)} ${`${value.toFixed(value < 10 ? 2 : 0)} ${unit}`.padStart(10)}  ${note}`), Number(process.argv[2] ?? 7));
  console.log(rows.join('\n'));
}
