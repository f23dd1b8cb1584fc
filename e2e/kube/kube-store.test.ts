// KubeStore against a real kube-apiserver + etcd. The shared ResourceStore conformance suite runs
// here unchanged; the tests below it cover what only the Kubernetes path has (server-side
// validation errors, watch resumption, 410, merge-patch content type, the informer).
import { randomUUID } from 'node:crypto';
import { CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Conflict, Gone, Invalid, NotFound, Unavailable } from '../../src/api/errors.ts';
import { API_VERSION } from '../../src/api/meta.ts';
import { SandboxKind, type Sandbox } from '../../src/api/sandbox.ts';
import { SecretKind, type Secret } from '../../src/api/secret.ts';
import { describeResourceStoreConformance } from '../../src/store/conformance.ts';
import { Informer } from '../../src/store/kube/informer.ts';
import { KubeStore } from '../../src/store/kube/kube-store.ts';
import type { WatchStream } from '../../src/store/kube/watch-stream.ts';
import type { ResourceStore, WatchEvent } from '../../src/store/types.ts';
import { kubeBinDir, startTestCluster, type TestCluster } from './cluster.ts';
import { freePort } from './processes.ts';

const skip = !kubeBinDir();

let cluster: TestCluster;
beforeAll(async () => {
  if (!skip) cluster = await startTestCluster();
});
afterAll(async () => {
  await cluster?.stop();
});

let seq = 0;
const unique = (prefix: string): string => `${prefix}-${Date.now().toString(36)}-${(seq++).toString(36)}`;

function sandbox(namespace: string, name: string, spec: Sandbox['spec'] = {}): Sandbox {
  return { apiVersion: API_VERSION, kind: 'Sandbox', metadata: { name, namespace }, spec };
}

async function newNamespace(): Promise<string> {
  const name = `t-${randomUUID().slice(0, 8)}`;
  await cluster.kubeConfig.makeApiClient(CoreV1Api).createNamespace({ body: { metadata: { name } } });
  return name;
}

async function until(what: string, check: () => boolean, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`never happened: ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe.skipIf(skip)('KubeStore', () => {
  // As deployed: the API server's watch cache on. It hides etcd compaction, so the suite's Gone
  // test is skipped here and runs in the second cluster below.
  describeResourceStoreConformance('KubeStore', async () => ({
    store: new KubeStore(cluster.kubeConfig),
    namespace: await newNamespace(),
    otherNamespace: await newNamespace(),
    cleanup: async () => {},
  }));

  // Watches served straight from etcd, so compacting etcd makes old resourceVersions 410 Gone.
  let uncached: TestCluster | undefined;
  describeResourceStoreConformance(
    'KubeStore without watch cache',
    async () => {
      uncached = await startTestCluster({ apiserverArgs: ['--watch-cache=false'], controllerManager: false });
      const core = uncached.kubeConfig.makeApiClient(CoreV1Api);
      for (const name of ['conformance', 'conformance-other']) await core.createNamespace({ body: { metadata: { name } } });
      return {
        store: new KubeStore(uncached.kubeConfig),
        namespace: 'conformance',
        otherNamespace: 'conformance-other',
        cleanup: async () => uncached?.stop(),
      };
    },
    { canForceCompaction: async () => uncached!.compact() },
  );
});

describe.skipIf(skip)('KubeStore on a real API server', () => {
  let store: KubeStore;
  let ns: string;
  beforeAll(async () => {
    store = new KubeStore(cluster.kubeConfig);
    ns = await newNamespace();
  });

  it('lists in pages of listPageSize, all of one snapshot, and a watch from its resourceVersion misses nothing', async () => {
    const paged = new KubeStore(cluster.kubeConfig, { listPageSize: 2 });
    const pns = await newNamespace();
    const names = ['p1', 'p2', 'p3', 'p4', 'p5'];
    for (const name of names) await paged.create(SandboxKind, sandbox(pns, name));
    const { items, resourceVersion } = await paged.list(SandboxKind, pns);
    expect(items.map((o) => o.metadata.name)).toEqual(names);
    const abort = new AbortController();
    const seen: string[] = [];
    const watching = (async () => {
      for await (const e of paged.watch(SandboxKind, pns, { resourceVersion, signal: abort.signal })) {
        seen.push(`${e.type}:${e.object.metadata.name}`);
        if (seen.length === 1) return;
      }
    })();
    await paged.create(SandboxKind, sandbox(pns, 'p6'));
    await watching;
    abort.abort();
    expect(seen).toEqual(['ADDED:p6']);
    expect((await paged.list(SandboxKind, pns, { labelSelector: 'none=here' })).items).toEqual([]);
  });

  it('maps AlreadyExists, stale resourceVersions and missing objects to domain errors', async () => {
    const name = unique('sb');
    const created = await store.create(SandboxKind, sandbox(ns, name));
    await expect(store.create(SandboxKind, sandbox(ns, name))).rejects.toBeInstanceOf(Conflict);
    const updated = await store.update(SandboxKind, { ...created, spec: { paused: true } });
    await expect(store.update(SandboxKind, { ...created, spec: { owner: 'x' } })).rejects.toBeInstanceOf(Conflict);
    await expect(store.updateStatus(SandboxKind, { ...created, status: { phase: 'RUNNING' } })).rejects.toBeInstanceOf(Conflict);
    await expect(store.delete(SandboxKind, ns, name, { resourceVersion: created.metadata.resourceVersion! })).rejects.toBeInstanceOf(Conflict);
    await store.delete(SandboxKind, ns, name, { resourceVersion: updated.metadata.resourceVersion! });
    expect(await store.get(SandboxKind, ns, name)).toBeUndefined();
    await expect(store.delete(SandboxKind, ns, name)).rejects.toBeInstanceOf(NotFound);
    await expect(store.update(SandboxKind, updated)).rejects.toBeInstanceOf(NotFound);
  });

  it('rejects schema violations before they reach the server, with field paths', async () => {
    const bad = { ...sandbox(ns, unique('sb')), spec: { paused: 'yes', extra: 1 } } as unknown as Sandbox;
    const err = await store.create(SandboxKind, bad).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Invalid);
    const locs = (err as Invalid).detail.map((i) => i.loc.join('.'));
    expect(locs).toEqual(expect.arrayContaining(['spec.paused', 'spec.extra']));
  });

  it('maps a 422 from the server to Invalid with the field path from the Status causes', async () => {
    const secret: Secret = { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'Not_A_Name', namespace: ns }, data: {} };
    const err = await store.create(SecretKind, secret).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Invalid);
    expect((err as Invalid).detail[0]?.loc).toEqual(['metadata', 'name']);
  });

  it('returns a Secret from get() exactly as a watch delivers it', async () => {
    const name = unique('sec');
    const { resourceVersion } = await store.list(SecretKind, ns);
    const abort = new AbortController();
    const events = store.watch(SecretKind, ns, { resourceVersion, signal: abort.signal });
    await store.create<Secret>(SecretKind, { apiVersion: 'v1', kind: 'Secret', metadata: { name, namespace: ns }, data: { k: 'dg==' } });
    const first = (await events[Symbol.asyncIterator]().next()).value as WatchEvent<Secret>;
    abort.abort();
    expect(first.object).toEqual(await store.get(SecretKind, ns, name));
  });

  it('patches status with a JSON merge patch (never the JSON-patch default)', async () => {
    const name = unique('sb');
    await store.create(SandboxKind, sandbox(ns, name));
    const a = await store.mergePatch(SandboxKind, ns, name, { status: { phase: 'STARTING', message: 'one' } }, { subresource: 'status' });
    const b = await store.mergePatch(SandboxKind, ns, name, { status: { message: 'two' } }, { subresource: 'status' });
    expect(a.status).toEqual({ phase: 'STARTING', message: 'one' });
    expect(b.status).toEqual({ phase: 'STARTING', message: 'two' });
    expect(b.metadata.generation).toBe(1);
    const stale = { metadata: { resourceVersion: a.metadata.resourceVersion }, spec: { paused: true } };
    await expect(store.mergePatch(SandboxKind, ns, name, stale)).rejects.toBeInstanceOf(Conflict);
  });

  it('throws Gone for a watch from a resourceVersion the server no longer has', async () => {
    const events = store.watch(SandboxKind, ns, { resourceVersion: '1' });
    await expect(events[Symbol.asyncIterator]().next()).rejects.toBeInstanceOf(Gone);
  });

  it('resumes a watch the server ended, from the last resourceVersion, without repeats or gaps', async () => {
    const short = new KubeStore(cluster.kubeConfig, { watchTimeoutSeconds: 1 });
    const abort = new AbortController();
    const stream = short.watch(SandboxKind, ns, { signal: abort.signal }) as WatchStream<Sandbox>;
    const seen: string[] = [];
    const reader = (async () => {
      for await (const e of stream) seen.push(`${e.type}:${e.object.metadata.name}`);
    })();
    await until('watch connected', () => stream.connects >= 1);
    const first = unique('sb');
    await short.create(SandboxKind, sandbox(ns, first));
    await until('first event', () => seen.length === 1);
    await until('a reconnect after the server closed the watch', () => stream.connects >= 3);
    const second = unique('sb');
    await short.create(SandboxKind, sandbox(ns, second));
    await until('second event', () => seen.length >= 2);
    abort.abort();
    await reader;
    expect(seen).toEqual([`ADDED:${first}`, `ADDED:${second}`]);
  });

  it('ends a watch when its signal aborts, and on break', async () => {
    const abort = new AbortController();
    const stream = store.watch(SandboxKind, ns, { signal: abort.signal });
    const done = (async () => {
      const got: string[] = [];
      for await (const e of stream) got.push(e.object.metadata.name);
      return got;
    })();
    abort.abort();
    expect(await done).toEqual([]);

    const name = unique('sb');
    const { resourceVersion } = await store.list(SandboxKind, ns);
    await store.create(SandboxKind, sandbox(ns, name));
    for await (const e of store.watch(SandboxKind, ns, { resourceVersion })) {
      expect(e.object.metadata.name).toBe(name);
      break;
    }
  });

  it('reports an unreachable server as Unavailable', async () => {
    const dead = new KubeConfig();
    dead.loadFromOptions({
      clusters: [{ name: 'dead', server: `https://127.0.0.1:${await freePort()}`, skipTLSVerify: true }],
      users: [{ name: 'u', token: 'x' }],
      contexts: [{ name: 'dead', cluster: 'dead', user: 'u' }],
      currentContext: 'dead',
    });
    const err = await new KubeStore(dead).get(SandboxKind, ns, 'x').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Unavailable);
  });
});

describe.skipIf(skip)('Informer over KubeStore', () => {
  let store: KubeStore;
  let ns: string;
  beforeAll(async () => {
    store = new KubeStore(cluster.kubeConfig);
    ns = await newNamespace();
  });

  it('lists, then follows changes; stop() ends it', async () => {
    const pre = unique('sb');
    await store.create(SandboxKind, sandbox(ns, pre));
    const informer = new Informer(store, SandboxKind, { namespace: ns });
    const events: string[] = [];
    informer.on((e) => events.push(`${e.type}:${e.object.metadata.name}`));
    await informer.start();
    expect(informer.synced).toBe(true);
    expect(informer.get(ns, pre)).toBeDefined();

    const post = unique('sb');
    const created = await store.create(SandboxKind, sandbox(ns, post));
    await store.update(SandboxKind, { ...created, spec: { paused: true } });
    await store.delete(SandboxKind, ns, post);
    await until('delete seen', () => events.includes(`DELETED:${post}`));
    await informer.stop();
    expect(events).toEqual([`ADDED:${pre}`, `ADDED:${post}`, `MODIFIED:${post}`, `DELETED:${post}`]);
    expect(informer.get(ns, post)).toBeUndefined();
  });

  it('relists on Gone and emits what changed in the gap; retries other watch errors', async () => {
    // The real store, with the first two watches failing the way a long outage would.
    let watches = 0;
    const gap = unique('sb');
    const faultyWatch: ResourceStore['watch'] = (kind, namespace, opts) => {
      watches++;
      if (watches === 1) {
        return (async function* () {
          await store.create(SandboxKind, sandbox(ns, gap)); // happens while "disconnected"
          throw new Gone('too old resource version');
        })() as never;
      }
      if (watches === 2) {
        return (async function* () {
          throw new Unavailable('connection reset');
        })() as never;
      }
      return store.watch(kind, namespace, opts);
    };
    const faulty = new Proxy(store, {
      get: (target, prop) => {
        if (prop === 'watch') return faultyWatch;
        const value: unknown = Reflect.get(target, prop, target);
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
    const informer = new Informer(faulty, SandboxKind, { namespace: ns, backoffStartMs: 10 });
    const events: string[] = [];
    informer.on((e) => events.push(`${e.type}:${e.object.metadata.name}`));
    await informer.start();
    await until('gap object seen through a relist', () => events.includes(`ADDED:${gap}`));
    await until('watch re-established', () => watches >= 3);
    const after = unique('sb');
    await store.create(SandboxKind, sandbox(ns, after));
    await until('event after the failures', () => events.includes(`ADDED:${after}`));
    await informer.stop();
    expect(informer.lists).toBe(2);
  });
});
