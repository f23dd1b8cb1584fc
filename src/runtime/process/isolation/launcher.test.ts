// The launcher on its own: real sandboxes (as root with bubblewrap; skipped otherwise, the e2e
// suite e2e/embedded/isolation.test.ts attacks them through `agentyard up`), the start-up decision,
// and the pure parts (settings, uid allocation, cgroup layouts on a stand-in cgroup tree).
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import { createSocket } from 'node:dgram';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { allocateUid, readIdentity, writeIdentity } from './identity.ts';
import { BubblewrapLauncher, createSandboxLauncher, freeLoopbackPort, PlainLauncher, type IsolationReport } from './launcher.ts';
import { cgroupMounts, Limits, ownCgroups } from './limits.ts';
import { blockedAddresses, METADATA_ADDRESSES } from './network.ts';
import { DEFAULT_LIMITS, loadIsolationSettings } from './settings.ts';
import { addHostAddress, addHostTargets } from '../../../testing/host-address.ts';
import { hostGuardTable, installHostGuard } from './host-guard.ts';

const hasBwrap = (process.env.PATH ?? '').split(':').some((d) => existsSync(join(d, 'bwrap')));
const hasPasta = (process.env.PATH ?? '').split(':').some((d) => existsSync(join(d, 'pasta')));
const hasNft = (process.env.PATH ?? '').split(':').some((d) => existsSync(join(d, 'nft')));
const canIsolate = process.platform === 'linux' && process.getuid?.() === 0 && hasBwrap;

let dataDir: string;
beforeEach(() => {
  dataDir = mkdtempSync(join(tmpdir(), 'launcher-'));
});
afterEach(() => {
  rmSync(dataDir, { recursive: true, force: true });
});

describe('settings', () => {
  it('defaults to auto with a high uid range, and refuses bad values by name', () => {
    expect(loadIsolationSettings({})).toMatchObject({ mode: 'auto', uidRange: { first: 1_100_000_000 }, limits: DEFAULT_LIMITS, readOnlyPaths: [] });
    expect(loadIsolationSettings({ AGENTYARD_SANDBOX_UID_RANGE: '5000-5009', AGENTYARD_SANDBOX_CPUS: '0.5', AGENTYARD_SANDBOX_MEMORY_MB: '512', AGENTYARD_SANDBOX_READ_ONLY_PATHS: '/a:/b' })).toMatchObject({
      uidRange: { first: 5000, last: 5009 },
      limits: { cpus: 0.5, memoryBytes: 512 * 1024 * 1024 },
      readOnlyPaths: ['/a', '/b'],
    });
    expect(() => loadIsolationSettings({ AGENTYARD_SANDBOX_ISOLATION: 'maybe' })).toThrow("AGENTYARD_SANDBOX_ISOLATION must be auto, required or off, got 'maybe'");
    expect(() => loadIsolationSettings({ AGENTYARD_SANDBOX_UID_RANGE: '0-100' })).toThrow(/AGENTYARD_SANDBOX_UID_RANGE must be <first>-<last> with 1000 <= first/);
    expect(() => loadIsolationSettings({ AGENTYARD_SANDBOX_MEMORY_MB: '1.5' })).toThrow("AGENTYARD_SANDBOX_MEMORY_MB must be a positive integer, got '1.5'");
    expect(loadIsolationSettings({ AGENTYARD_SANDBOX_HOST_PORTS: '11434, 8080' }).hostPorts).toEqual([11434, 8080]);
    // Git hosts the operator configured on loopback are reachable too; remote ones need no port.
    expect(loadIsolationSettings({ AGENTYARD_SANDBOX_HOST_PORTS: '8080', AGENTYARD_GIT_BASE_URL: 'http://127.0.0.1:3000', AGENTYARD_GIT_HOSTS: JSON.stringify({ gitlab: 'http://localhost:8080', gitea: 'https://git.example.com', local: 'http://[::1]' }) }).hostPorts).toEqual([8080, 3000, 80]);
    expect(loadIsolationSettings({ AGENTYARD_GIT_BASE_URL: 'https://github.example', AGENTYARD_GIT_HOSTS: 'not json' }).hostPorts).toEqual([]);
    expect(loadIsolationSettings({}).hostPorts).toEqual([]);
    for (const bad of ['0', '70000', '80x', '1.5']) expect(() => loadIsolationSettings({ AGENTYARD_SANDBOX_HOST_PORTS: bad })).toThrow(`AGENTYARD_SANDBOX_HOST_PORTS must be a comma-separated list of TCP ports (1-65535), got '${bad}'`);
  });
});

describe('uid allocation', () => {
  it('hands out the lowest uid no sandbox holds and no process runs as, and says when the range is used up', () => {
    const root = join(dataDir, 'sandboxes');
    for (const [name, uid] of [['a', 5000], ['b', 5002]] as const) {
      mkdirSync(join(root, name), { recursive: true });
      writeIdentity(join(root, name), { uid });
    }
    expect(allocateUid(root, { first: 5000, last: 5009 }, new Set())).toBe(5001);
    expect(allocateUid(root, { first: 5000, last: 5009 }, new Set([5001, 5003]))).toBe(5004);
    expect(() => allocateUid(root, { first: 5000, last: 5002 }, new Set([5001]))).toThrow('every uid of the sandbox range 5000-5002 is in use; widen AGENTYARD_SANDBOX_UID_RANGE');
    expect(readIdentity(join(root, 'a'))).toEqual({ uid: 5000 });
    expect(readIdentity(join(root, 'none'))).toBeUndefined();
  });
});

describe('cgroup layouts', () => {
  const mountinfo = (fs: string) =>
    [
      `30 25 0:26 / ${fs}/cpu rw,relatime shared:5 - cgroup cgroup rw,cpu`,
      `31 25 0:27 / ${fs}/memory rw,relatime shared:6 - cgroup cgroup rw,memory`,
      `32 25 0:28 / ${fs}/pids rw,relatime shared:7 - cgroup cgroup rw,pids`,
      `33 25 0:29 / ${fs}/unified rw,relatime shared:8 - cgroup2 cgroup2 rw`,
      '40 1 254:0 / / rw,relatime - ext4 /dev/vda rw',
    ].join('\n');

  it('reads mounts and the own cgroup of each controller', () => {
    expect(cgroupMounts(mountinfo('/sys/fs/cgroup')).map((m) => [m.version, m.mountPoint, m.controllers.filter((c) => c !== 'rw')])).toEqual([
      [1, '/sys/fs/cgroup/cpu', ['cpu']],
      [1, '/sys/fs/cgroup/memory', ['memory']],
      [1, '/sys/fs/cgroup/pids', ['pids']],
      [2, '/sys/fs/cgroup/unified', []],
    ]);
    expect(ownCgroups('4:memory:/svc/x\n1:cpu,cpuacct:/\n0::/')).toEqual(new Map([['memory', '/svc/x'], ['cpu', '/'], ['cpuacct', '/'], ['', '/']]));
  });

  it('v1: a cgroup per sandbox below the service own one, with the limits written', () => {
    const fs = join(dataDir, 'cg');
    const proc = join(dataDir, 'proc');
    mkdirSync(proc);
    for (const c of ['cpu', 'memory/svc', 'pids']) mkdirSync(join(fs, c), { recursive: true });
    writeFileSync(join(proc, 'mountinfo'), mountinfo(fs));
    writeFileSync(join(proc, 'cgroup'), '3:pids:/\n2:memory:/svc\n1:cpu:/\n0::/\n');
    const limits = Limits.detect('inst', { cpus: 1.5, memoryBytes: 1 << 30, pids: 100 }, proc);
    expect(limits.kind).toBe('cgroup-v1');
    const p = limits.prepare('sb1');
    expect(p.cgroups).toEqual([join(fs, 'cpu/agentyard-inst/sb1'), join(fs, 'memory/svc/agentyard-inst/sb1'), join(fs, 'pids/agentyard-inst/sb1')]);
    expect(p.procsFiles).toEqual(p.cgroups.map((c) => join(c, 'cgroup.procs')));
    expect(readFileSync(join(p.cgroups[0]!, 'cpu.cfs_quota_us'), 'utf8')).toBe('150000');
    expect(readFileSync(join(p.cgroups[1]!, 'memory.limit_in_bytes'), 'utf8')).toBe(String(1 << 30));
    expect(readFileSync(join(p.cgroups[2]!, 'pids.max'), 'utf8')).toBe('100');
    expect(limits.describe()).toBe('1.5 CPU, 1024 MiB memory, 100 processes per sandbox (cgroup v1)');
  });

  it('v2: controllers delegated to an installation subtree; without them, rlimits and the reason', () => {
    const fs = join(dataDir, 'cg2');
    const proc = join(dataDir, 'proc');
    mkdirSync(join(fs, 'svc'), { recursive: true });
    mkdirSync(proc);
    writeFileSync(join(proc, 'mountinfo'), `33 25 0:29 / ${fs} rw - cgroup2 cgroup2 rw`);
    writeFileSync(join(proc, 'cgroup'), '0::/svc\n');
    writeFileSync(join(fs, 'svc', 'cgroup.controllers'), 'cpuset cpu io memory\n');
    const without = Limits.detect('inst', DEFAULT_LIMITS, proc);
    expect([without.kind, without.reason]).toEqual(['rlimit', `cgroup v2 does not delegate pids to ${join(fs, 'svc')}`]);
    expect(without.prepare('sb1')).toEqual({ cgroups: [], procsFiles: [], rlimits: [`--data=${DEFAULT_LIMITS.memoryBytes}`, `--nproc=${DEFAULT_LIMITS.pids}`] });
    expect(without.describe()).toContain('CPU unlimited');

    writeFileSync(join(fs, 'svc', 'cgroup.controllers'), 'cpuset cpu io memory pids\n');
    const limits = Limits.detect('inst', { cpus: 2, memoryBytes: 1 << 30, pids: 50 }, proc);
    expect(limits.kind).toBe('cgroup-v2');
    expect(readFileSync(join(fs, 'svc', 'cgroup.subtree_control'), 'utf8')).toBe('+cpu +memory +pids');
    const [dir] = limits.prepare('sb1').cgroups;
    expect(dir).toBe(join(fs, 'svc/agentyard-inst/sb1'));
    expect(readFileSync(join(dir!, 'cpu.max'), 'utf8')).toBe('200000 100000');
    expect(readFileSync(join(dir!, 'memory.max'), 'utf8')).toBe(String(1 << 30));
  });
});

describe('the start-up decision', () => {
  it('off: plain children, with the reason', async () => {
    const r = await createSandboxLauncher(dataDir, loadIsolationSettings({ AGENTYARD_SANDBOX_ISOLATION: 'off' }));
    expect(r.isolated).toBe(false);
    expect(r.launcher).toBeInstanceOf(PlainLauncher);
    expect(r.summary).toBe('sandbox isolation: OFF (AGENTYARD_SANDBOX_ISOLATION=off); every sandbox runs as this service\'s own user, so this installation serves one user only');
    const launch = r.launcher.prepare({ name: 's', dir: join(dataDir, 's'), argv: ['/bin/echo', 'agent-server'], env: { A: '1' } });
    expect(launch).toEqual({ command: '/bin/echo', args: ['agent-server'], env: { A: '1' }, cwd: join(dataDir, 's', 'workspace') });
  });

  it.skipIf(canIsolate)('not root or no bubblewrap: unisolated with the reason, and a refusal when required', async () => {
    const r = await createSandboxLauncher(dataDir, loadIsolationSettings({}));
    expect(r.isolated).toBe(false);
    expect(r.reason).toMatch(/not running as root|bubblewrap \(bwrap\) is not installed|needs Linux/);
    await expect(createSandboxLauncher(dataDir, loadIsolationSettings({ AGENTYARD_SANDBOX_ISOLATION: 'required' }))).rejects.toThrow(/sandbox isolation is required \(AGENTYARD_SANDBOX_ISOLATION=required\) but not available/);
  });

  it.skipIf(!canIsolate)('a program the sandbox user cannot read makes the probe fail: unisolated, saying which', async () => {
    // Only the program's own paths are mounted (their host parents' modes do not matter): a file
    // readable by root alone is what a sandbox user cannot run.
    const outside = mkdtempSync(join(tmpdir(), 'launcher-prog-'));
    try {
      writeFileSync(join(outside, 'main.ts'), '', { mode: 0o600 });
      const r = await createSandboxLauncher(dataDir, loadIsolationSettings({}), { programPaths: [join(outside, 'main.ts')] });
      expect(r.isolated).toBe(false);
      expect(r.reason).toContain(`a probe sandbox failed: cannot read ${join(outside, 'main.ts')}`);
      await expect(createSandboxLauncher(dataDir, loadIsolationSettings({ AGENTYARD_SANDBOX_ISOLATION: 'required' }), { programPaths: [join(outside, 'main.ts')] })).rejects.toThrow(
        /sandbox isolation is required \(AGENTYARD_SANDBOX_ISOLATION=required\) but not available: a probe sandbox failed: cannot read/,
      );
    } finally {
      rmSync(outside, { recursive: true, force: true });
    }
  });
});

/** What a launcher with a network of its own needs to prepare a sandbox (a port; no host ports). */
async function netFor(r: IsolationReport): Promise<{ net?: { port: number; hostPorts: number[] } }> {
  return r.launcher.ownNetwork ? { net: { port: await freeLoopbackPort(), hostPorts: [] } } : {};
}

describe.skipIf(!canIsolate)('a real sandbox (root, bubblewrap)', () => {
  let report: IsolationReport;
  beforeEach(async () => {
    report = await createSandboxLauncher(dataDir, loadIsolationSettings({ AGENTYARD_SANDBOX_MEMORY_MB: '256' }));
  });

  it('runs as its own user, sees only its own processes and directories, writes only its own', async () => {
    expect(report.isolated).toBe(true);
    writeFileSync(join(dataDir, 'resources.db.key'), 'the-key');
    const dirOf = (n: string) => join(dataDir, 'sandboxes', n);
    for (const n of ['one', 'two']) mkdirSync(dirOf(n), { recursive: true, mode: 0o700 });
    writeFileSync(join(dirOf('two'), 'runtime.json'), '{}');
    const script = [
      'id -u; id -G',
      'ls /proc | grep -c "^[0-9]"',
      `cat ${dataDir}/resources.db.key; echo "KEY=$?"`,
      `ls ${dataDir}/sandboxes; echo "LIST=$?"`,
      `ls ${dirOf('two')}; echo "OTHER=$?"`,
      'echo mine > own.txt; echo "OWN=$?"',
      'touch /usr/x; echo "USR=$?"',
      'touch /tmp/x; echo "TMP=$?"',
      'cat /proc/self/status | grep CapEff',
      'echo "ENV=$SECRET_OF_UP:$MINE"',
      'whoami',
    ].join('\n');
    const launch = report.launcher.prepare({ name: 'one', dir: dirOf('one'), argv: ['/bin/sh', '-c', script], env: { PATH: '/usr/bin:/bin', MINE: 'mine' }, ...(await netFor(report)) });
    const res = spawnSync(launch.command, launch.args, { cwd: launch.cwd, env: launch.env, encoding: 'utf8', timeout: 20_000 });
    const uid = readIdentity(dirOf('one'))!.uid;
    expect(res.status, res.stderr).toBe(0);
    const lines = res.stdout.trim().split('\n');
    expect(lines.slice(0, 2)).toEqual([String(uid), String(uid)]);
    expect(Number(lines[2])).toBeLessThan(6); // bwrap's init, the user-namespace bwrap, sh, ls, grep
    expect(res.stdout).toContain('KEY=1');
    expect(res.stdout).not.toContain('the-key');
    expect(lines).toContain('one'); // the only sandbox in its view of the data directory
    expect(res.stdout).not.toMatch(/^two$/m);
    expect(res.stdout).toMatch(/OTHER=[12]/);
    expect(res.stdout).toContain('OWN=0');
    expect(res.stdout).toMatch(/USR=1/);
    expect(res.stdout).toContain('TMP=0');
    expect(res.stdout).toContain('CapEff:\t0000000000000000');
    expect(res.stdout).toContain('ENV=:mine');
    expect(lines.at(-1)).toBe('sandbox');
    expect(statSync(join(dirOf('one'), 'workspace', 'own.txt')).uid).toBe(uid);
    expect(uid).toBeGreaterThanOrEqual(1_100_000_000);
    await report.launcher.release(dirOf('one'));
    for (const c of readIdentity(dirOf('one'))!.cgroups ?? []) expect(existsSync(c)).toBe(false);
  });

  it('gives two sandboxes two users', async () => {
    const a = join(dataDir, 'sandboxes', 'a');
    const b = join(dataDir, 'sandboxes', 'b');
    for (const d of [a, b]) mkdirSync(d, { recursive: true });
    report.launcher.prepare({ name: 'a', dir: a, argv: ['/bin/true'], env: {}, ...(await netFor(report)) });
    report.launcher.prepare({ name: 'b', dir: b, argv: ['/bin/true'], env: {}, ...(await netFor(report)) });
    expect(readIdentity(a)!.uid).not.toBe(readIdentity(b)!.uid);
    expect(statSync(join(b, 'workspace')).uid).toBe(readIdentity(b)!.uid);
    expect(statSync(join(b, 'workspace')).mode & 0o777).toBe(0o700);
    return Promise.all([report.launcher.release(a), report.launcher.release(b)]);
  });
});

describe.skipIf(!canIsolate)('without pasta (root, bubblewrap)', () => {
  it('isolates as before, says the network is shared, and needs no port chosen before start', async () => {
    // A PATH with every tool the launcher looks for but pasta.
    const bin = mkdtempSync(join(tmpdir(), 'launcher-bin-'));
    const path = process.env.PATH;
    try {
      for (const tool of ['bwrap', 'setpriv', 'sh', 'prlimit', 'unshare', 'nsenter', 'umount', 'sleep', 'rm', 'test', 'chown', 'cat', 'id']) {
        const found = (path ?? '').split(':').map((d) => join(d, tool)).find((p) => existsSync(p));
        if (found) symlinkSync(found, join(bin, tool));
      }
      process.env.PATH = bin;
      const r = await createSandboxLauncher(dataDir, loadIsolationSettings({}));
      expect(r.isolated, r.reason).toBe(true);
      expect(r.launcher.ownNetwork).toBe(false);
      expect(r.summary).toMatch(/^sandbox isolation: on \(bubblewrap; .*; network shared with the host \(install pasta, from the passt package/);
      const dir = join(dataDir, 'sandboxes', 'plain-net');
      mkdirSync(dir, { recursive: true, mode: 0o700 });
      expect(r.launcher.prepare({ name: 'plain-net', dir, argv: ['/bin/true'], env: {} }).args).not.toContain('--net');
      await r.launcher.release(dir);
    } finally {
      process.env.PATH = path;
      rmSync(bin, { recursive: true, force: true });
    }
  });
});

describe.skipIf(!canIsolate || !hasPasta)('a real sandbox with a network of its own (root, bubblewrap, pasta)', () => {
  const servers: Server[] = [];
  afterEach(async () => {
    await Promise.all(servers.splice(0).map((s) => new Promise((r) => s.close(r))));
  });
  const listen = async (body: string): Promise<number> => {
    const srv = createServer((_req, res) => res.end(body));
    servers.push(srv);
    await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
    return (srv.address() as AddressInfo).port;
  };

  it('says so at start-up; reaches only the host ports it is given, none of the host\'s own addresses; its own listener is reachable from the host on its port; pasta is not root', async () => {
    const alias = addHostAddress();
    const local = await listen('local-model'); // a port the operator lets sandboxes reach
    // A service of the host on every address (0.0.0.0): reachable on loopback and on every address the host has.
    const anySrv = createServer((_req, res) => res.end('host-any'));
    servers.push(anySrv);
    await new Promise<void>((r) => anySrv.listen(0, '0.0.0.0', r));
    const anyPort = (anySrv.address() as AddressInfo).port;
    try {
      const report = await createSandboxLauncher(dataDir, loadIsolationSettings({ AGENTYARD_SANDBOX_HOST_PORTS: String(local) }));
      const table = hostGuardTable(loadIsolationSettings({}).uidRange);
      const nat = hasNft
        ? `outbound NAT without the host's own addresses, also those it gains later and IPv6 link-local ones, nor the cloud metadata addresses (nftables table inet ${table})`
        : "outbound NAT without the host's addresses it had when each sandbox started; NOT isolated: addresses it gains later and its IPv6 link-local ones (nft, from nftables, is not installed)";
      expect(report.summary).toContain(`a network namespace of its own per sandbox (pasta: ${nat}; of the host's loopback only the API and port ${local} reachable; pasta runs as a user of its own)`);
      expect(report.launcher.ownNetwork).toBe(true);
      const api = await listen('api');
      const other = await listen('host-only'); // an unauthenticated service on the host's loopback
      const port = await freeLoopbackPort();
      const dir = join(dataDir, 'sandboxes', 'net');
      mkdirSync(dir, { recursive: true, mode: 0o700 });
      const hostAddrs = blockedAddresses().filter((a) => a.endsWith('/32') && !METADATA_ADDRESSES.includes(a)).map((a) => a.slice(0, -3));
      // Inside: try both host ports (also through the gateway address), the host's own addresses, then serve on its own port until asked once.
      const inside = `
        const get = (u) => fetch(u, { signal: AbortSignal.timeout(3000) }).then((r) => r.text(), (e) => 'ERR ' + (e.cause?.code ?? e.name));
        const out = { api: await get('http://127.0.0.1:${api}/'), other: await get('http://127.0.0.1:${other}/'), local: await get('http://127.0.0.1:${local}/') };
        const gw = (await import('node:fs')).readFileSync('/proc/net/route', 'utf8').split('\\n').slice(1).map((l) => l.split('\\t')).find((f) => f[1] === '00000000');
        if (gw) { const h = gw[2]; out.gateway = await get('http://' + [6, 4, 2, 0].map((i) => parseInt(h.slice(i, i + 2), 16)).join('.') + ':${other}/'); }
        out.hostAddrs = {};
        for (const a of ${JSON.stringify(hostAddrs)}) out.hostAddrs[a] = await get('http://' + a + ':${anyPort}/');
        out.metadata = await get('http://169.254.169.254/');
        const { spawnSync } = await import('node:child_process');
        out.routeDel = spawnSync('ip', ['route', 'del', 'unreachable', '169.254.169.254/32']).status;
        out.routes = spawnSync('ip', ['route', 'show'], { encoding: 'utf8' }).stdout;
        console.log(JSON.stringify(out));
        const srv = (await import('node:http')).createServer((q, s) => { s.end('inside'); srv.close(); });
        srv.listen(${port}, '127.0.0.1', () => console.log('LISTENING'));
      `;
      const launch = report.launcher.prepare({ name: 'net', dir, argv: [process.execPath, '--input-type=module', '-e', inside, 'agent-server'], env: { PATH: '/usr/sbin:/usr/bin:/sbin:/bin' }, net: { port, hostPorts: [api] } });
      const child = spawn(launch.command, launch.args, { cwd: launch.cwd, env: launch.env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
      child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
      try {
        await eventually(() => stdout.includes('LISTENING') || child.exitCode !== null, 30_000);
        expect(stdout, stderr).toContain('LISTENING');
        const seen = JSON.parse(stdout.split('\n')[0]!) as { api: string; other: string; local: string; gateway?: string; hostAddrs: Record<string, string>; metadata: string; routeDel: number; routes: string };
        expect(seen.api).toBe('api');
        expect(seen.other).toMatch(/^ERR /);
        expect(seen.local).toBe('local-model');
        if (seen.gateway !== undefined) expect(seen.gateway).toMatch(/^ERR /);
        // The host's listener on 0.0.0.0 answers the host on each of these addresses, never the sandbox.
        expect(Object.keys(seen.hostAddrs).length).toBeGreaterThan(0);
        for (const [a, got] of Object.entries(seen.hostAddrs)) {
          expect(got, a).toMatch(/^ERR /);
          expect(await (await fetch(`http://${a}:${anyPort}/`)).text()).toBe('host-any');
        }
        if ('address' in alias) expect(seen.hostAddrs[alias.address]).toMatch(/^ERR EHOSTUNREACH/);
        expect(seen.metadata).toMatch(/^ERR /);
        // The routes are there, and the sandbox's user cannot remove them (no CAP_NET_ADMIN over its network).
        expect(seen.routes).toContain('unreachable 169.254.169.254');
        expect(seen.routeDel).not.toBe(0);
        expect(await (await fetch(`http://127.0.0.1:${port}/`)).text()).toBe('inside');
        // One process group holds the chain and pasta: stopping the group leaves nothing behind.
        const pasta = Number(readFileSync(join(dir, 'network.pid'), 'utf8'));
        expect(readFileSync(`/proc/${pasta}/stat`, 'utf8').split(') ')[1]!.split(' ')[2]).toBe(String(child.pid));
        // pasta runs as a user of its own: not root, not the sandbox's.
        const pastaUid = Number(/^Uid:\s+(\d+)/m.exec(readFileSync(`/proc/${pasta}/status`, 'utf8'))![1]);
        const identity = readIdentity(dir)!;
        expect(pastaUid).toBe(identity.netUid);
        expect(pastaUid).not.toBe(0);
        expect(pastaUid).not.toBe(identity.uid);
      } finally {
        try {
          process.kill(-child.pid!, 'SIGKILL');
        } catch {
          // gone
        }
      }
      await eventually(() => !existsSync(`/proc/${Number(readFileSync(join(dir, 'network.pid'), 'utf8'))}/stat`) || readFileSync(`/proc/${Number(readFileSync(join(dir, 'network.pid'), 'utf8'))}/stat`, 'utf8').includes(') Z '), 5_000);
      expect(existsSync(join(dir, 'netns')), 'the namespace file is dropped once entered').toBe(false);
      expect(existsSync(join(dir, 'userns')), 'the user namespace file is dropped once pasta holds it').toBe(false);
      await report.launcher.release(dir);
    } finally {
      if ('address' in alias) alias.remove();
    }
  });

  it.skipIf(!hasNft)('refuses addresses the host gains after the sandbox started, its IPv6 addresses and link-local ones; DNS and the API port still work', async () => {
    const settings = loadIsolationSettings({});
    const report = await createSandboxLauncher(dataDir, settings);
    expect(report.summary).toContain(`outbound NAT without the host's own addresses, also those it gains later and IPv6 link-local ones, nor the cloud metadata addresses (nftables table inet ${hostGuardTable(settings.uidRange)})`);
    await tryGainedAddresses(report.launcher as BubblewrapLauncher, join(dataDir, 'sandboxes', 'later'), listen, (pasta) => {
      expect(pasta.uid).not.toBe(0);
      expect(pasta.gid).toBe(pasta.uid);
    });
  });

  it('without nft: only the routes, and the start-up line says what stays reachable', async () => {
    // A PATH with every tool the launcher looks for but nft.
    const bin = mkdtempSync(join(tmpdir(), 'launcher-bin-'));
    const path = process.env.PATH;
    try {
      for (const tool of ['bwrap', 'setpriv', 'sh', 'prlimit', 'pasta', 'unshare', 'nsenter', 'umount', 'mount', 'ip', 'sleep', 'cp', 'chown']) {
        const found = (path ?? '').split(':').map((d) => join(d, tool)).find((p) => existsSync(p));
        if (found) symlinkSync(found, join(bin, tool));
      }
      process.env.PATH = bin;
      const r = await createSandboxLauncher(dataDir, loadIsolationSettings({}));
      expect(r.launcher.ownNetwork, r.summary).toBe(true);
      expect(r.summary).toContain("pasta: outbound NAT without the host's addresses it had when each sandbox started; NOT isolated: addresses it gains later and its IPv6 link-local ones (nft, from nftables, is not installed)");
    } finally {
      process.env.PATH = path;
      rmSync(bin, { recursive: true, force: true });
    }
  });

  it.skipIf(!hasNft)('where the host refuses pasta a user namespace, pasta runs as root with a group of the range, and the rule refuses it the host\'s addresses as well', async () => {
    const tool = (name: string) => execFileSync('sh', ['-c', `command -v ${name}`], { encoding: 'utf8' }).trim();
    const real = (name: string) => realpathSync(tool(name));
    const settings = loadIsolationSettings({});
    expect(installHostGuard(real('nft'), settings.uidRange)).toBeUndefined();
    const launcher = new BubblewrapLauncher({
      dataDir,
      settings,
      limits: Limits.detect('root-pasta-test', settings.limits),
      tools: { bwrap: real('bwrap'), setpriv: real('setpriv'), sh: real('sh'), prlimit: real('prlimit') },
      programPaths: [dirname(dirname(realpathSync(process.execPath)))],
      network: {
        pastaUser: false,
        tools: { pasta: tool('pasta'), unshare: real('unshare'), nsenter: real('nsenter'), umount: real('umount'), mount: real('mount'), ip: real('ip'), setpriv: real('setpriv'), sleep: real('sleep'), cp: real('cp'), chown: real('chown') },
      },
    });
    const dir = join(dataDir, 'sandboxes', 'root-net');
    await tryGainedAddresses(launcher, dir, listen, (pasta) => {
      expect(pasta.uid).toBe(0);
      expect(pasta.gid).toBe(readIdentity(dir)!.netUid);
      expect(pasta.gid).not.toBe(readIdentity(dir)!.uid);
    });
  });

  it('blocks every address of the host but loopback and IPv6 link-local, and the metadata addresses', () => {
    const ifs = {
      lo: [{ address: '127.0.0.1', family: 'IPv4' }, { address: '198.51.100.9', family: 'IPv4' }, { address: '::1', family: 'IPv6' }],
      eth0: [{ address: '192.0.2.2', family: 'IPv4' }, { address: 'FD00::2', family: 'IPv6' }, { address: 'fe80::1', family: 'IPv6' }],
    } as unknown as ReturnType<typeof import('node:os').networkInterfaces>;
    expect(blockedAddresses(ifs)).toEqual(['198.51.100.9/32', '192.0.2.2/32', 'fd00::2/128', ...METADATA_ADDRESSES]);
    const v4only = { eth0: [{ address: '10.0.0.5', family: 'IPv4' }] } as unknown as ReturnType<typeof import('node:os').networkInterfaces>;
    expect(blockedAddresses(v4only)).toEqual(['10.0.0.5/32', ...METADATA_ADDRESSES.filter((m) => !m.includes(':'))]);
  });
});

/**
 * Starts a sandbox that waits, then gives the host addresses it did not have at the start
 * (addHostTargets) and a listener on all of them, and has the sandbox try each, its API port and a
 * DNS query to the host's resolver (the NAT to an address that is not the host's). `checkPasta`
 * sees pasta's ids while it runs.
 */
async function tryGainedAddresses(launcher: BubblewrapLauncher, dir: string, listen: (body: string) => Promise<number>, checkPasta: (p: { uid: number; gid: number }) => void): Promise<void> {
  // A service of the host on every address, IPv4 and IPv6 (:: takes both).
  const anySrv = createServer((_req, res) => res.end('host-any'));
  await new Promise<void>((r) => anySrv.listen(0, '::', r));
  const anyPort = (anySrv.address() as AddressInfo).port;
  const api = await listen('api');
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const nameserver = /^nameserver\s+(\S+)/m.exec(readFileSync('/etc/resolv.conf', 'utf8'))?.[1];
  // The sandbox waits for a file the host writes into its workspace once it has gained the addresses.
  const inside = `
    const fs = await import('node:fs'); const net = await import('node:net'); const dgram = await import('node:dgram');
    console.log('WAITING');
    while (!fs.existsSync('go')) await new Promise((r) => setTimeout(r, 20));
    const targets = JSON.parse(fs.readFileSync('go', 'utf8'));
    const tcp = (host, port) => new Promise((r) => { const s = net.connect({ host, port, timeout: 3000 }, () => s.write('GET / HTTP/1.0\\r\\n\\r\\n')); let got = ''; s.on('data', (d) => (got += d)); s.on('end', () => r('GOT ' + got.split('\\r\\n\\r\\n')[1])); s.on('timeout', () => { r('ERR timeout'); s.destroy(); }); s.on('error', (e) => r('ERR ' + e.code)); });
    const out = { api: await tcp('127.0.0.1', ${api}) };
    // At once: a refused connection only times out (pasta does not pass the reset on to the sandbox).
    await Promise.all(targets.map(async (t) => (out[t.label] = await tcp(t.host, ${anyPort}))));
    // A DNS query to the host's resolver (not one of its addresses): the NAT still carries UDP out.
    if (${JSON.stringify(nameserver ?? '')}) out.dns = await new Promise((r) => { const s = dgram.createSocket(${JSON.stringify(nameserver?.includes(':') ? 'udp6' : 'udp4')}); const q = Buffer.from('${DNS_QUERY}', 'hex'); const t = setTimeout(() => { r('ERR timeout'); s.close(); }, 3000); s.on('message', (m) => { clearTimeout(t); r(m.readUInt16BE(0) === 0x1234 ? 'ANSWER' : 'ERR other'); s.close(); }); s.send(q, 53, ${JSON.stringify(nameserver ?? '')}); });
    console.log(JSON.stringify(out));
  `;
  const launch = launcher.prepare({ name: 'later', dir, argv: [process.execPath, '--input-type=module', '-e', inside], env: { PATH: '/usr/bin:/bin' }, net: { port: await freeLoopbackPort(), hostPorts: [api] } });
  const child = spawn(launch.command, launch.args, { cwd: launch.cwd, env: launch.env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const gained = { targets: [] as { host: string; label: string }[], skipped: [] as string[], remove: () => {} };
  try {
    await eventually(() => stdout.includes('WAITING') || child.exitCode !== null, 30_000);
    expect(stdout, stderr).toContain('WAITING');
    const pasta = Number(readFileSync(join(dir, 'network.pid'), 'utf8'));
    const status = readFileSync(`/proc/${pasta}/status`, 'utf8');
    checkPasta({ uid: Number(/^Uid:\s+(\d+)/m.exec(status)![1]), gid: Number(/^Gid:\s+(\d+)/m.exec(status)![1]) });
    Object.assign(gained, addHostTargets());
    expect(gained.targets.length, gained.skipped.join('; ')).toBeGreaterThan(0);
    if (gained.skipped.length > 0) console.warn(`launcher test: ${gained.skipped.join('; ')}`);
    writeFileSync(join(dir, 'workspace', 'go'), JSON.stringify(gained.targets));
    await eventually(() => stdout.includes('{') || child.exitCode !== null, 60_000);
    const seen = JSON.parse(stdout.split('\n').find((l) => l.startsWith('{'))!) as Record<string, string>;
    expect(seen.api, stderr).toBe('GOT api');
    for (const t of gained.targets) {
      expect(seen[t.label], `${t.label} ${t.host}`).toMatch(/^ERR /);
      // The host itself reaches its listener there: the address is live, it is the sandbox that is refused.
      expect(await connectText(t.host, anyPort), `${t.label} ${t.host} from the host`).toContain('host-any');
    }
    if (nameserver && !blockedAddresses().some((a) => a.startsWith(`${nameserver}/`)) && (await dnsAnswers(nameserver))) expect(seen.dns).toBe('ANSWER');
  } finally {
    gained.remove();
    await new Promise((r) => anySrv.close(r));
    try {
      process.kill(-child.pid!, 'SIGKILL');
    } catch {
      // gone
    }
  }
  await eventually(() => child.exitCode !== null || child.signalCode !== null, 5_000);
  await launcher.release(dir);
}

/** A DNS query for example.com (id 0x1234), the same for the host and the sandbox. */
const DNS_QUERY = '123401000001000000000000076578616d706c6503636f6d0000010001';

/** What a TCP listener sends on connect, from the host ('ERR …' if it cannot connect). */
function connectText(host: string, port: number): Promise<string> {
  return new Promise((r) => {
    const s = connect({ host, port, timeout: 3000 }, () => s.write('GET / HTTP/1.0\r\n\r\n'));
    let got = '';
    s.on('data', (d: Buffer) => (got += d.toString()));
    s.on('end', () => r(got));
    s.on('timeout', () => (r('ERR timeout'), s.destroy()));
    s.on('error', (e: NodeJS.ErrnoException) => r(`ERR ${e.code}`));
  });
}

/** Whether a DNS server answers this host at all (the control for the sandbox's query). */
function dnsAnswers(server: string): Promise<boolean> {
  return new Promise((r) => {
    const s = createSocket(server.includes(':') ? 'udp6' : 'udp4');
    const t = setTimeout(() => (r(false), s.close()), 3000);
    s.on('message', () => (clearTimeout(t), r(true), s.close()));
    s.send(Buffer.from(DNS_QUERY, 'hex'), 53, server);
  });
}

async function eventually(ok: () => boolean, ms: number): Promise<void> {
  const deadline = Date.now() + ms;
  while (!ok() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
}
