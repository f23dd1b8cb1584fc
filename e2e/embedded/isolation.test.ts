// Sandboxes of two users of one `agentyard up`, attacked from the inside: bob's agent (a terminal
// command the scripted model asks for), bob's /api/bash and bob's file route try to read the
// service's environment, admin's workspace, the data directory's database and key, another agent
// server's environment and records, and to signal admin's sandbox. Everything through the real
// interfaces: `agentyard up` as a child process, `agentyard users create`, HTTP only.
import { execFile } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { createServer } from 'node:http';
import { connect, createServer as createTcpServer, type AddressInfo } from 'node:net';
import { networkInterfaces } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { processUids } from '../../src/runtime/process/isolation/identity.ts';
import { addHostAddress, addHostTargets, type HostAddress } from '../../src/testing/host-address.ts';
import { createUser, events, noSecondUser, finished, startReady, userMessage, sandboxReads } from './flows.ts';
import { eventually, removeDataDir, scriptedModelEnv, startService, startServiceWithModel, type RunningService, type ServiceWithModel } from './harness.ts';

const run = promisify(execFile);
const repoRoot = join(import.meta.dirname, '..', '..');

const SERVICE_SECRET = `service-only-${process.pid}-${Date.now()}`;
const ADMIN_SECRET = `admin-file-secret-${process.pid}`;

interface Identity {
  uid: number;
  cgroups?: string[];
}
const identityOf = (dataDir: string, sb: string) => JSON.parse(readFileSync(join(dataDir, 'sandboxes', sb, 'sandbox-user.json'), 'utf8')) as Identity;
const pidOf = (dataDir: string, sb: string) => (JSON.parse(readFileSync(join(dataDir, 'sandboxes', sb, 'runtime.json'), 'utf8')) as { pid: number }).pid;

/** Alive and not a zombie. */
function running(pid: number): boolean {
  try {
    return !/\) Z /.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
}

/** A shell script that runs each attack and prints `LABEL=<exit status>`, nothing of what it read. */
function attacks(t: Record<string, string>): string {
  return Object.entries(t)
    .map(([label, cmd]) => `(${cmd}) >/dev/null 2>&1; echo "${label}=$?"`)
    .join('\n');
}

function statuses(text: string): Record<string, number> {
  return Object.fromEntries([...text.matchAll(/([A-Z][A-Z_]+)=(\d+)/g)].map((m) => [m[1]!, Number(m[2])]));
}

(noSecondUser ? describe.skip : describe)(`agentyard up with two users: sandboxes isolated from each other and from the service${noSecondUser ? ` (skipped: ${noSecondUser})` : ''}`, () => {
  let env: ServiceWithModel;
  let svc: RunningService;
  let bobKey: string;
  let admin: { conversation: string; sandbox: string; workspace: string; sessionKey: string };
  // A second address of the host, there before any sandbox starts (see src/testing/host-address.ts).
  let alias: HostAddress | { skip: string };
  // Bob's conversation of the network test, whose sandbox keeps running for the next one.
  let bobNet: { conversation: string; sandbox: string } | undefined;

  beforeAll(async () => {
    alias = addHostAddress();
    env = await startServiceWithModel({ env: { AGENTYARD_SANDBOX_ISOLATION: 'required', AGENTYARD_SANDBOX_MEMORY_MB: '1536', AGENTYARD_E2E_SERVICE_SECRET: SERVICE_SECRET } });
    svc = env.svc;
    bobKey = await createUser(svc, 'bob');
    // Admin's agent leaves a secret in admin's workspace.
    env.llm.push(
      { toolCalls: [{ name: 'terminal', arguments: { command: `echo ${ADMIN_SECRET} > admin-secret.txt && pwd` } }] },
      { toolCalls: [{ name: 'finish', arguments: { message: 'stored' } }] },
    );
    const task = await startReady(svc, { initial_message: userMessage('keep a secret') });
    await finished(svc, task.app_conversation_id);
    const { body } = await svc.api<{ session_api_key: string }[]>('GET', `/api/v1/sandboxes?id=${task.sandbox_id}`);
    admin = { conversation: task.app_conversation_id, sandbox: task.sandbox_id, workspace: join(svc.dataDir, 'sandboxes', task.sandbox_id, 'workspace'), sessionKey: body[0]!.session_api_key };
    expect(readFileSync(join(admin.workspace, 'admin-secret.txt'), 'utf8')).toBe(`${ADMIN_SECRET}\n`);
  });

  afterAll(async () => {
    await env?.stop();
    if (alias && 'address' in alias) alias.remove();
  });

  it('says at start-up that sandboxes are isolated, and how', () => {
    expect(svc.output.join('\n')).toMatch(/sandbox isolation: on \(bubblewrap; a user of its own per sandbox from uids \d+-\d+; .*1536 MiB/);
  });

  /** Every way bob's code could reach what is not his; all must fail. */
  const attackSet = () => {
    const d = svc.dataDir;
    const adminPid = pidOf(d, admin.sandbox);
    return {
      UP_ENVIRON: `cat /proc/${svc.process.pid}/environ`,
      UP_CMDLINE: `cat /proc/${svc.process.pid}/cmdline`,
      ADMIN_FILE: `cat ${admin.workspace}/admin-secret.txt`,
      ADMIN_LIST: `ls ${admin.workspace}`,
      DB_KEY: `cat ${d}/resources.db.key`,
      DB: `cat ${d}/resources.db`,
      APP_DB: `cat ${d}/app.db`,
      API_KEY: `cat ${d}/api-key`,
      DATA_LIST: `ls ${d}/sandboxes/${admin.sandbox}`,
      ADMIN_RUNTIME: `cat ${d}/sandboxes/${admin.sandbox}/runtime.json`,
      ADMIN_STATE: `cat ${d}/sandboxes/${admin.sandbox}/state/agent-server.db`,
      ADMIN_ENVIRON: `cat /proc/${adminPid}/environ`,
      ADMIN_SIGNAL: `kill -TERM ${adminPid}`,
      // No process outside the sandbox is visible at all: the service's command line is nowhere in /proc.
      // (The pattern does not match its own command line.)
      SEE_SERVICE: `cat /proc/[0-9]*/cmdline | tr '\\0' ' ' | grep -q -- ' u[p] --port'`,
      WRITE_TOOLCHAIN: `touch /usr/bin/agentyard-was-here`,
      WRITE_DATA_DIR: `touch ${d}/sandboxes/planted`,
      WRITE_ROOT: `touch /planted`,
      NEW_USERNS: `unshare -U true`,
    };
  };

  const secrets = () => [SERVICE_SECRET, ADMIN_SECRET, svc.apiKey, admin.sessionKey];

  it("bob's agent cannot read the service, admin's files, the data directory or admin's agent server, nor signal it", async () => {
    // Also every environment bob's sandbox can read (its own processes'): nothing of the service's is there.
    const script = `${attacks(attackSet())}\necho bob-was-here > mine.txt && cat mine.txt; echo "OWN=$?"\nid -u; echo "UID_SHOWN=$?"\ncat /proc/[0-9]*/environ > environs.bin 2>/dev/null; true`;
    env.llm.push({ toolCalls: [{ name: 'terminal', arguments: { command: script } }] }, { toolCalls: [{ name: 'finish', arguments: { message: 'tried' } }] });
    const task = await startReady(svc, { initial_message: userMessage('look around') }, bobKey);
    const items = await finished(svc, task.app_conversation_id, bobKey);
    const obs = items.find((e) => e.kind === 'ObservationEvent' && e.tool_name === 'terminal')!;
    const text = JSON.stringify(obs.observation);
    const got = statuses(text);
    const failedAttacks = Object.keys(attackSet()).filter((k) => got[k] === undefined || got[k] === 0);
    expect(failedAttacks, text).toEqual([]);
    expect(got.OWN, text).toBe(0);
    expect(text).toContain('bob-was-here');
    const environs = readFileSync(join(svc.dataDir, 'sandboxes', task.sandbox_id, 'workspace', 'environs.bin'), 'utf8');
    expect(environs).toContain('OH_SESSION_API_KEYS_0='); // the read worked: its own agent server's
    for (const s of [...secrets(), scriptedModelEnv(env.llm).LLM_API_KEY!]) expect(environs).not.toContain(s);
    for (const s of secrets()) expect(text).not.toContain(s);

    // What bob's agent wrote belongs to bob's sandbox user: neither root nor admin's.
    const bob = identityOf(svc.dataDir, task.sandbox_id);
    const adminUid = identityOf(svc.dataDir, admin.sandbox).uid;
    const mine = join(svc.dataDir, 'sandboxes', task.sandbox_id, 'workspace', 'mine.txt');
    expect(statSync(mine).uid).toBe(bob.uid);
    expect(bob.uid).not.toBe(0);
    expect(bob.uid).not.toBe(adminUid);
    expect(text).toContain(String(bob.uid));
    // Admin's sandbox survived the signal and still answers.
    expect(process.kill(pidOf(svc.dataDir, admin.sandbox), 0)).toBe(true);
    const adminFile = await svc.api<string>('GET', `/api/v1/app-conversations/${admin.conversation}/file?file_path=${encodeURIComponent(join(admin.workspace, 'admin-secret.txt'))}`);
    expect(adminFile).toMatchObject({ status: 200, body: `${ADMIN_SECRET}\n` });
    // Limits: the sandbox's cgroups hold the configured memory limit (or rlimits where cgroups are not writable).
    const memory = bob.cgroups?.find((c) => c.includes('/memory/'));
    if (memory) expect(readFileSync(join(memory, 'memory.limit_in_bytes'), 'utf8').trim()).toBe(String(1536 * 1024 * 1024));
  });

  it("bob's /api/bash and file route fail the same way; his own files work", async () => {
    const { body: convs } = await svc.api<{ items: { id: string; sandbox_id: string }[] }>('GET', '/api/v1/app-conversations/search', undefined, bobKey);
    const bobConv = convs.items[0]!;
    const { body: sbs } = await svc.api<{ session_api_key: string; exposed_urls: { name: string; url: string }[] }[]>('GET', `/api/v1/sandboxes?id=${bobConv.sandbox_id}`, undefined, bobKey);
    const agentUrl = sbs[0]!.exposed_urls.find((u) => u.name === 'AGENT_SERVER')!.url;
    const res = await fetch(`${agentUrl}/api/bash/execute_bash_command`, {
      method: 'POST',
      headers: { 'X-Session-API-Key': sbs[0]!.session_api_key, 'content-type': 'application/json' },
      body: JSON.stringify({ command: `${attacks(attackSet())}\ncat mine.txt >/dev/null; echo "OWN=$?"`, timeout: 60 }),
    });
    const text = await res.text();
    expect(res.status, text).toBe(200);
    const got = statuses(text);
    expect(Object.keys(attackSet()).filter((k) => got[k] === undefined || got[k] === 0), text).toEqual([]);
    expect(got.OWN, text).toBe(0);
    for (const s of secrets()) expect(text).not.toContain(s);

    // Admin's session key opens nothing for bob either way: it never left admin's sandbox; but
    // even bob's own key does not reach admin's agent server.
    const adminSb = await svc.api('GET', `/api/v1/sandboxes?id=${admin.sandbox}`, undefined, bobKey);
    expect(adminSb.body).toEqual([null]);

    const file = (path: string) => svc.api<string>('GET', `/api/v1/app-conversations/${bobConv.id}/file?file_path=${encodeURIComponent(path)}`, undefined, bobKey);
    for (const path of [join(admin.workspace, 'admin-secret.txt'), join(svc.dataDir, 'resources.db.key'), join(svc.dataDir, 'api-key'), `/proc/${svc.process.pid}/environ`, join(svc.dataDir, 'sandboxes', admin.sandbox, 'runtime.json')]) {
      const r = await file(path);
      expect(r.status, `${path}: ${JSON.stringify(r.body)}`).not.toBe(200);
      for (const s of secrets()) expect(JSON.stringify(r.body)).not.toContain(s);
    }
    expect(await file(join(svc.dataDir, 'sandboxes', bobConv.sandbox_id, 'workspace', 'mine.txt'))).toMatchObject({ status: 200, body: 'bob-was-here\n' });
  });

  it("pause leaves no process of bob's user; resume finds his files; delete archives them and frees his cgroups", async () => {
    const { body: convs } = await svc.api<{ items: { id: string; sandbox_id: string }[] }>('GET', '/api/v1/app-conversations/search', undefined, bobKey);
    const { id: conv, sandbox_id: sb } = convs.items[0]!;
    const bob = identityOf(svc.dataDir, sb);
    expect(processUids().has(bob.uid)).toBe(true);
    expect((await svc.api('POST', `/api/v1/sandboxes/${sb}/pause`, undefined, bobKey)).status).toBe(200);
    await sandboxReads(svc, sb, 'PAUSED', bobKey);
    await eventually(async () => (processUids().has(bob.uid) ? undefined : true), "no process of bob's sandbox user");
    // Nor its network: pasta (root, in the sandbox's process group) went with it.
    const pastaPid = join(svc.dataDir, 'sandboxes', sb, 'network.pid');
    if (existsSync(pastaPid)) await eventually(async () => (running(Number(readFileSync(pastaPid, 'utf8'))) ? undefined : true), "bob's sandbox network (pasta) to stop");
    expect((await svc.api('POST', `/api/v1/sandboxes/${sb}/resume`, undefined, bobKey)).status).toBe(200);
    await sandboxReads(svc, sb, 'RUNNING', bobKey);
    expect(identityOf(svc.dataDir, sb).uid).toBe(bob.uid);
    const mine = join(svc.dataDir, 'sandboxes', sb, 'workspace', 'mine.txt');
    expect(await svc.api('GET', `/api/v1/app-conversations/${conv}/file?file_path=${encodeURIComponent(mine)}`, undefined, bobKey)).toMatchObject({ status: 200, body: 'bob-was-here\n' });

    expect((await svc.api('DELETE', `/api/v1/sandboxes/${sb}`, undefined, bobKey)).status).toBe(200);
    await eventually(async () => (existsSync(join(svc.dataDir, 'sandboxes', sb)) ? undefined : true), "bob's sandbox directory to go");
    const archive = readdirSync(join(svc.dataDir, 'objects', 'internal', 'workspace-archives')).find((f) => f.startsWith(sb));
    expect(archive).toBeDefined();
    const { stdout } = await run('tar', ['-tzf', join(svc.dataDir, 'objects', 'internal', 'workspace-archives', archive!)]);
    expect(stdout).toContain('workspace/mine.txt');
    expect(processUids().has(bob.uid)).toBe(false);
    for (const c of bob.cgroups ?? []) expect(existsSync(c), c).toBe(false);
  });

  it("bob's sandbox reaches the API (sink, model gateway), but no listener of admin's sandbox, of the host's loopback nor of the host's other addresses; its pasta is not root", async (ctx) => {
    const out = svc.output.join('\n');
    if (!out.includes('a network namespace of its own per sandbox')) {
      // Without pasta the network is shared, and the service says so; nothing more to attack here.
      expect(out).toMatch(/sandbox isolation: on \(.*network shared with the host/);
      ctx.skip();
    }
    // An unauthenticated service on the host's loopback, one on every address of the host, and a dev server admin's agent started.
    const hostService = createServer((_q, s) => s.end('host-only'));
    await new Promise<void>((r) => hostService.listen(0, '127.0.0.1', r));
    const anyService = createServer((_q, s) => s.end('host-any'));
    await new Promise<void>((r) => anyService.listen(0, '0.0.0.0', r));
    try {
      const hostPort = (hostService.address() as AddressInfo).port;
      const anyPort = (anyService.address() as AddressInfo).port;
      const hostAddrs = Object.values(networkInterfaces()).flat().filter((a) => a?.family === 'IPv4' && !a.address.startsWith('127.')).map((a) => a!.address);
      expect(hostAddrs.length).toBeGreaterThan(0);
      const { body: sbs } = await svc.api<{ session_api_key: string; exposed_urls: { name: string; port: number; url: string }[] }[]>('GET', `/api/v1/sandboxes?id=${admin.sandbox}`);
      const adminAgent = sbs[0]!.exposed_urls.find((u) => u.name === 'AGENT_SERVER')!;
      const devPort = adminAgent.port + 1 < 65535 ? adminAgent.port + 1 : adminAgent.port - 1;
      const dev = `nohup ${process.execPath} -e "require('http').createServer((q, s) => s.end('dev')).listen(${devPort}, '127.0.0.1')" >/dev/null 2>&1 &
        for i in $(seq 100); do (exec 3<>/dev/tcp/127.0.0.1/${devPort}) 2>/dev/null && break; sleep 0.1; done; (exec 3<>/dev/tcp/127.0.0.1/${devPort}) && echo DEV_UP`;
      const started = await fetch(`${adminAgent.url}/api/bash/execute_bash_command`, {
        method: 'POST',
        headers: { 'X-Session-API-Key': sbs[0]!.session_api_key, 'content-type': 'application/json' },
        body: JSON.stringify({ command: dev, timeout: 30 }),
      });
      expect(await started.text()).toContain('DEV_UP');
      const apiPort = new URL(svc.url).port;
      const connect = (port: number | string) => `timeout 5 bash -c 'exec 3<>/dev/tcp/127.0.0.1/${port}'`;
      const connectTo = (addr: string, port: number) => `timeout 5 bash -c 'exec 3<>/dev/tcp/${addr}/${port}'`;
      const tries: Record<string, string> = { ADMIN_AGENT_SERVER: connect(adminAgent.port), ADMIN_DEV_SERVER: connect(devPort), HOST_SERVICE: connect(hostPort), METADATA: connectTo('169.254.169.254', 80) };
      // The host's service on 0.0.0.0 through each of the host's own addresses (pasta's NAT would connect from the host to them).
      hostAddrs.forEach((a, i) => (tries[`HOST_ADDRESS_${String.fromCharCode(65 + i)}`] = connectTo(a, anyPort)));
      // The routes that block them cannot be removed from inside: the sandbox's user has no capability over its network.
      tries.ROUTE_DEL = `ip route del unreachable ${hostAddrs[0]}/32`;
      const script = `PATH="$PATH:/usr/sbin:/sbin"\n${attacks(tries)}\n${connect(apiPort)}; echo "API=$?"\nip route show | grep -c unreachable; echo "ROUTES=$?"`;
      env.llm.push({ toolCalls: [{ name: 'terminal', arguments: { command: script } }] }, { toolCalls: [{ name: 'finish', arguments: { message: 'probed' } }] });
      // The conversation runs end to end: the model through the gateway, its events through the sink.
      const task = await startReady(svc, { initial_message: userMessage('probe the network') }, bobKey);
      const items = await finished(svc, task.app_conversation_id, bobKey);
      bobNet = { conversation: task.app_conversation_id, sandbox: task.sandbox_id };
      const obs = items.find((e) => e.kind === 'ObservationEvent' && e.tool_name === 'terminal')!;
      const text = JSON.stringify(obs.observation);
      const got = statuses(text);
      expect(Object.keys(tries).filter((k) => got[k] === undefined || got[k] === 0), text).toEqual([]);
      expect(got.API, text).toBe(0);
      expect(got.ROUTES, text).toBe(0);
      if ('skip' in alias) console.warn(`isolation e2e: ${alias.skip}; only the host's primary address was tried`);
      else expect(hostAddrs, 'the second host address').toContain(alias.address);
      // The listeners are there for the host: it is the sandbox that cannot reach them.
      expect(await (await fetch(`http://127.0.0.1:${hostPort}/`)).text()).toBe('host-only');
      for (const a of hostAddrs) expect(await (await fetch(`http://${a}:${anyPort}/`)).text()).toBe('host-any');
      expect((await fetch(`${adminAgent.url}/health`)).status).toBe(200);
      // bob's pasta runs as a user of its own: neither root nor bob's sandbox user.
      const pastaPid = Number(readFileSync(join(svc.dataDir, 'sandboxes', task.sandbox_id, 'network.pid'), 'utf8'));
      const pastaUid = Number(/^Uid:\s+(\d+)/m.exec(readFileSync(`/proc/${pastaPid}/status`, 'utf8'))![1]);
      expect(pastaUid).not.toBe(0);
      expect(pastaUid).not.toBe(identityOf(svc.dataDir, task.sandbox_id).uid);
    } finally {
      await new Promise((r) => hostService.close(r));
      await new Promise((r) => anyService.close(r));
    }
  });

  it("addresses the host gains while bob's sandbox runs and the host's IPv6 addresses (global, link-local) stay out of its reach; its agent still reaches the model through the gateway, and DNS goes out", async (ctx) => {
    const out = svc.output.join('\n');
    if (!bobNet) ctx.skip(); // the network test found no network of its own (it says why)
    if (out.includes('NOT isolated: addresses it gains later')) {
      // Without nft (or with pasta as root) only the routes' snapshot remains, and the service says so.
      expect(out).toMatch(/NOT isolated: addresses it gains later and its IPv6 link-local ones \((nft, from nftables, is not installed|pasta runs as root|nft refused)/);
      console.warn('isolation e2e: the host guard is not available here; what stays open is only said at start-up');
      ctx.skip();
    }
    // The start-up line names the rule that holds over time, not only the routes' snapshot.
    expect(out).toContain("outbound NAT without the host's own addresses, also those it gains later and IPv6 link-local ones, nor the cloud metadata addresses (nftables table inet agentyard_sandboxes_");
    // A service of the host on every address, IPv4 and IPv6 (:: takes both).
    const anyService = createTcpServer((s) => s.on('error', () => {}).end('host-any'));
    await new Promise<void>((r) => anyService.listen(0, '::', r));
    // Gained now, while bob's sandbox runs (its routes were made before).
    const gained = addHostTargets();
    try {
      const anyPort = (anyService.address() as AddressInfo).port;
      if (gained.skipped.length > 0) console.warn(`isolation e2e: ${gained.skipped.join('; ')}`);
      expect(gained.targets.length, gained.skipped.join('; ')).toBeGreaterThan(0);
      // A refused connection only times out here (pasta does not pass the reset on to the sandbox).
      const tries = Object.fromEntries(gained.targets.map((t) => [t.label, `timeout 5 bash -c 'exec 3<>/dev/tcp/${t.host}/${anyPort}'`]));
      // The normal outbound path to an address that is not the host's: a DNS query to the host's resolver through pasta's NAT.
      const nameserver = /^nameserver\s+(\d+\.\d+\.\d+\.\d+)\s*$/m.exec(readFileSync('/etc/resolv.conf', 'utf8'))?.[1];
      const hostOwn = Object.values(networkInterfaces()).flat().some((a) => a?.address === nameserver);
      const query = '123401000001000000000000076578616d706c6503636f6d0000010001';
      const dns = nameserver && !hostOwn && !nameserver.startsWith('127.') ? `${process.execPath} -e "const s = require('dgram').createSocket('udp4'); setTimeout(() => process.exit(1), 3000); s.on('message', () => process.exit(0)); s.send(Buffer.from('${query}', 'hex'), 53, '${nameserver}')"; echo "DNS=$?"` : '';
      // At once (each line of attacks() in the background), then the controls.
      const script = `${attacks(tries).split('\n').map((l) => `{ ${l}; } &`).join('\n')}\nwait\ntimeout 5 bash -c 'exec 3<>/dev/tcp/127.0.0.1/${new URL(svc.url).port}'; echo "API=$?"\n${dns}`;
      env.llm.push({ toolCalls: [{ name: 'terminal', arguments: { command: script } }] }, { toolCalls: [{ name: 'finish', arguments: { message: 'probed again' } }] });
      // A second turn of the running conversation: the model through the gateway, then bob's agent runs the probe.
      const sent = await svc.api<{ success: boolean }>('POST', `/api/v1/app-conversations/${bobNet!.conversation}/send-message`, userMessage('probe again'), bobKey);
      expect(sent.status).toBe(200);
      const items = await eventually(async () => {
        const all = await events(svc, bobNet!.conversation, bobKey);
        return all.filter((e) => e.kind === 'ObservationEvent' && e.tool_name === 'finish').length >= 2 ? all : undefined;
      }, 'the second finish of bob\'s conversation');
      const obs = items.filter((e) => e.kind === 'ObservationEvent' && e.tool_name === 'terminal').at(-1)!;
      const text = JSON.stringify(obs.observation);
      const got = statuses(text);
      expect(Object.keys(tries).filter((k) => got[k] === undefined || got[k] === 0), text).toEqual([]);
      expect(got.API, text).toBe(0);
      if (dns) expect(got.DNS, text).toBe(0);
      else console.warn('isolation e2e: no resolver outside the host in /etc/resolv.conf; the outbound NAT was tried through the model gateway only');
      // Each address is live: the host itself reaches its listener there.
      for (const t of gained.targets) {
        const reply = await new Promise<string>((r) => {
          const c = connect({ host: t.host, port: anyPort, timeout: 5000 });
          let body = '';
          c.on('data', (d: Buffer) => (body += d.toString()));
          c.on('end', () => r(body));
          c.on('timeout', () => (r('timeout'), c.destroy()));
          c.on('error', (e) => r(String(e)));
        });
        expect(reply, `${t.label} ${t.host} from the host`).toBe('host-any');
      }
    } finally {
      gained.remove();
      await new Promise((r) => anyService.close(r));
    }
  });

  it('a restarted service adopts the running sandboxes again, and refuses to run two users without isolation', async () => {
    const adminPid = pidOf(svc.dataDir, admin.sandbox);
    await svc.stop('SIGKILL');
    const again = await startService({ dataDir: svc.dataDir, env: { ...scriptedModelEnv(env.llm), AGENTYARD_SANDBOX_ISOLATION: 'required' } });
    try {
      await sandboxReads(again, admin.sandbox, 'RUNNING');
      expect(pidOf(again.dataDir, admin.sandbox)).toBe(adminPid);
      const file = await again.api<string>('GET', `/api/v1/app-conversations/${admin.conversation}/file?file_path=${encodeURIComponent(join(admin.workspace, 'admin-secret.txt'))}`);
      expect(file).toMatchObject({ status: 200, body: `${ADMIN_SECRET}\n` });
    } finally {
      await again.stop();
    }
    // Two users and no isolation: `agentyard up` will not serve them.
    const refused = await startService({ dataDir: svc.dataDir, env: { AGENTYARD_SANDBOX_ISOLATION: 'off' } }).then(
      async (s) => {
        await s.stop();
        return undefined;
      },
      (err: unknown) => String(err),
    );
    expect(refused).toMatch(/this installation has 2 users, but its sandboxes cannot be isolated from each other here \(AGENTYARD_SANDBOX_ISOLATION=off\); refusing to start/);
  });
});

describe('agentyard up without sandbox isolation', () => {
  let svc: RunningService;

  beforeAll(async () => {
    svc = await startService({ env: { AGENTYARD_SANDBOX_ISOLATION: 'off' } });
  });

  afterAll(async () => {
    await svc?.stop();
    if (svc) removeDataDir(svc.dataDir);
  });

  it('says so at start-up and refuses a second user with the reason', async () => {
    expect(svc.output.join('\n')).toContain('sandbox isolation: OFF (AGENTYARD_SANDBOX_ISOLATION=off); every sandbox runs as this service');
    const err = await run(process.execPath, [join(repoRoot, 'src/cli/main.ts'), 'users', 'create', 'bob', '--data-dir', svc.dataDir], { cwd: repoRoot }).then(
      () => undefined,
      (e: { code: number; stderr: string }) => e,
    );
    expect(err?.code).toBe(1);
    expect(err?.stderr).toContain('this installation serves one user only: its sandboxes are not isolated from each other (AGENTYARD_SANDBOX_ISOLATION=off)');
    // The one user keeps working.
    const me = await svc.api<{ id: string }>('GET', '/api/v1/users/me');
    expect(me).toMatchObject({ status: 200, body: { id: 'admin' } });
  });
});
