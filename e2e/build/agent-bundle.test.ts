// The agent bundle (src/runtime/kubernetes/agent-bundle.sh) must run in any sandbox image, so it is
// run here in root filesystems that have no Node (hack/sandbox-rootfs.sh, cached): one with a
// static busybox and no libc at all, and a Debian minbase. Under bubblewrap, as uid 1000 with a read-only root, mounted
// where the sandbox Pod mounts it; the application is this checkout, mounted at the bundle's app/.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BUNDLE_CLI, BUNDLE_DIR, BUNDLE_NODE } from '../../src/runtime/kubernetes/bundle.ts';
import { requiredForTests } from '../../src/testing/required/required.ts';
import { eventually } from '../embedded/harness.ts';
import { freePort } from '../kube/processes.ts';

const REPO = join(import.meta.dirname, '../..');
const ROOTFS = join(process.env.AGENTYARD_CACHE ?? join(homedir(), '.cache/agentyard'), 'rootfs');
const has = (tool: string) => spawnSync('sh', ['-c', `command -v ${tool}`]).status === 0;
const missing = ['patchelf', 'ldd', 'bwrap'].filter((t) => !has(t));
if (!existsSync(join(ROOTFS, 'busybox/bin/busybox'))) missing.push(`the busybox rootfs in ${ROOTFS}`);
const ready = requiredForTests(missing.length ? undefined : true, missing.join(', '), 'run hack/test-deps.sh (patchelf, bubblewrap) and hack/sandbox-rootfs.sh');
const roots = ['busybox', 'minbase'].filter((r) => existsSync(join(ROOTFS, r, 'bin')));
const KEY = 'bundle-test-session-key';

describe.skipIf(!ready)('the agent bundle in a root filesystem without Node', () => {
  const work = mkdtempSync(join(tmpdir(), 'agentyard-bundle-'));
  const bundle = join(work, 'bundle');
  const children: ChildProcess[] = [];

  beforeAll(() => {
    const node = join(REPO, 'node_modules/node/bin/node');
    const made = spawnSync(join(REPO, 'src/runtime/kubernetes/agent-bundle.sh'), [node, bundle], { env: { ...process.env, AGENTYARD_BUNDLE_PREFIX: BUNDLE_DIR }, encoding: 'utf8' });
    expect(made.status, made.stderr).toBe(0);
  }, 60_000);

  afterAll(() => {
    for (const c of children) c.kill('SIGKILL');
    rmSync(work, { recursive: true, force: true });
  });

  /** bwrap arguments: `root` read-only as /, the bundle at BUNDLE_DIR, a workspace, uid 1000, a clean environment. */
  const sandbox = (root: string, workspace: string, env: Record<string, string> = {}) => [
    '--unshare-user', '--uid', '1000', '--gid', '1000', '--die-with-parent',
    '--ro-bind', join(ROOTFS, root), '/',
    '--ro-bind', join(bundle, 'bin'), `${BUNDLE_DIR}/bin`,
    '--ro-bind', join(bundle, 'lib'), `${BUNDLE_DIR}/lib`,
    '--ro-bind', REPO, `${BUNDLE_DIR}/app`,
    '--bind', workspace, '/workspace',
    '--proc', '/proc', '--dev', '/dev', '--tmpfs', '/tmp',
    '--clearenv', '--setenv', 'PATH', '/usr/local/bin:/usr/bin:/bin', '--setenv', 'HOME', '/workspace/home',
    ...Object.entries(env).flatMap(([k, v]) => ['--setenv', k, v]),
  ];
  const workspaceFor = (name: string) => {
    const dir = join(work, name);
    mkdirSync(join(dir, 'home'), { recursive: true });
    mkdirSync(join(dir, 'project'), { recursive: true });
    return dir;
  };

  it('the bundle brings its own loader and libraries, pointed at where the Pod mounts it', () => {
    const interp = spawnSync('patchelf', ['--print-interpreter', join(bundle, 'bin/node')], { encoding: 'utf8' }).stdout.trim();
    expect(interp.startsWith(`${BUNDLE_DIR}/lib/`)).toBe(true);
    expect(existsSync(join(bundle, 'lib', interp.slice(`${BUNDLE_DIR}/lib/`.length)))).toBe(true);
    expect(spawnSync('patchelf', ['--print-rpath', join(bundle, 'bin/node')], { encoding: 'utf8' }).stdout.trim()).toBe(`${BUNDLE_DIR}/lib`);
    for (const lib of ['libc.so.6', 'libstdc++.so.6', 'libgcc_s.so.1', 'libm.so.6']) expect(existsSync(join(bundle, 'lib', lib)), lib).toBe(true);
  });

  it('the busybox root has no Node and no libc of its own', () => {
    expect(existsSync(join(ROOTFS, 'busybox/lib'))).toBe(false);
    for (const root of roots) expect(spawnSync('bwrap', [...sandbox(root, workspaceFor(`probe-${root}`)), 'sh', '-c', 'command -v node'], { encoding: 'utf8' }).status, root).not.toBe(0);
  });

  it.each(roots)('%s: Node 24 runs, loads the native SQLite addon and starts programs of the image', (root) => {
    const script = [
      `const Database = require('${BUNDLE_DIR}/app/node_modules/better-sqlite3');`,
      `const v = new Database(':memory:').prepare('select sqlite_version() as v').get().v;`,
      `const sh = require('node:child_process').execFileSync('sh', ['-c', 'echo "[$LD_LIBRARY_PATH]"'], { encoding: 'utf8' }).trim();`,
      `console.log(JSON.stringify({ node: process.version, execPath: process.execPath, sqlite: v, sh, uid: process.getuid() }));`,
    ].join('\n');
    const run = spawnSync('bwrap', [...sandbox(root, workspaceFor(`node-${root}`)), BUNDLE_NODE, '-e', script], { encoding: 'utf8', timeout: 30_000 });
    expect(run.status, run.stderr).toBe(0);
    const out = JSON.parse(run.stdout) as Record<string, unknown>;
    expect(out).toMatchObject({ execPath: BUNDLE_NODE, sh: '[]', uid: 1000 });
    expect(out['node']).toMatch(/^v24\./);
    expect(out['sqlite']).toMatch(/^3\./);
  });

  it.each(roots)('%s: the agent server starts as the sandbox Pod starts it and answers /health', async (root) => {
    const port = await freePort();
    const ws = workspaceFor(`server-${root}`);
    const args = [BUNDLE_CLI, 'agent-server', '--port', String(port), '--host', '127.0.0.1', '--workspace', '/workspace/project', '--data-dir', '/workspace/.agentyard'];
    const child = spawn('bwrap', [...sandbox(root, ws, { OH_SESSION_API_KEYS_0: KEY }), BUNDLE_NODE, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    children.push(child);
    let output = '';
    child.stdout!.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr!.on('data', (d: Buffer) => (output += d.toString()));
    const base = `http://127.0.0.1:${port}`;
    await eventually(async () => {
      if (child.exitCode !== null) throw new Error(`the agent server exited with ${child.exitCode}:\n${output}`);
      const res = await fetch(`${base}/health`).catch(() => undefined);
      return res?.ok ? true : undefined;
    }, 'the agent server to answer /health', 30_000, 100);
    // Its event store (SQLite) is on the workspace volume, written as uid 1000.
    expect(existsSync(join(ws, '.agentyard'))).toBe(true);
    if (root === 'minbase') {
      // The terminal's bash is the image's, with the image's libraries: nothing of the bundle leaks in.
      const res = await fetch(`${base}/api/bash/execute_bash_command`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-session-api-key': KEY },
        body: JSON.stringify({ command: 'echo "lib=[$LD_LIBRARY_PATH] bash=$(readlink /proc/$$/exe) user=$(id -u)"; ldd /bin/bash | grep -c /agentyard', cwd: '/workspace/project' }),
      });
      const body = (await res.json()) as { stdout?: string; exit_code?: number };
      expect(res.status, JSON.stringify(body)).toBe(200);
      expect(body.stdout).toContain('lib=[] bash=/usr/bin/bash user=1000');
      expect(body.stdout?.trim().split('\n').at(-1)).toBe('0');
    }
    child.kill('SIGTERM');
    await new Promise((r) => child.once('exit', r));
  }, 60_000);
});
