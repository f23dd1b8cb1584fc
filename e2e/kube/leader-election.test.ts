// Leader election on a real API server, in real time: the Lease lock's concurrency, one leader of
// two, takeover after a leader stops renewing (in-process, behind a frozen connection, and a
// SIGKILLed child process) and immediate takeover after a graceful release. Durations are short
// (lease 3 s, renew deadline 2 s, retry 0.5 s); the bounds are generous and the measured takeover
// times are printed.
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer, connect, type Server, type Socket } from 'node:net';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { CoordinationV1Api, KubeConfig } from '@kubernetes/client-node';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { LeaderElector, type LeaderElectorOptions } from '../../src/controller/leader/leader-elector.ts';
import { KubeLeaseLock } from '../../src/controller/leader/lease-lock.ts';
import { kubeBinDir, startTestCluster, type TestCluster } from './cluster.ts';

const NS = 'default';
const LEASE = 3_000;
const RENEW = 2_000;
const RETRY = 500;
/** Request latency and scheduling on a loaded 2-core machine. */
const SLACK = 1_500;
const CHILD = join(import.meta.dirname, 'leader-child.ts');

interface Replica {
  id: string;
  elector: LeaderElector;
  cancel: AbortController;
  startedAt?: number;
  stoppedAt?: number;
  done: Promise<void>;
}

const measured: string[] = [];
let leaseSeq = 0;

describe.skipIf(!kubeBinDir())('leader election on a real API server', () => {
  let cluster: TestCluster;
  let leases: CoordinationV1Api;
  const replicas: Replica[] = [];

  beforeAll(async () => {
    cluster = await startTestCluster({ controllerManager: false });
    leases = cluster.kubeConfig.makeApiClient(CoordinationV1Api);
  }, 120_000);

  afterEach(async () => {
    for (const r of replicas) r.cancel.abort();
    await Promise.all(replicas.map((r) => r.done));
    replicas.length = 0;
  });

  afterAll(async () => {
    await cluster?.stop();
    if (measured.length > 0) console.log(`leader election takeover times (lease ${LEASE} ms, renew ${RENEW} ms, retry ${RETRY} ms):\n  ${measured.join('\n  ')}`);
  });

  function replica(id: string, lease: string, opts: Partial<LeaderElectorOptions> & { kubeConfig?: KubeConfig } = {}): Replica {
    const elector = new LeaderElector({
      kubeConfig: opts.kubeConfig ?? cluster.kubeConfig,
      namespace: NS,
      name: lease,
      identity: id,
      leaseDurationMs: LEASE,
      renewDeadlineMs: RENEW,
      retryPeriodMs: RETRY,
      ...(opts.releaseOnCancel !== undefined ? { releaseOnCancel: opts.releaseOnCancel } : {}),
    });
    const r: Replica = { id, elector, cancel: new AbortController(), done: Promise.resolve() };
    r.done = elector.run(
      {
        onStartedLeading: (signal) => {
          r.startedAt = Date.now();
          return new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
        },
        onStoppedLeading: () => void (r.stoppedAt = Date.now()),
      },
      r.cancel.signal,
    );
    replicas.push(r);
    return r;
  }

  const lead = (rs: Replica[]): Replica[] => rs.filter((r) => r.startedAt !== undefined && r.stoppedAt === undefined);
  const readLease = (name: string) => leases.readNamespacedLease({ name, namespace: NS });

  it('the Lease lock: create once, 409 on a stale version, MicroTime with microseconds', async () => {
    const name = `lock-${++leaseSeq}`;
    const a = new KubeLeaseLock(cluster.kubeConfig, NS, name);
    const b = new KubeLeaseLock(cluster.kubeConfig, NS, name);
    expect(await a.get()).toBeUndefined();
    const t = new Date('2026-05-01T10:00:00.123Z');
    const created = await a.create({ holderIdentity: 'a', leaseDurationSeconds: 3, acquireTime: t, renewTime: t, leaseTransitions: 0 });
    expect(created?.record).toEqual({ holderIdentity: 'a', leaseDurationSeconds: 3, acquireTime: t, renewTime: t, leaseTransitions: 0 });
    expect(await b.create({ holderIdentity: 'b', leaseDurationSeconds: 3, leaseTransitions: 0 })).toBeUndefined(); // AlreadyExists

    expect((await b.get())?.record.holderIdentity).toBe('a');
    const later = new Date(t.getTime() + 1000);
    expect(await a.update({ holderIdentity: 'a', leaseDurationSeconds: 3, acquireTime: t, renewTime: later, leaseTransitions: 0 })).toBeDefined();
    // b read before a's renewal: its write is refused, so it cannot overwrite what it has not seen.
    expect(await b.update({ holderIdentity: 'b', leaseDurationSeconds: 3, renewTime: later, leaseTransitions: 1 })).toBeUndefined();
    expect((await b.get())?.record).toMatchObject({ holderIdentity: 'a', renewTime: later });
    expect((await b.update({ holderIdentity: 'b', leaseDurationSeconds: 3, renewTime: later, leaseTransitions: 1 }))?.record.holderIdentity).toBe('b');

    const raw = await leases.readNamespacedLease({ name, namespace: NS });
    expect(String(raw.spec?.renewTime)).toBe('2026-05-01T10:00:01.123000Z');
  });

  it('two replicas: exactly one leads, and keeps leading while it renews', async () => {
    const name = `two-${++leaseSeq}`;
    const rs = [replica('a', name), replica('b', name)];
    await until(() => lead(rs).length > 0, 10_000);
    await sleep(2 * LEASE); // two lease durations of renewals
    expect(lead(rs)).toHaveLength(1);
    expect(rs.filter((r) => r.startedAt !== undefined)).toHaveLength(1);
    const [leader] = lead(rs);
    const lease = await readLease(name);
    expect(lease.spec).toMatchObject({ holderIdentity: leader!.id, leaseDurationSeconds: 3, leaseTransitions: 0 });
    expect(Date.now() - new Date(lease.spec!.renewTime!).getTime()).toBeLessThan(RETRY + SLACK);
  });

  it('a leader that stops renewing (no release) is replaced after the lease expires', async () => {
    const name = `crash-${++leaseSeq}`;
    const a = replica('a', name, { releaseOnCancel: false });
    await until(() => a.startedAt !== undefined, 10_000);
    const b = replica('b', name);
    await sleep(LEASE); // b watches a renew
    a.cancel.abort(); // a stops renewing and does not release: a crash, as seen from the Lease
    const killedAt = Date.now();
    await a.done;
    const lastRenew = new Date((await readLease(name)).spec!.renewTime!).getTime();
    await until(() => b.startedAt !== undefined, LEASE + 2 * RETRY + SLACK + 5_000);
    const takeover = b.startedAt! - killedAt;
    measured.push(`stopped renewing → takeover: ${takeover} ms (${b.startedAt! - lastRenew} ms after the last renewal)`);
    expect(b.startedAt! - lastRenew).toBeGreaterThanOrEqual(LEASE);
    expect(takeover).toBeLessThanOrEqual(LEASE + 2 * RETRY + SLACK);
    expect((await readLease(name)).spec).toMatchObject({ holderIdentity: 'b', leaseTransitions: 1 });
  });

  it('a leader cut off from the API server stops at its renew deadline, before the other starts', async () => {
    const name = `partition-${++leaseSeq}`;
    const proxy = await FreezableProxy.start(cluster.server);
    try {
      const a = replica('a', name, { kubeConfig: through(cluster.kubeConfig, proxy.url) });
      await until(() => a.startedAt !== undefined, 10_000);
      const b = replica('b', name);
      await sleep(LEASE);
      proxy.freeze(); // requests hang: no answer, no error
      const frozenAt = Date.now();
      await until(() => b.startedAt !== undefined, LEASE + 2 * RETRY + SLACK + 5_000);
      measured.push(`frozen connection → old leader stopped after ${a.stoppedAt! - frozenAt} ms, takeover after ${b.startedAt! - frozenAt} ms`);
      expect(a.stoppedAt).toBeDefined();
      expect(a.stoppedAt! - frozenAt).toBeLessThanOrEqual(RENEW + SLACK);
      expect(a.stoppedAt!).toBeLessThan(b.startedAt!); // never two leaders
      expect(b.startedAt! - frozenAt).toBeLessThanOrEqual(LEASE + 2 * RETRY + SLACK);
      await a.done;
    } finally {
      await proxy.close();
    }
  });

  it('a graceful release hands over at once', async () => {
    const name = `release-${++leaseSeq}`;
    const a = replica('a', name);
    await until(() => a.startedAt !== undefined, 10_000);
    const b = replica('b', name);
    await sleep(LEASE);
    a.cancel.abort();
    await a.done;
    const releasedAt = Date.now();
    await until(() => b.startedAt !== undefined, LEASE);
    const takeover = b.startedAt! - releasedAt;
    measured.push(`graceful release → takeover: ${takeover} ms`);
    expect(takeover).toBeLessThanOrEqual(RETRY + SLACK);
    expect(a.stoppedAt!).toBeLessThanOrEqual(b.startedAt!);
    expect((await readLease(name)).spec).toMatchObject({ holderIdentity: 'b', leaseTransitions: 1 });
  });

  it('child processes: SIGKILL the leader, the other leads within the lease time; SIGTERM releases', async () => {
    const name = `child-${++leaseSeq}`;
    const children = [child('p1', name), child('p2', name)];
    try {
      await until(() => children.filter((c) => c.leadingAt !== undefined).length > 0, 20_000);
      await sleep(LEASE);
      const leading = children.filter((c) => c.leadingAt !== undefined);
      expect(leading).toHaveLength(1);
      const [leader] = leading;
      const other = children.find((c) => c !== leader)!;
      leader!.proc.kill('SIGKILL');
      const killedAt = Date.now();
      await leader!.exited;
      await until(() => other.leadingAt !== undefined, LEASE + 2 * RETRY + SLACK + 5_000);
      const takeover = other.leadingAt! - killedAt;
      measured.push(`SIGKILLed leader process → other process leading: ${takeover} ms`);
      expect(takeover).toBeLessThanOrEqual(LEASE + 2 * RETRY + SLACK);
      expect((await readLease(name)).spec).toMatchObject({ holderIdentity: other.id, leaseTransitions: 1 });

      other.proc.kill('SIGTERM');
      expect(await other.exited).toBe(0);
      expect(other.lines.some((l) => l.event === 'stopped' && l.cancelled === true)).toBe(true);
      expect((await readLease(name)).spec).toMatchObject({ holderIdentity: '', leaseDurationSeconds: 1 });
    } finally {
      for (const c of children) if (c.proc.exitCode === null && c.proc.signalCode === null) c.proc.kill('SIGKILL');
      await Promise.all(children.map((c) => c.exited));
    }
  });

  interface Child {
    id: string;
    proc: ChildProcess;
    lines: Record<string, unknown>[];
    leadingAt?: number;
    exited: Promise<number | null>;
  }

  function child(id: string, lease: string): Child {
    const proc = spawn(process.execPath, [CHILD], {
      env: {
        PATH: process.env.PATH ?? '',
        KUBECONFIG: cluster.kubeconfigPath,
        LEASE_NAMESPACE: NS,
        LEASE_NAME: lease,
        IDENTITY: id,
        LEASE_MS: String(LEASE),
        RENEW_MS: String(RENEW),
        RETRY_MS: String(RETRY),
        AGENTYARD_LOG_LEVEL: 'warn',
      },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const c: Child = { id, proc, lines: [], exited: new Promise((resolve) => proc.once('exit', (code) => resolve(code))) };
    createInterface({ input: proc.stdout! }).on('line', (line) => {
      if (!line.startsWith('{')) return;
      const msg = JSON.parse(line) as Record<string, unknown>;
      c.lines.push(msg);
      if (msg.event === 'leading') c.leadingAt = Date.now();
    });
    return c;
  }
});

/** A copy of `kc` that reaches the API server through `server` (same credentials and CA). */
function through(kc: KubeConfig, server: string): KubeConfig {
  const copy = new KubeConfig();
  copy.loadFromOptions({
    clusters: kc.clusters.map((c) => ({ ...c, server })),
    users: kc.users,
    contexts: kc.contexts,
    currentContext: kc.currentContext,
  });
  return copy;
}

/** A TCP proxy on loopback whose freeze() stops forwarding bytes, as a network partition would. */
class FreezableProxy {
  readonly url: string;
  readonly #server: Server;
  readonly #sockets = new Set<Socket>();
  #frozen = false;

  private constructor(server: Server, url: string) {
    this.#server = server;
    this.url = url;
  }

  static async start(target: string): Promise<FreezableProxy> {
    const { hostname, port } = new URL(target);
    let proxy: FreezableProxy | undefined;
    const server = createServer((down) => {
      const up = connect(Number(port), hostname);
      for (const s of [down, up]) {
        proxy!.#sockets.add(s);
        s.on('close', () => proxy!.#sockets.delete(s));
        s.on('error', () => {});
      }
      if (proxy!.#frozen) return; // accepted, never answered
      down.pipe(up);
      up.pipe(down);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const addr = server.address();
    proxy = new FreezableProxy(server, `https://127.0.0.1:${typeof addr === 'object' && addr ? addr.port : 0}`);
    return proxy;
  }

  freeze(): void {
    this.#frozen = true;
    for (const s of this.#sockets) {
      s.unpipe();
      s.pause();
    }
  }

  async close(): Promise<void> {
    for (const s of this.#sockets) s.destroy();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }
}

async function until(check: () => boolean, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms`);
    await sleep(20);
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
