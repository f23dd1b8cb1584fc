// Canvas extensions through the agent server's HTTP API, with real pieces: an extension package
// written here, its backend (a Node server the agent server unpacks and starts), and real HTTP and
// WebSocket through the /app-backends proxy.
import { execFileSync, spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { WebSocket } from 'ws';
import { startTestServer, tempDir, TEST_KEY, type TestServer } from '../test-support.ts';
import { writeTestExtension } from '../canvas/test-extension.ts';

const CONTROL = 'http://localhost:5173'; // the Canvas page (a loopback origin other than the ingress)

function freePort(): Promise<number> {
  return new Promise((ok) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => ok(port));
    });
  });
}

interface Res {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
}

/** Raw HTTP (fetch would not let us set Host). */
function raw(url: string, init: { method?: string; headers?: Record<string, string>; body?: string } = {}): Promise<Res> {
  return new Promise((ok, fail) => {
    const u = new URL(url);
    // The path as written (a URL object would resolve dot segments, %2e%2e included).
    const path = url.slice(u.origin.length);
    const req = request({ host: u.hostname, port: u.port, path, method: init.method ?? 'GET', headers: { ...init.headers, ...(init.body !== undefined ? { 'content-length': String(Buffer.byteLength(init.body)) } : {}) } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => ok({ status: res.statusCode ?? 0, headers: res.headers, text: Buffer.concat(chunks).toString() }));
    });
    req.on('error', fail);
    req.end(init.body);
  });
}

describe('Canvas extensions and app backends', () => {
  let dir: ReturnType<typeof tempDir>;
  let s: TestServer;
  let ingress: string;
  /** Added to the bridge's clock: sessions expire without waiting. */
  let skew = 0;
  const name = 'hello-app';

  beforeAll(async () => {
    dir = tempDir();
    const port = await freePort();
    ingress = `http://127.0.0.1:${port}`;
    s = await startTestServer(dir.path, { port, appBackends: { publicUrl: ingress, now: () => Date.now() + skew } });
  });
  afterAll(async () => {
    await s.close();
    dir.remove();
  });

  it('refuses packages that are not valid or whose files escape, with field paths', async () => {
    const bad = join(dir.path, 'bad');
    writeTestExtension(bad, 'bad-app', { entrypoint: '../outside.js', contributes: { pages: [{ id: 'a', title: 'A', path: '/x' }, { id: 'a', title: 'B', path: '/y' }] } });
    let r = await s.api('/api/canvas-extensions/install', { method: 'POST', body: { source: bad } });
    expect(r.status).toBe(422);
    expect(r.body.detail.map((i: { loc: unknown[] }) => i.loc.join('.'))).toContain('manifest.entrypoint');

    writeTestExtension(bad, 'bad-app', { entrypoint: 'dist/link.js' });
    writeFileSync(join(dir.path, 'secret.txt'), 'not yours');
    symlinkSync(join(dir.path, 'secret.txt'), join(bad, 'dist', 'link.js'));
    r = await s.api('/api/canvas-extensions/install', { method: 'POST', body: { source: bad } });
    expect(r.status).toBe(422);
    expect(JSON.stringify(r.body.detail)).toMatch(/inside the extension package/);

    writeTestExtension(bad, 'bad-app', { backend: { schema_version: 1, artifacts: { 'linux-amd64': { path: 'x.tar.gz', sha256: 'a'.repeat(64) } }, argv: ['/bin/sh', '{home}'], inherit_environment: ['OH_SECRET_KEY'] } });
    r = await s.api('/api/canvas-extensions/install', { method: 'POST', body: { source: bad } });
    expect(r.status).toBe(422);
    const locs = r.body.detail.map((i: { loc: unknown[] }) => i.loc.join('.'));
    expect(locs.some((l: string) => l.startsWith('manifest.backend.inherit_environment'))).toBe(true);

    expect((await s.api('/api/canvas-extensions/install', { method: 'POST', body: { source: join(dir.path, 'nowhere') } })).status).toBe(400);
    expect((await s.api('/api/canvas-extensions/install', { method: 'POST', body: {} })).body.detail[0].loc).toEqual(['body', 'source']);
    expect((await s.api('/api/canvas-extensions/installed/Bad_Name')).status).toBe(422);
    expect((await s.api('/api/canvas-extensions/installed', { key: 'wrong' })).status).toBe(401);
  });

  it('installs disabled, lists, serves the bundle and icon, enables; a reinstall needs force', async () => {
    const src = writeTestExtension(join(dir.path, 'src'), name);
    const r = await s.api('/api/canvas-extensions/install', { method: 'POST', body: { source: src.dir } });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ name, version: '1.0.0', enabled: false, source: src.dir, requested_ref: null, resolved_ref: null, manifest: { display_name: 'Hello App', contributes: { pages: [{ id: 'main', path: '/hello' }] } } });
    expect((await s.api('/api/canvas-extensions/install', { method: 'POST', body: { source: src.dir } })).status).toBe(409);
    expect((await s.api('/api/canvas-extensions/install', { method: 'POST', body: { source: src.dir, force: true } })).status).toBe(200);
    expect((await s.api('/api/canvas-extensions/installed')).body.canvas_extensions.map((e: { name: string }) => e.name)).toEqual([name]);
    expect((await s.api('/api/canvas-extensions/installed/nope')).status).toBe(404);

    const bundle = await fetch(`${s.url}/api/canvas-extensions/installed/${name}/bundle`, { headers: { 'x-session-api-key': TEST_KEY } });
    expect(bundle.status).toBe(200);
    expect(bundle.headers.get('cache-control')).toBe('no-cache');
    expect(await bundle.text()).toBe(src.bundle);
    const icon = await fetch(`${s.url}/api/canvas-extensions/installed/${name}/icon`, { headers: { 'x-session-api-key': TEST_KEY } });
    expect(icon.headers.get('content-type')).toBe('image/svg+xml');
    expect(icon.headers.get('content-security-policy')).toContain('sandbox');

    expect((await s.api('/server_info', { key: null })).body).toMatchObject({ app_backend_ingress_url: ingress, capabilities: expect.arrayContaining(['canvas_app_backend_bridge_v1']) });
    expect((await s.api(`/api/canvas-extensions/installed/${name}`, { method: 'PATCH', body: { enabled: true } })).body).toEqual({ name, enabled: true });
    expect((await s.api(`/api/canvas-extensions/installed/${name}`)).body.enabled).toBe(true);
  });

  it('installs from a git repository at a ref and a subdirectory; the commit is the revision to approve', async () => {
    const repo = join(dir.path, 'repo');
    writeTestExtension(join(repo, 'apps', 'git-app'), 'git-app');
    const git = (...args: string[]) => execFileSync('git', ['-c', 'user.name=T', '-c', 'user.email=t@example.com', ...args], { cwd: repo, encoding: 'utf8' }).trim();
    git('init', '-q', '-b', 'main');
    git('add', '.');
    git('commit', '-qm', 'app');
    git('tag', 'v1');
    const sha = git('rev-parse', 'HEAD');
    git('commit', '-q', '--allow-empty', '-m', 'later');
    const r = await s.api('/api/canvas-extensions/install', { method: 'POST', body: { source: `file://${repo}`, ref: 'v1', repo_path: 'apps/git-app' } });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ name: 'git-app', requested_ref: 'v1', resolved_ref: sha, repo_path: 'apps/git-app', enabled: false });
    expect((await s.api('/api/canvas-extensions/installed/git-app/backend')).body.revision).toBe(sha);
    expect((await s.api('/api/canvas-extensions/install', { method: 'POST', body: { source: `file://${repo}`, ref: 'no-such-ref', repo_path: 'apps/git-app', force: true } })).status).toBe(400);
    expect((await s.api('/api/canvas-extensions/install', { method: 'POST', body: { source: `file://${repo}`, repo_path: '../..', force: true } })).status).toBe(400);
    expect((await s.api('/api/canvas-extensions/installed/git-app', { method: 'DELETE' })).status).toBe(200);
  });

  it('stops serving a bundle that became a link out of the package', async () => {
    const other = writeTestExtension(join(dir.path, 'linked'), 'linked-app');
    const r = await s.api('/api/canvas-extensions/install', { method: 'POST', body: { source: other.dir } });
    const installed = r.body.install_path as string;
    rmSync(join(installed, 'dist', 'index.js'));
    symlinkSync(join(dir.path, 'secret.txt'), join(installed, 'dist', 'index.js'));
    expect((await s.api('/api/canvas-extensions/installed/linked-app/bundle')).status).toBe(404);
    expect((await s.api('/api/canvas-extensions/installed/linked-app')).body.manifest).toBeNull();
    expect((await s.api('/api/canvas-extensions/installed/linked-app', { method: 'DELETE' })).status).toBe(200);
  });

  it('approves a revision, starts the backend with a scrubbed environment, proxies HTTP and WebSocket to it only, and stops it', async () => {
    process.env['CANVAS_TEST_LEAK'] = 'must-not-reach-the-backend';
    try {
      let st = await s.api(`/api/canvas-extensions/installed/${name}/backend`);
      expect(st.body).toMatchObject({ name, state: 'stopped', prepared_revision: null, pid: null });
      const revision = st.body.revision as string;
      expect(revision).toMatch(/^sha256:[0-9a-f]{64}$/);
      expect((await s.api(`/api/canvas-extensions/installed/${name}/backend/start`, { method: 'POST', body: { revision } })).status).toBe(409); // not prepared
      expect((await s.api(`/api/canvas-extensions/installed/${name}/backend/prepare`, { method: 'POST', body: { revision: 'sha256:other' } })).status).toBe(409);
      st = await s.api(`/api/canvas-extensions/installed/${name}/backend/prepare`, { method: 'POST', body: { revision } });
      expect(st.body).toMatchObject({ state: 'stopped', prepared_revision: revision });
      st = await s.api(`/api/canvas-extensions/installed/${name}/backend/start`, { method: 'POST', body: { revision } });
      expect(st.body).toMatchObject({ state: 'ready', revision });
      const pid = st.body.pid as number;
      expect(() => process.kill(pid, 0)).not.toThrow();

      // The session: the key, the ingress host, the Canvas page's Origin.
      const sessionUrl = `${ingress}/app-backends/${name}/session`;
      expect((await raw(sessionUrl, { method: 'POST', headers: { origin: CONTROL } })).status).toBe(401);
      expect((await raw(sessionUrl, { method: 'POST', headers: { 'x-session-api-key': TEST_KEY } })).status).toBe(403);
      expect((await raw(sessionUrl, { method: 'POST', headers: { 'x-session-api-key': TEST_KEY, origin: ingress } })).status).toBe(409);
      expect((await raw(sessionUrl, { method: 'POST', headers: { 'x-session-api-key': TEST_KEY, origin: CONTROL, host: 'elsewhere.test' } })).status).toBe(421);
      const made = await raw(sessionUrl, { method: 'POST', headers: { 'x-session-api-key': TEST_KEY, origin: CONTROL } });
      expect(made.status).toBe(200);
      expect(JSON.parse(made.text)).toMatchObject({ ingress_url: `${ingress}/app-backends/${name}/`, iframe_sandbox: expect.stringContaining('allow-scripts') });
      const setCookie = String(made.headers['set-cookie']);
      expect(setCookie).toMatch(new RegExp(`^oh_app_backend_session=[\\w-]{40,}; HttpOnly; Max-Age=300; Path=/app-backends/${name}; SameSite=none; Secure; Partitioned$`));
      expect(setCookie).not.toContain(TEST_KEY);
      const cookie = setCookie.split(';')[0]!;

      // HTTP through the proxy: no cookie, no key and no auth query parameter reach the backend.
      expect((await raw(`${ingress}/app-backends/${name}/echo`)).status).toBe(401);
      expect((await raw(`${ingress}/app-backends/${name}/echo`, { headers: { 'x-session-api-key': TEST_KEY } })).status).toBe(401);
      const echo = await raw(`${ingress}/app-backends/${name}/echo/a?x=1&session_api_key=${TEST_KEY}`, { headers: { cookie, 'x-session-api-key': TEST_KEY, authorization: 'Bearer t' } });
      expect(echo.status).toBe(200);
      expect(echo.headers['x-backend']).toBe('yes');
      const seen = JSON.parse(echo.text);
      expect(seen.url).toBe('/echo/a?x=1');
      expect(seen.headers).not.toHaveProperty('cookie');
      expect(seen.headers).not.toHaveProperty('x-session-api-key');
      expect(seen.headers).not.toHaveProperty('authorization');
      expect(seen.headers.host).toMatch(/^127\.0\.0\.1:\d+$/);
      // Writes need the app's own Origin; the body streams through.
      expect((await raw(`${ingress}/app-backends/${name}/echo`, { method: 'POST', headers: { cookie, origin: CONTROL }, body: 'x' })).status).toBe(403);
      const posted = await raw(`${ingress}/app-backends/${name}/echo`, { method: 'POST', headers: { cookie, origin: ingress, 'content-type': 'text/plain' }, body: 'payload' });
      expect(JSON.parse(posted.text)).toMatchObject({ method: 'POST', body: 'payload' });
      // No way out of the backend: traversal, encoded or not, and redirects elsewhere.
      for (const p of ['/%2e%2e/x', '/a/%252e%252e/x', '/a/..%5cx']) expect((await raw(`${ingress}/app-backends/${name}${p}`, { headers: { cookie } })).status, p).toBe(400);
      expect((await raw(`${ingress}/app-backends/${name}/redirect`, { headers: { cookie } })).status).toBe(502);
      // The ingress only: the same cookie on the control origin is misdirected.
      expect((await raw(`${ingress}/app-backends/${name}/echo`, { headers: { cookie, host: 'localhost:1' } })).status).toBe(421);
      // The environment: PATH (asked for) and its own HOME; nothing of the server's.
      const env = JSON.parse((await raw(`${ingress}/app-backends/${name}/env`, { headers: { cookie } })).text) as string[];
      expect(env.filter((k) => !['PATH', 'HOME'].includes(k))).toEqual([]); // node may add nothing else
      expect(env).toContain('PATH');

      // WebSocket through the proxy.
      const ws = new WebSocket(`${ingress.replace('http', 'ws')}/app-backends/${name}/socket?session_api_key=${TEST_KEY}`, ['other', 'canvas.v1'], { headers: { cookie, origin: ingress } });
      const frames: string[] = [];
      const closed = new Promise<number>((ok) => ws.on('close', (code) => ok(code)));
      ws.on('message', (m) => frames.push(String(m)));
      await new Promise((ok) => ws.once('open', ok));
      ws.send('ping');
      await vi.waitFor(() => expect(frames).toHaveLength(2));
      expect(JSON.parse(frames[0]!)).toEqual({ hello: '/socket', cookie: null, key: null, protocol: 'canvas.v1' });
      expect(ws.protocol).toBe('canvas.v1'); // the backend's choice, answered to the browser
      expect(frames[1]).toBe('echo:ping');
      // A backend that refuses the socket: the browser's is opened and closed 1011, as OpenHands does.
      const refused = new WebSocket(`${ingress.replace('http', 'ws')}/app-backends/${name}/no-ws`, { headers: { cookie, origin: ingress } });
      expect(await new Promise((ok) => refused.on('close', (code) => ok(code)))).toBe(1011);
      // Refused without the cookie, or from another Origin.
      for (const headers of [{ origin: ingress }, { cookie, origin: CONTROL }]) {
        const bad = new WebSocket(`${ingress.replace('http', 'ws')}/app-backends/${name}/socket`, { headers });
        expect(await new Promise((ok) => bad.on('unexpected-response', (_q, r) => ok(r.statusCode)).on('open', () => ok('open')))).toBe(403);
      }

      // Stop: the process group is gone, the socket and the session end.
      st = await s.api(`/api/canvas-extensions/installed/${name}/backend/stop`, { method: 'POST' });
      expect(st.body).toMatchObject({ state: 'stopped', pid: null, port: null });
      expect(() => process.kill(pid, 0)).toThrow();
      expect(await closed).toBe(1000);
      expect((await raw(`${ingress}/app-backends/${name}/echo`, { headers: { cookie } })).status).toBe(503);
      expect((await s.api(`/api/canvas-extensions/installed/${name}/backend/logs`)).body.logs).toMatch(/\[stdout\] listening on \d+[\s\S]*stopping/);
    } finally {
      delete process.env['CANVAS_TEST_LEAK'];
    }
  });

  it('refuses an artifact whose checksum differs or whose archive holds a link or climbs out', async () => {
    const ext = writeTestExtension(join(dir.path, 'evil'), 'evil-app');
    const manifestFile = join(ext.dir, 'canvas-extension.json');
    const withArtifact = async (sha256: string) => {
      const m = JSON.parse(readFileSync(manifestFile, 'utf8'));
      for (const a of Object.values<{ sha256: string }>(m.backend.artifacts)) a.sha256 = sha256;
      writeFileSync(manifestFile, JSON.stringify(m));
      await s.api('/api/canvas-extensions/install', { method: 'POST', body: { source: ext.dir, force: true } });
      const { revision } = (await s.api('/api/canvas-extensions/installed/evil-app/backend')).body;
      return s.api('/api/canvas-extensions/installed/evil-app/backend/prepare', { method: 'POST', body: { revision } });
    };
    let r = await withArtifact('0'.repeat(64));
    expect([r.status, r.body.detail]).toEqual([409, 'backend artifact checksum does not match manifest']);
    const tarWith = (build: (root: string) => string[]) => {
      const root = join(dir.path, `art-${Math.random().toString(36).slice(2)}`);
      mkdirSync(join(root, 'bin'), { recursive: true });
      const entries = build(root);
      execFileSync('tar', ['-czf', join(ext.dir, 'backend', 'server.tar.gz'), '-C', root, ...entries]);
      return createHash('sha256').update(readFileSync(join(ext.dir, 'backend', 'server.tar.gz'))).digest('hex');
    };
    r = await withArtifact(tarWith((root) => (symlinkSync('/bin/sh', join(root, 'bin', 'server')), ['bin'])));
    expect([r.status, r.body.detail]).toEqual([409, 'backend artifact contains an unsafe archive entry']);
    r = await withArtifact(tarWith((root) => (writeFileSync(join(root, 'x'), 'x'), ['--transform=s,^x,../../escaped,', 'x'])));
    expect([r.status, r.body.detail]).toEqual([409, 'backend artifact contains an unsafe archive entry']);
    expect(existsSync(join(dir.path, 'data', 'canvas-extensions', 'backends', 'escaped'))).toBe(false);
    expect((await s.api('/api/canvas-extensions/installed/evil-app/backend')).body.prepared_revision).toBeNull();
    await s.api('/api/canvas-extensions/installed/evil-app', { method: 'DELETE' });
  });

  it('sees a backend exit at once, ends a session with DELETE, and uninstalls (data kept until deleted)', async () => {
    const { revision } = (await s.api(`/api/canvas-extensions/installed/${name}/backend`)).body as { revision: string };
    expect((await s.api(`/api/canvas-extensions/installed/${name}/backend/start`, { method: 'POST', body: { revision } })).body.state).toBe('ready');
    const sessionUrl = `${ingress}/app-backends/${name}/session`;
    const made = await raw(sessionUrl, { method: 'POST', headers: { 'x-session-api-key': TEST_KEY, origin: CONTROL } });
    const cookie = String(made.headers['set-cookie']).split(';')[0]!;
    const ended = await raw(sessionUrl, { method: 'DELETE', headers: { 'x-session-api-key': TEST_KEY, origin: CONTROL, cookie } });
    expect(ended.status).toBe(204);
    expect(String(ended.headers['set-cookie'])).toMatch(/^oh_app_backend_session=""; HttpOnly; Max-Age=0;/);
    expect((await raw(`${ingress}/app-backends/${name}/echo`, { headers: { cookie } })).status).toBe(401);

    // A session is good for 5 minutes.
    const short = String((await raw(sessionUrl, { method: 'POST', headers: { 'x-session-api-key': TEST_KEY, origin: CONTROL } })).headers['set-cookie']).split(';')[0]!;
    skew = 299_000;
    expect((await raw(`${ingress}/app-backends/${name}/echo`, { headers: { cookie: short } })).status).toBe(200);
    skew = 300_000;
    expect((await raw(`${ingress}/app-backends/${name}/echo`, { headers: { cookie: short } })).status).toBe(401);
    skew = 0;
    expect((await raw(`${ingress}/app-backends/${name}/echo`, { headers: { cookie: short } })).status).toBe(401); // gone, not just late

    const again = String((await raw(sessionUrl, { method: 'POST', headers: { 'x-session-api-key': TEST_KEY, origin: CONTROL } })).headers['set-cookie']).split(';')[0]!;
    await raw(`${ingress}/app-backends/${name}/exit?code=3`, { headers: { cookie: again } });
    await vi.waitFor(async () => expect((await s.api(`/api/canvas-extensions/installed/${name}/backend`)).body).toMatchObject({ state: 'unhealthy', detail: 'Backend exited with code 3', pid: null }));
    expect((await raw(`${ingress}/app-backends/${name}/echo`, { headers: { cookie: again } })).status).toBe(503);

    expect((await s.api(`/api/canvas-extensions/installed/${name}/backend/stop`, { method: 'POST' })).body.state).toBe('stopped');
    // Disabling stops the backend too.
    const { pid } = (await s.api(`/api/canvas-extensions/installed/${name}/backend/start`, { method: 'POST', body: { revision } })).body;
    expect((await s.api(`/api/canvas-extensions/installed/${name}`, { method: 'PATCH', body: { enabled: false } })).body).toEqual({ name, enabled: false });
    expect(() => process.kill(pid, 0)).toThrow();
    expect((await s.api(`/api/canvas-extensions/installed/${name}/backend`)).body).toMatchObject({ state: 'stopped', pid: null });
    expect((await s.api(`/api/canvas-extensions/installed/${name}`, { method: 'DELETE' })).body).toEqual({ message: `Canvas extension '${name}' uninstalled` });
    expect((await s.api(`/api/canvas-extensions/installed/${name}`)).status).toBe(404);
    expect((await s.api(`/api/canvas-extensions/installed/${name}`, { method: 'DELETE' })).status).toBe(404);
    const data = join(dir.path, 'data', 'canvas-extensions', 'backends', 'data', name);
    expect(existsSync(join(data, 'home'))).toBe(true); // the backend's HOME, kept by uninstall
    expect((await s.api(`/api/canvas-extensions/installed/${name}/backend/data`, { method: 'DELETE' })).body.state).toBe('missing');
    expect(existsSync(data)).toBe(false);
  });
});

/** Alive and not a zombie (an orphan's exit may wait for PID 1 to reap it). */
function running(pid: number): boolean {
  try {
    return readFileSync(`/proc/${pid}/stat`, 'utf8').split(')').pop()!.trim()[0] !== 'Z';
  } catch {
    return false;
  }
}

describe('Canvas App backends left by a server that died', () => {
  it('are stopped by the next server on the same data directory before it serves', async () => {
    const dir = tempDir();
    const ext = writeTestExtension(join(dir.path, 'pkg'), 'orphan-app');
    const cli = fileURLToPath(new URL('../../cli/main.ts', import.meta.url));
    const child = spawn(process.execPath, [cli, 'agent-server', '--port', '0', '--host', '127.0.0.1', '--workspace', join(dir.path, 'workspace'), '--data-dir', join(dir.path, 'data')], {
      env: { PATH: process.env['PATH'] ?? '', HOME: dir.path, AGENTYARD_LOG_LEVEL: 'error', OH_SESSION_API_KEYS_0: TEST_KEY },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const exited = new Promise((ok) => child.once('exit', ok));
    let backendPid: number | undefined;
    try {
      const url = await new Promise<string>((ok, fail) => {
        createInterface({ input: child.stdout! }).on('line', (l) => {
          const m = /\{"listening":"([^"]+)"\}/.exec(l);
          if (m) ok(m[1]!);
        });
        child.once('exit', (code) => fail(new Error(`exited with ${code}`)));
      });
      const call = async (path: string, body?: unknown): Promise<any> => (await fetch(url + path, { method: body ? 'POST' : 'GET', headers: { 'x-session-api-key': TEST_KEY, 'content-type': 'application/json' }, ...(body ? { body: JSON.stringify(body) } : {}) })).json();
      await call('/api/canvas-extensions/install', { source: ext.dir });
      const { revision } = await call('/api/canvas-extensions/installed/orphan-app/backend');
      await call('/api/canvas-extensions/installed/orphan-app/backend/prepare', { revision });
      const { pid, state } = await call('/api/canvas-extensions/installed/orphan-app/backend/start', { revision });
      expect(state).toBe('ready');
      backendPid = pid;
      child.kill('SIGKILL');
      await exited;
      expect(running(pid)).toBe(true); // its own process group: it outlived the server
      const next = await startTestServer(dir.path);
      try {
        expect(running(pid)).toBe(false);
        expect((await next.api('/api/canvas-extensions/installed/orphan-app/backend')).body).toMatchObject({ state: 'stopped', pid: null, prepared_revision: revision });
        // A server that closes takes its backends down with it.
        backendPid = (await next.api('/api/canvas-extensions/installed/orphan-app/backend/start', { method: 'POST', body: { revision } })).body.pid;
        expect(running(backendPid!)).toBe(true);
      } finally {
        await next.close();
      }
      expect(running(backendPid!)).toBe(false);
    } finally {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      if (backendPid && running(backendPid)) process.kill(-backendPid, 'SIGKILL'); // the test failed: leave nothing behind
      dir.remove();
    }
  }, 60_000);
});
