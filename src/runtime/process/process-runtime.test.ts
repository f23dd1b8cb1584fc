// ProcessRuntime with real child processes: the real agent server for the lifecycle, a tiny
// stand-in script for the failure cases. Every child is killed after each test.
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { API_VERSION } from '../../api/meta.ts';
import type { Sandbox } from '../../api/sandbox.ts';
import type { RuntimeState } from '../types.ts';
import { ProcessRuntime } from './process-runtime.ts';
import { bootId, isAlive } from './processes.ts';

const KEY = 'session-key-for-tests';

/** A stand-in agent server; FAKE_MODE picks its behaviour. Its file name contains "agent-server" as the real one's command line does. */
const FAKE = `
import { createServer } from 'node:http';
import { spawn } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
const arg = (n) => process.argv[process.argv.indexOf(n) + 1];
const mode = process.env.FAKE_MODE ?? 'serve';
writeFileSync(join(arg('--workspace'), 'env.json'), JSON.stringify(process.env));
if (mode === 'exit') process.exit(3);
if (mode === 'ignore-term') process.on('SIGTERM', () => {});
if (mode === 'hang') setInterval(() => {}, 1000);
else {
  // A tool the agent left running: pause must stop it too.
  const tool = spawn('sleep', ['1000'], { stdio: 'ignore' });
  writeFileSync(join(arg('--workspace'), 'tool.pid'), String(tool.pid));
  // 'restoring': /ready says 503 (restoring its conversations) until the workspace holds a file 'restored'.
  const ready = () => mode !== 'restoring' || existsSync(join(arg('--workspace'), 'restored'));
  const server = createServer((req, res) => res.writeHead(req.url === '/health' ? 200 : req.url === '/ready' ? (ready() ? 200 : 503) : 404).end());
  server.listen(0, '127.0.0.1', () => {
    console.log(JSON.stringify({ level: 30, msg: 'a log line before the announcement' }));
    console.log(JSON.stringify({ listening: 'http://127.0.0.1:' + server.address().port }));
  });
}
`;

let dataDir: string;
let fakeScript: string;
beforeEach(() => {
  dataDir = mkdtempSync(join(tmpdir(), 'process-runtime-'));
  fakeScript = join(dataDir, 'fake-agent-server.mjs');
  writeFileSync(fakeScript, FAKE);
});
afterEach(() => {
  // No leaks: whatever a test left running goes, with its process group.
  const root = join(dataDir, 'sandboxes');
  for (const name of existsSync(root) ? readdirSync(root) : []) {
    for (const file of ['runtime.json', 'workspace/tool.pid']) {
      try {
        const text = readFileSync(join(root, name, file), 'utf8');
        const pid = file.endsWith('.json') ? (JSON.parse(text) as { pid?: number }).pid : Number(text);
        if (pid && pid !== process.pid) killQuietly(pid);
      } catch {
        // nothing recorded
      }
    }
  }
  rmSync(dataDir, { recursive: true, force: true });
});

function killQuietly(pid: number): void {
  for (const target of [-pid, pid]) {
    try {
      process.kill(target, 'SIGKILL');
    } catch {
      // gone
    }
  }
}

function sandbox(name: string): Sandbox {
  return { apiVersion: API_VERSION, kind: 'Sandbox', metadata: { name, namespace: 'default' }, spec: { paused: false } };
}

function fakeRuntime(mode: string, extra: Partial<ConstructorParameters<typeof ProcessRuntime>[0]> = {}): ProcessRuntime {
  return new ProcessRuntime({ dataDir, command: [process.execPath, fakeScript], env: { FAKE_MODE: mode }, ...extra });
}

async function until(rt: ProcessRuntime, sb: Sandbox, phase: RuntimeState['phase'], ok: (s: RuntimeState) => boolean = () => true, ms = 15_000): Promise<RuntimeState> {
  const deadline = Date.now() + ms;
  for (;;) {
    const state = await rt.observe(sb);
    if (state.phase === phase && ok(state)) return state;
    if (Date.now() > deadline) throw new Error(`still ${JSON.stringify(state)}, wanted ${phase}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

const record = (name: string) => JSON.parse(readFileSync(join(dataDir, 'sandboxes', name, 'runtime.json'), 'utf8')) as { pid: number; url?: string; stopped?: string };

describe('ProcessRuntime with the real agent server', () => {
  it('starts, serves with the session key, pauses keeping the workspace, resumes, is re-adopted, stops cleanly and is deleted into an archive', async () => {
    const rt = new ProcessRuntime({ dataDir });
    const sb = sandbox('sb1');
    expect(await rt.observe(sb)).toEqual({ phase: 'absent' });
    expect((await rt.start(sb, { sessionKey: KEY })).phase).toBe('starting');
    const running = await until(rt, sb, 'running');
    if (running.phase !== 'running') throw new Error('unreachable');
    expect(running.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect((await fetch(`${running.url}/api/conversations/count`)).status).toBe(401);
    expect((await fetch(`${running.url}/api/conversations/count`, { headers: { 'x-session-api-key': KEY } })).status).toBe(200);
    const first = record('sb1');
    expect(await rt.start(sb, { sessionKey: KEY })).toEqual(running); // idempotent: no second process
    expect(record('sb1').pid).toBe(first.pid);
    writeFileSync(join(rt.workspaceOf('sb1'), 'notes.txt'), 'kept across pause');

    expect(await rt.pause(sb)).toEqual({ phase: 'paused', runtimeId: 'sb1' });
    expect(isAlive(first.pid)).toBe(false);
    expect(await rt.observe(sb)).toEqual({ phase: 'paused', runtimeId: 'sb1' });

    await rt.start(sb, { sessionKey: KEY });
    const resumed = await until(rt, sb, 'running');
    const second = record('sb1');
    expect(second.pid).not.toBe(first.pid);
    expect(readFileSync(join(rt.workspaceOf('sb1'), 'notes.txt'), 'utf8')).toBe('kept across pause');

    // `agentyard up` crashed and came back: a new runtime finds the same process.
    const again = new ProcessRuntime({ dataDir });
    expect(await again.observe(sb)).toEqual(resumed);

    // A clean stop of the service: stopped, and the next start resumes it (not paused by anyone).
    await again.stopAll();
    expect(isAlive(second.pid)).toBe(false);
    expect(record('sb1').stopped).toBe('shutdown');
    expect((await again.observe(sb)).phase).toBe('paused');

    await again.delete(sb);
    expect(existsSync(join(dataDir, 'sandboxes', 'sb1'))).toBe(false);
    expect(await again.observe(sb)).toEqual({ phase: 'absent' });
    const archives = readdirSync(join(dataDir, 'objects', 'internal', 'workspace-archives'));
    expect(archives).toHaveLength(1);
    expect(archives[0]).toMatch(/^sb1-.*\.tar\.gz$/);
    const listing = execFileSync('tar', ['-tzf', join(dataDir, 'objects', 'internal', 'workspace-archives', archives[0]!)], { encoding: 'utf8' });
    expect(listing).toContain('workspace/notes.txt');
    await again.delete(sb); // idempotent
  });
});

describe('ProcessRuntime with a stand-in agent server', () => {
  it('hands the agent server only its own environment: session key, sink, model settings, its own HOME', async () => {
    process.env.AGENTYARD_TEST_PARENT_SECRET = 'must-not-leak';
    try {
      const rt = fakeRuntime('serve', { env: { FAKE_MODE: 'serve', LLM_MODEL: 'openai/x', LLM_API_KEY: 'sk-llm' }, sinkBaseUrl: 'http://127.0.0.1:3000/' });
      await rt.start(sandbox('sb1'), { sessionKey: KEY });
      await until(rt, sandbox('sb1'), 'running');
      const env = JSON.parse(readFileSync(join(rt.workspaceOf('sb1'), 'env.json'), 'utf8')) as Record<string, string>;
      expect(env).toMatchObject({
        OH_SESSION_API_KEYS_0: KEY,
        AGENTYARD_EVENT_SINK_URL: 'http://127.0.0.1:3000/api/v1/webhooks/sb1',
        AGENTYARD_EVENT_SINK_KEY: KEY,
        LLM_MODEL: 'openai/x',
        LLM_API_KEY: 'sk-llm',
        HOME: join(dataDir, 'sandboxes', 'sb1', 'home'),
      });
      expect(env.OH_SECRET_KEY).toMatch(/^[0-9a-f]{64}$/);
      expect(env.AGENTYARD_TEST_PARENT_SECRET).toBeUndefined();
    } finally {
      delete process.env.AGENTYARD_TEST_PARENT_SECRET;
    }
  });

  it('pause stops the whole process group, also an agent server that ignores SIGTERM', async () => {
    const rt = fakeRuntime('ignore-term', { stopGraceMs: 200 });
    const sb = sandbox('sb1');
    await rt.start(sb, { sessionKey: KEY });
    await until(rt, sb, 'running');
    const toolPid = Number(readFileSync(join(rt.workspaceOf('sb1'), 'tool.pid'), 'utf8'));
    const serverPid = record('sb1').pid;
    expect(isAlive(toolPid)).toBe(true);
    await rt.pause(sb);
    expect(isAlive(serverPid)).toBe(false);
    expect(isAlive(toolPid)).toBe(false);
    expect(record('sb1').stopped).toBe('pause');
  });

  it('reports an agent server that exited on its own as exited (restartable), once per process, how it ended and where its log is', async () => {
    const rt = fakeRuntime('exit');
    const sb = sandbox('sb1');
    await rt.start(sb, { sessionKey: KEY });
    let state = await until(rt, sb, 'exited');
    expect(state).toMatchObject({ death: { reason: 'AgentServerExited' } });
    const first = (state as Extract<RuntimeState, { phase: 'exited' }>).death;
    // How it ended is known once this process has reaped its child (a moment after it is gone).
    for (let i = 0; i < 100 && !JSON.stringify(state).includes('exit code 3'); i++) {
      await new Promise((r) => setTimeout(r, 20));
      state = await rt.observe(sb);
    }
    const death = (state as Extract<RuntimeState, { phase: 'exited' }>).death;
    expect(death.id).toBe(first.id);
    expect(death.message).toContain('exit code 3');
    expect(death.message).toContain(join(dataDir, 'sandboxes', 'sb1', 'agent-server.log'));
    expect(await rt.observe(sb)).toEqual(state); // the same death, the same id
    // A restart is a new process: its death is another one.
    await rt.start(sb, { sessionKey: KEY });
    const again = (await until(rt, sb, 'exited')) as Extract<RuntimeState, { phase: 'exited' }>;
    expect(again.death.id).not.toBe(death.id);
  });

  it('a kill -9 of the agent server alone leaves no tool of it running once the death is seen', async () => {
    const rt = fakeRuntime('serve');
    const sb = sandbox('sb1');
    await rt.start(sb, { sessionKey: KEY });
    await until(rt, sb, 'running');
    const toolPid = Number(readFileSync(join(rt.workspaceOf('sb1'), 'tool.pid'), 'utf8'));
    process.kill(record('sb1').pid, 'SIGKILL'); // the leader only, as `kill -9 <pid>` does
    await until(rt, sb, 'exited');
    // The first observe() can meet the leader as a zombie (not reaped yet), which does not yet prove
    // the group is ours to kill; the controller observes again on its restart backoff, as this does.
    for (let i = 0; i < 100 && isAlive(toolPid); i++) {
      await rt.observe(sb);
      await new Promise((r) => setTimeout(r, 20));
    }
    expect(isAlive(toolPid)).toBe(false);
  });

  it('puts down an agent server that never starts listening within the start timeout: exited, a death before it was ready', async () => {
    const rt = fakeRuntime('hang', { startTimeoutMs: 1 });
    const sb = sandbox('sb1');
    await rt.start(sb, { sessionKey: KEY });
    const pid = record('sb1').pid;
    const state = await until(rt, sb, 'exited');
    expect(state).toMatchObject({ death: { reason: 'AgentServerFailed' } });
    expect(isAlive(pid)).toBe(false);
    expect(await rt.observe(sb)).toEqual(state); // recorded, not re-derived from a dead pid
  });

  it('is running only once /ready says so: an agent server that answers /health but still restores its conversations is starting', async () => {
    const rt = fakeRuntime('restoring', { startTimeoutMs: 60_000, unresponsiveAfterMs: 300 });
    const sb = sandbox('sb1');
    await rt.start(sb, { sessionKey: KEY });
    const restoring = await until(rt, sb, 'starting', (s) => s.phase === 'starting' && /restoring/.test(s.message ?? ''));
    if (restoring.phase === 'starting') expect(restoring.message).toContain('/ready');
    // Well past the hang grace: answering 503 is not hanging.
    await new Promise((r) => setTimeout(r, 400));
    expect((await rt.observe(sb)).phase).toBe('starting');
    writeFileSync(join(rt.workspaceOf('sb1'), 'restored'), '');
    expect((await until(rt, sb, 'running')).phase).toBe('running');
  });

  it('puts down an agent server that answers /health but never gets ready within the start timeout', async () => {
    const sb = sandbox('sb1');
    const first = fakeRuntime('restoring', { startTimeoutMs: 60_000 });
    await first.start(sb, { sessionKey: KEY });
    await until(first, sb, 'starting', (s) => s.phase === 'starting' && /restoring/.test(s.message ?? ''));
    const pid = record('sb1').pid;
    // The wait for readiness is kept on disk: a runtime with a short start timeout puts it down.
    const rt = fakeRuntime('restoring', { startTimeoutMs: 300 });
    const state = await until(rt, sb, 'exited');
    expect(state).toMatchObject({ death: { reason: 'AgentServerFailed' } });
    if (state.phase === 'exited') expect(state.death.message).toContain('/ready');
    expect(isAlive(pid)).toBe(false);
  });

  it('puts down an agent server that stops answering /ready for longer than its grace', async () => {
    const rt = fakeRuntime('serve', { unresponsiveAfterMs: 300 });
    const sb = sandbox('sb1');
    await rt.start(sb, { sessionKey: KEY });
    await until(rt, sb, 'running');
    const pid = record('sb1').pid;
    process.kill(pid, 'SIGSTOP'); // alive, not answering: hung
    try {
      expect((await rt.observe(sb)).phase).toBe('starting'); // within the grace: not yet a death
      const state = await until(rt, sb, 'exited');
      expect(state).toMatchObject({ death: { reason: 'AgentServerUnresponsive' } });
      expect(isAlive(pid)).toBe(false);
    } finally {
      killQuietly(pid);
    }
  });

  it('the grace of a hung agent server is kept on disk: a restarted runtime does not start it over', async () => {
    const sb = sandbox('sb1');
    const first = fakeRuntime('serve', { unresponsiveAfterMs: 300 });
    await first.start(sb, { sessionKey: KEY });
    await until(first, sb, 'running');
    const pid = record('sb1').pid;
    process.kill(pid, 'SIGSTOP');
    try {
      expect((await first.observe(sb)).phase).toBe('starting'); // the grace begins
      await new Promise((r) => setTimeout(r, 350));
      // `up` restarted meanwhile: a new runtime over the same directory knows the grace is over.
      const second = fakeRuntime('serve', { unresponsiveAfterMs: 300 });
      expect(await second.observe(sb)).toMatchObject({ phase: 'exited', death: { reason: 'AgentServerUnresponsive' } });
    } finally {
      killQuietly(pid);
    }
  });

  it('watch: tells of a death by itself, for its own children and for adopted ones, and not of a pause', async () => {
    const rt = fakeRuntime('serve', { liveness: { pollMs: 50, probeMs: 60_000 } });
    const abort = new AbortController();
    const seen: string[] = [];
    const watching = rt.watch((ref) => seen.push(`${ref.namespace}/${ref.name}`), abort.signal);
    try {
      const [a, b] = [sandbox('sb1'), sandbox('sb2')];
      await rt.start(a, { sessionKey: KEY });
      await rt.start(b, { sessionKey: KEY });
      await until(rt, a, 'running');
      await until(rt, b, 'running');
      const t0 = Date.now();
      killQuietly(record('sb1').pid);
      // Told by the watch, without anyone asking (how fast is measured by the fault suite, not asserted
      // here). Only then observe(): one that finds the death first has no need of the watch, and stops it.
      while (!seen.includes('default/sb1') && Date.now() - t0 < 15_000) await new Promise((r) => setTimeout(r, 10));
      expect(seen).toEqual(['default/sb1']);
      await until(rt, a, 'exited');

      // Adopted by a fresh runtime (a restarted `agentyard up`): found dead by the pid poll.
      const adopted = fakeRuntime('serve', { liveness: { pollMs: 50, probeMs: 60_000 } });
      const seen2: string[] = [];
      const watching2 = adopted.watch((ref) => seen2.push(ref.name), abort.signal);
      await until(adopted, b, 'running');
      await adopted.pause(b);
      await new Promise((r) => setTimeout(r, 200));
      expect(seen2).toEqual([]); // a pause is no death
      await adopted.start(b, { sessionKey: KEY });
      await until(adopted, b, 'running');
      killQuietly(record('sb2').pid);
      const t1 = Date.now();
      while (!seen2.includes('sb2') && Date.now() - t1 < 15_000) await new Promise((r) => setTimeout(r, 10));
      expect(seen2).toEqual(['sb2']);
      abort.abort();
      await watching2;
    } finally {
      abort.abort();
      await watching;
    }
  });

  it('a record whose process died in an earlier boot of the machine is paused (restartable), not failed', async () => {
    const rt = fakeRuntime('serve');
    const sb = sandbox('sb1');
    await rt.start(sb, { sessionKey: KEY });
    await until(rt, sb, 'running');
    const rec = record('sb1');
    killQuietly(rec.pid);
    await until(rt, sb, 'exited'); // same boot: it died on its own
    writeFileSync(join(dataDir, 'sandboxes', 'sb1', 'runtime.json'), JSON.stringify({ ...rec, bootId: 'an-earlier-boot' }));
    expect(await rt.observe(sb)).toEqual({ phase: 'paused', runtimeId: 'sb1' });
    await rt.start(sb, { sessionKey: KEY });
    await until(rt, sb, 'running');
    expect(bootId()).toBeTruthy();
  });

  it('never adopts or signals a recycled pid that is not an agent server', async () => {
    const rt = fakeRuntime('serve');
    const sb = sandbox('sb1');
    const sleeper = spawn('sleep', ['1000'], { stdio: 'ignore' });
    try {
      await rt.start(sb, { sessionKey: KEY });
      await until(rt, sb, 'running');
      killQuietly(record('sb1').pid);
      writeFileSync(join(dataDir, 'sandboxes', 'sb1', 'runtime.json'), JSON.stringify({ pid: sleeper.pid, url: 'http://127.0.0.1:1' }));
      expect((await rt.observe(sb)).phase).toBe('exited');
      await rt.pause(sb);
      expect(isAlive(sleeper.pid!)).toBe(true);
    } finally {
      sleeper.kill('SIGKILL');
    }
  });

  it('a command that cannot be spawned fails the start instead of crashing the service', async () => {
    const rt = new ProcessRuntime({ dataDir, command: [join(dataDir, 'no-such-agent-server')] });
    const state = await rt.start(sandbox('sb1'), { sessionKey: KEY });
    expect(state.phase).toBe('failed');
  });
});
