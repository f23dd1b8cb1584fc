// The backend processes of Canvas Apps (OpenHands 1.58 canvas_extensions/backend.py's contract):
// a client approves one exact installed revision (`prepare` checks and unpacks its .tar.gz artifact),
// then `start` runs the artifact's executable on a loopback port the server picks, in a process group
// of its own, with nothing of the server's environment but the allow-listed names the manifest asks
// for, and waits for its health probe. The server watches it: an exit is reported at once
// (`unhealthy`, with the code), and `stop`, uninstall, disable and server shutdown take the whole
// group down (SIGTERM, then SIGKILL). The proxy (bridge.ts) only ever dials `ready` backends.
import { spawn, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { accessSync, constants, createReadStream, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { chmod, mkdir, writeFile } from 'node:fs/promises';
import { request } from 'node:http';
import { createServer } from 'node:net';
import { arch, platform } from 'node:os';
import { dirname, join, relative, resolve, isAbsolute } from 'node:path';
import { createGunzip } from 'node:zlib';
import { pipeline } from 'node:stream/promises';
import { Conflict } from '../../api/errors.ts';
import type { BackendLogs, BackendPlatform, BackendState, BackendStatus, CanvasExtensionBackend, CanvasExtensionManifest } from '../../api/agent-server/canvas.ts';
import { INHERITABLE_ENV } from '../../api/agent-server/canvas.ts';
import { baseEnv } from '../../agent/hooks/executor.ts';
import { canonicalManifest, containedFile, type CanvasExtensions } from './extensions.ts';
import { downloadArtifact, type DownloadOptions } from './download.ts';

const MAX_LOG_BYTES = 256 * 1024;
const STOP_GRACE_MS = 5_000;
const PROBE_FAILED = 'Backend health probe failed';

interface Prepared {
  revision: string;
  platform: BackendPlatform;
  artifact_sha256: string;
  artifact_dir: string;
}

class Runtime {
  child: ChildProcess | undefined;
  exited: Promise<void> = Promise.resolve();
  port: number | undefined;
  revision: string | undefined;
  state: BackendState = 'stopped';
  detail: string | null = null;
  logs: Buffer[] = [];
  logBytes = 0;
  truncated = false;
  starting: Promise<void> | undefined;
  stopRequested = false;
}

export function currentPlatform(): BackendPlatform | undefined {
  if (platform() !== 'linux') return undefined;
  return arch() === 'x64' ? 'linux-amd64' : arch() === 'arm64' ? 'linux-arm64' : undefined;
}

async function sha256File(path: string): Promise<string> {
  const h = createHash('sha256');
  await pipeline(createReadStream(path), h);
  return h.digest('hex');
}

/** Unpacks a gzip tar: regular files and directories only, no absolute paths, no `..`, no duplicates. */
async function extractArchive(archive: string, dest: string, strip: number): Promise<void> {
  const { extract } = await import('tar-stream');
  const tar = extract();
  const unsafe = () => new Conflict('backend artifact contains an unsafe archive entry');
  const seen = new Set<string>();
  let count = 0;
  const done = pipeline(createReadStream(archive), createGunzip(), tar).catch((e: unknown) => {
    throw e instanceof Conflict ? e : new Conflict('backend artifact is not a valid gzip tar archive');
  });
  try {
    for await (const entry of tar) {
      const { name, type, mode = 0o644 } = entry.header;
      const parts = name.split('/').filter((p) => p !== '' && p !== '.');
      if (name.startsWith('/') || parts.includes('..')) throw unsafe();
      const rel = parts.slice(strip);
      if (rel.length === 0) {
        entry.resume();
        continue;
      }
      const key = rel.join('/');
      if (seen.has(key) || (type !== 'file' && type !== 'directory')) throw unsafe();
      seen.add(key);
      const target = resolve(dest, ...rel);
      if (relative(dest, target).startsWith('..')) throw unsafe();
      if (type === 'directory') {
        await mkdir(target, { recursive: true });
        entry.resume();
      } else {
        await mkdir(dirname(target), { recursive: true });
        const chunks: Buffer[] = [];
        for await (const c of entry) chunks.push(c as Buffer);
        await writeFile(target, Buffer.concat(chunks), { flag: 'wx' });
        // Read and execute only: the unpacked revision is what was approved.
        await chmod(target, mode & 0o555);
      }
      count++;
    }
    await done;
  } catch (e) {
    tar.destroy();
    await done.catch(() => undefined);
    throw e instanceof Conflict ? e : new Conflict('backend artifact is not a valid gzip tar archive');
  }
  if (count === 0) throw new Conflict('backend artifact contains no files after stripping');
}

function freePort(): Promise<number> {
  return new Promise((ok, fail) => {
    const s = createServer();
    s.once('error', fail);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => ok(port));
    });
  });
}

function probe(port: number, path: string): Promise<boolean> {
  return new Promise((ok) => {
    const req = request({ host: '127.0.0.1', port, path, method: 'GET', timeout: 1000 }, (res) => {
      res.resume();
      ok((res.statusCode ?? 0) >= 200 && (res.statusCode ?? 0) < 400);
    });
    req.on('timeout', () => req.destroy());
    req.on('error', () => ok(false));
    req.end();
  });
}

/** A process's start time (clock ticks since boot, /proc/<pid>/stat field 22): tells a reused pid apart. */
function startTime(pid: number): string | undefined {
  try {
    return readFileSync(`/proc/${pid}/stat`, 'utf8').split(')').pop()!.trim().split(/\s+/)[19];
  } catch {
    return undefined;
  }
}

/** Which server started which backend group: left behind when a server dies without stopping them. */
interface RunRecord {
  name: string;
  pgid: number;
  start_time: string;
  server_pid: number;
  server_start_time: string;
}

/** Some process of the group is alive (zombies, whose parent has not reaped them yet, do not count). */
function groupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
  } catch {
    return false;
  }
  try {
    for (const pid of readdirSync('/proc')) {
      if (!/^\d+$/.test(pid)) continue;
      let fields: string[];
      try {
        fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(')').pop()!.trim().split(/\s+/);
      } catch {
        continue;
      }
      if (Number(fields[2]) === pgid && fields[0] !== 'Z') return true;
    }
    return false;
  } catch {
    return true; // no /proc: the signal's answer is all there is
  }
}

async function waitGone(pgid: number, ms: number): Promise<boolean> {
  const until = Date.now() + ms;
  while (groupAlive(pgid) && Date.now() < until) await new Promise((ok) => setTimeout(ok, 25));
  return !groupAlive(pgid);
}

function signalGroup(pgid: number, sig: NodeJS.Signals): void {
  try {
    process.kill(-pgid, sig);
  } catch {
    /* gone already */
  }
}

export class CanvasBackends {
  readonly #ext: CanvasExtensions;
  readonly #dirs: { artifacts: string; downloads: string; data: string; approvals: string; run: string };
  readonly #download: DownloadOptions;
  readonly #runtimes = new Map<string, Runtime>();
  /** One operation per extension at a time (prepare, start, stop, delete_data). */
  readonly #queues = new Map<string, Promise<unknown>>();

  constructor(ext: CanvasExtensions, stateDir: string, download: DownloadOptions = {}) {
    this.#ext = ext;
    this.#download = download;
    this.#dirs = { artifacts: join(stateDir, 'artifacts'), downloads: join(stateDir, 'downloads'), data: join(stateDir, 'data'), approvals: join(stateDir, 'approvals'), run: join(stateDir, 'run') };
  }

  #writeRunRecord(name: string, pgid: number): void {
    const own = startTime(pgid);
    const server = startTime(process.pid);
    if (!own || !server) return;
    mkdirSync(this.#dirs.run, { recursive: true });
    const rec: RunRecord = { name, pgid, start_time: own, server_pid: process.pid, server_start_time: server };
    writeFileSync(join(this.#dirs.run, `${pgid}.json`), JSON.stringify(rec));
  }

  /**
   * Stops the backends a server that died without stopping them left running (they run in groups of
   * their own, so they outlive it). A group is signalled only when its leader is the very process
   * recorded (same start time) and runs from this server's artifacts: a reused pid is never touched.
   */
  async reapOrphans(): Promise<void> {
    let files: string[] = [];
    try {
      files = readdirSync(this.#dirs.run).filter((f) => f.endsWith('.json'));
    } catch {
      return;
    }
    for (const f of files) {
      const path = join(this.#dirs.run, f);
      let rec: RunRecord | undefined;
      try {
        rec = JSON.parse(readFileSync(path, 'utf8')) as RunRecord;
      } catch {
        /* unreadable: dropped */
      }
      if (rec && startTime(rec.server_pid) === rec.server_start_time) continue; // its server still runs
      if (rec && startTime(rec.pgid) === rec.start_time && this.#isOurs(rec)) {
        signalGroup(rec.pgid, 'SIGTERM');
        if (!(await waitGone(rec.pgid, STOP_GRACE_MS))) {
          signalGroup(rec.pgid, 'SIGKILL');
          await waitGone(rec.pgid, STOP_GRACE_MS);
        }
      }
      rmSync(path, { force: true });
    }
  }

  #isOurs(rec: RunRecord): boolean {
    try {
      const prefix = `${realpathSync(join(this.#dirs.artifacts, rec.name))}/`;
      return readFileSync(`/proc/${rec.pgid}/cmdline`, 'utf8').split('\0').some((a) => a.startsWith(prefix));
    } catch {
      return false;
    }
  }

  #locked<T>(name: string, fn: () => Promise<T>): Promise<T> {
    const prev = this.#queues.get(name) ?? Promise.resolve();
    const next = prev.then(fn, fn);
    this.#queues.set(name, next.catch(() => undefined));
    return next;
  }

  #runtime(name: string): Runtime {
    let rt = this.#runtimes.get(name);
    if (!rt) this.#runtimes.set(name, (rt = new Runtime()));
    return rt;
  }

  /** The revision a client approves: the installed commit, else a digest of the manifest. */
  revision(name: string): string | null {
    const rec = this.#ext.record(name);
    const m = this.#ext.manifest(name);
    if (!rec || !m) return null;
    return rec.resolved_ref ?? `sha256:${createHash('sha256').update(canonicalManifest(m)).digest('hex')}`;
  }

  #parts(name: string): { backend: CanvasExtensionBackend; artifact: NonNullable<CanvasExtensionBackend['artifacts']['linux-amd64']>; platform: BackendPlatform } | undefined {
    const m = this.#ext.manifest(name);
    const p = currentPlatform();
    const artifact = p && m?.backend?.artifacts[p];
    return artifact && m.backend ? { backend: m.backend, artifact, platform: p } : undefined;
  }

  #approval(name: string): string {
    return join(this.#dirs.approvals, `${name}.json`);
  }

  #prepared(name: string): Prepared | undefined {
    try {
      return JSON.parse(readFileSync(this.#approval(name), 'utf8')) as Prepared;
    } catch {
      return undefined;
    }
  }

  /** A new install or forced reinstall must be approved again. */
  invalidateApproval(name: string): void {
    rmSync(this.#approval(name), { force: true });
  }

  #status(name: string): BackendStatus {
    const m = this.#ext.manifest(name);
    const rt = this.#runtimes.get(name);
    let state: BackendState = 'stopped';
    let detail: string | null = null;
    if (!m) [state, detail] = ['missing', 'Canvas App is not installed or its manifest is invalid'];
    else if (!m.backend) [state, detail] = ['unsupported', 'Canvas App does not declare a backend'];
    else if (!this.#parts(name)) [state, detail] = ['unsupported', 'Canvas App backend does not support this platform'];
    else if (rt && ['starting', 'ready', 'unhealthy'].includes(rt.state)) [state, detail] = [rt.state, rt.detail];
    const live = rt?.child && rt.child.exitCode === null && rt.child.signalCode === null;
    return { name, state, revision: this.revision(name), prepared_revision: this.#prepared(name)?.revision ?? null, pid: live ? rt.child!.pid! : null, port: live ? rt.port! : null, detail };
  }

  /** Re-probes a running backend, so a hung one reads `unhealthy` (and a recovered one `ready` again). */
  status(name: string): Promise<BackendStatus> {
    return this.#locked(name, async () => {
      const rt = this.#runtimes.get(name);
      const m = this.#ext.manifest(name);
      if (rt?.port !== undefined && rt.child && (rt.state === 'ready' || (rt.state === 'unhealthy' && rt.detail === PROBE_FAILED)) && m?.backend) {
        const ok = await probe(rt.port, m.backend.health?.path ?? '/health');
        [rt.state, rt.detail] = ok ? ['ready', null] : ['unhealthy', PROBE_FAILED];
      }
      return this.#status(name);
    });
  }

  prepare(name: string, revision: string): Promise<BackendStatus> {
    return this.#locked(name, async () => {
      const now = this.#status(name);
      if (now.state === 'missing' || now.state === 'unsupported') return now;
      if (revision !== now.revision) throw new Conflict('approval revision does not match installed revision');
      const done = this.#prepared(name);
      if (done?.revision === revision && existsSync(done.artifact_dir)) return now;
      const { artifact, platform: p } = this.#parts(name)!;
      let archive: string | undefined;
      if (artifact.path) {
        archive = containedFile(this.#ext.packageDir(name), artifact.path);
        if (!archive) throw new Conflict('backend artifact is not a contained regular file');
        if ((await sha256File(archive)) !== artifact.sha256) throw new Conflict('backend artifact checksum does not match manifest');
      } else {
        // The manifest's checksum is checked while the bytes arrive (download.ts).
        archive = await downloadArtifact(artifact.url!, artifact.sha256, this.#dirs.downloads, this.#download);
      }
      const dir = join(this.#dirs.artifacts, name, artifact.sha256);
      if (!existsSync(dir)) {
        mkdirSync(dirname(dir), { recursive: true });
        const tmp = mkdtempSync(join(dirname(dir), `.${artifact.sha256}.`));
        try {
          await extractArchive(archive, tmp, artifact.strip_components);
          renameSync(tmp, dir);
        } finally {
          rmSync(tmp, { recursive: true, force: true });
        }
      }
      mkdirSync(this.#dirs.approvals, { recursive: true });
      const state: Prepared = { revision, platform: p, artifact_sha256: artifact.sha256, artifact_dir: dir };
      writeFileSync(`${this.#approval(name)}.tmp`, JSON.stringify(state));
      renameSync(`${this.#approval(name)}.tmp`, this.#approval(name));
      return this.#status(name);
    });
  }

  /** Starts the prepared revision and waits until its health probe answers (or it fails, or stop() is asked). */
  async start(name: string, revision: string): Promise<BackendStatus> {
    const waiting = await this.#locked(name, async () => {
      const now = this.#status(name);
      if (now.state === 'missing' || now.state === 'unsupported') return now;
      const rt = this.#runtime(name);
      if (rt.child && rt.child.exitCode === null && rt.child.signalCode === null) {
        if (rt.revision !== revision) throw new Conflict('a different backend revision is already running');
        return rt.starting ? { wait: rt.starting } : this.#status(name);
      }
      if (revision !== now.revision) throw new Conflict('approval revision does not match installed revision');
      const prep = this.#prepared(name);
      if (!prep || prep.revision !== revision) throw new Conflict('backend revision must be prepared before start');
      const { backend, artifact, platform: p } = this.#parts(name)!;
      const expected = resolve(this.#dirs.artifacts, name, artifact.sha256);
      if (!existsSync(prep.artifact_dir)) throw new Conflict('prepared backend artifact is missing');
      if (prep.platform !== p || prep.artifact_sha256 !== artifact.sha256 || realpathSync(prep.artifact_dir) !== realpathSync(expected)) throw new Conflict('prepared backend metadata does not match manifest');
      await this.#terminate(rt);
      const dataDir = join(this.#dirs.data, name);
      const home = join(dataDir, 'home');
      mkdirSync(home, { recursive: true });
      const port = await freePort();
      const argv = backend.argv.map((a) => a.replaceAll('{port}', String(port)).replaceAll('{data_dir}', dataDir).replaceAll('{artifact_dir}', expected));
      const exe = this.#executable(argv[0]!, expected);
      Object.assign(rt, { state: 'starting', detail: null, port, revision, logs: [], logBytes: 0, truncated: false, stopRequested: false });
      let child: ChildProcess;
      try {
        child = spawn(exe, argv.slice(1), { cwd: realpathSync(this.#ext.packageDir(name)), env: backendEnv(backend, home), detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
      } catch (e) {
        [rt.state, rt.detail] = ['unhealthy', (e as Error).message];
        return this.#status(name);
      }
      rt.child = child;
      if (child.pid) this.#writeRunRecord(name, child.pid);
      rt.exited = new Promise<void>((ok) => child.once('close', () => ok()));
      child.once('error', (e) => {
        if (!rt.stopRequested) [rt.state, rt.detail] = ['unhealthy', e.message];
      });
      child.stdout!.on('data', (c: Buffer) => this.#log(rt, '[stdout] ', c));
      child.stderr!.on('data', (c: Buffer) => this.#log(rt, '[stderr] ', c));
      // Supervision: an exit is seen when it happens, not at the next status poll.
      child.once('exit', (code, signal) => {
        if (rt.child !== child || rt.stopRequested) return;
        [rt.state, rt.detail] = ['unhealthy', `Backend exited with code ${code ?? signal}`];
        if (child.pid && groupAlive(child.pid)) signalGroup(child.pid, 'SIGKILL'); // orphaned descendants
      });
      rt.starting = this.#awaitHealthy(rt, child, backend, port).finally(() => (rt.starting = undefined));
      // Not awaited under the lock: status() and stop() must be answered while it comes up.
      return { wait: rt.starting };
    });
    if ('state' in waiting) return waiting;
    await waiting.wait;
    return this.#locked(name, async () => {
      const rt = this.#runtime(name);
      if (rt.state === 'unhealthy') await this.#terminate(rt);
      return this.#status(name);
    });
  }

  #executable(path: string, artifactDir: string): string {
    try {
      const exe = realpathSync(path);
      const r = relative(realpathSync(artifactDir), exe);
      if (r.startsWith('..') || isAbsolute(r) || !statSync(exe).isFile()) throw new Error();
      accessSync(exe, constants.X_OK);
      return exe;
    } catch {
      throw new Conflict('backend executable must be an executable regular file inside the prepared artifact');
    }
  }

  async #awaitHealthy(rt: Runtime, child: ChildProcess, backend: CanvasExtensionBackend, port: number): Promise<void> {
    const h = { path: '/health', timeout_seconds: 30, interval_seconds: 0.1, ...backend.health };
    const deadline = Date.now() + h.timeout_seconds * 1000;
    while (Date.now() < deadline) {
      if (rt.stopRequested || rt.child !== child) return;
      if (child.exitCode !== null || child.signalCode !== null) {
        [rt.state, rt.detail] = ['unhealthy', `backend exited with code ${child.exitCode ?? child.signalCode}`];
        return;
      }
      if (await probe(port, h.path)) {
        if (!rt.stopRequested && rt.child === child && child.exitCode === null) [rt.state, rt.detail] = ['ready', null];
        return;
      }
      await new Promise((ok) => setTimeout(ok, h.interval_seconds * 1000));
    }
    if (!rt.stopRequested) [rt.state, rt.detail] = ['unhealthy', 'backend health check timed out'];
  }

  #log(rt: Runtime, label: string, chunk: Buffer): void {
    const entry = Buffer.concat([Buffer.from(label), chunk]);
    rt.logs.push(entry);
    rt.logBytes += entry.length;
    while (rt.logBytes > MAX_LOG_BYTES && rt.logs.length) {
      rt.logBytes -= rt.logs.shift()!.length;
      rt.truncated = true;
    }
  }

  /** Takes the process group down: SIGTERM, then SIGKILL after a grace; waits for the group to be gone. */
  async #terminate(rt: Runtime): Promise<void> {
    const child = rt.child;
    if (!child?.pid) return;
    const pgid = child.pid;
    if (groupAlive(pgid)) {
      signalGroup(pgid, 'SIGTERM');
      if (!(await waitGone(pgid, STOP_GRACE_MS))) {
        signalGroup(pgid, 'SIGKILL');
        await waitGone(pgid, STOP_GRACE_MS);
      }
    }
    await rt.exited;
    rmSync(join(this.#dirs.run, `${pgid}.json`), { force: true });
    rt.child = undefined;
    rt.port = undefined;
  }

  hasRunning(): boolean {
    return [...this.#runtimes.values()].some((rt) => rt.starting || (rt.child?.pid && groupAlive(rt.child.pid)));
  }

  async stop(name: string): Promise<BackendStatus> {
    const rt = this.#runtimes.get(name);
    if (rt) rt.stopRequested = true; // a health wait in progress gives up, so the lock is free soon
    return this.#locked(name, async () => {
      if (rt) {
        await this.#terminate(rt);
        [rt.state, rt.detail] = ['stopped', null];
      }
      return this.#status(name);
    });
  }

  logs(name: string, limit: number): BackendLogs {
    const rt = this.#runtimes.get(name);
    if (!rt) return { name, logs: '', truncated: false };
    const all = Buffer.concat(rt.logs);
    return { name, logs: all.subarray(Math.max(0, all.length - limit)).toString('utf8'), truncated: rt.truncated || all.length > limit };
  }

  deleteData(name: string): Promise<BackendStatus> {
    return this.#locked(name, async () => {
      const rt = this.#runtimes.get(name);
      if (rt && (rt.starting || (rt.child?.pid && groupAlive(rt.child.pid)))) throw new Conflict('stop the backend before deleting its data');
      rmSync(join(this.#dirs.data, name), { recursive: true, force: true });
      return this.#status(name);
    });
  }

  /** The only address the proxy dials: a live, ready backend's loopback port. */
  readyPort(name: string): number | undefined {
    const rt = this.#runtimes.get(name);
    if (!rt || rt.state !== 'ready' || rt.port === undefined || !rt.child || rt.child.exitCode !== null || rt.child.signalCode !== null) return undefined;
    return rt.port;
  }

  async shutdown(): Promise<void> {
    await Promise.all([...this.#runtimes.keys()].map((n) => this.stop(n).catch(() => undefined)));
  }
}

/** Only the allow-listed names the manifest asks for, and a HOME of its own: no keys, no session key, no secrets. */
function backendEnv(backend: CanvasExtensionBackend, home: string): Record<string, string> {
  const env: Record<string, string> = {};
  // baseEnv() is what hooks and one-shot commands start from; the backend gets less: only what it names.
  const allowed = new Set<string>(INHERITABLE_ENV);
  const source = { ...process.env, ...baseEnv() };
  for (const n of backend.inherit_environment) if (allowed.has(n) && source[n] !== undefined) env[n] = source[n]!;
  env['HOME'] = home;
  return env;
}

