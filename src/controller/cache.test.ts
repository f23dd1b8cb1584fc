// The controller's informer cache and the CachedStore that serves reconcilers from it, on a real
// SQLite store: reads of a watched kind never reach the store once the cache is filled, follow
// every change the watch delivers, and come back as copies; other kinds and namespaces, and every
// write, go to the store.
import { afterEach, describe, expect, it } from 'vitest';
import { ConversationKind, type Conversation } from '../api/conversation.ts';
import { ANNOTATION_LAST_ACTIVITY, API_VERSION, type KubeObject, type ResourceKind } from '../api/meta.ts';
import { SandboxKind, type Sandbox } from '../api/sandbox.ts';
import { SqliteStore } from '../store/sqlite/sqlite-store.ts';
import type { ResourceStore } from '../store/types.ts';
import { CachedStore } from './cache.ts';
import { ManualClock } from './clock.ts';
import { createController } from './embedded.ts';
import { Controller } from './manager.ts';
import { FakeRuntime } from './testing/fake-runtime.ts';
import { interceptStore } from './testing/env.ts';

const NS = 'default';
const sandbox = (name: string, labels?: Record<string, string>, namespace = NS): Sandbox => ({ apiVersion: API_VERSION, kind: 'Sandbox', metadata: { name, namespace, ...(labels ? { labels } : {}) }, spec: { paused: false } });

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** The store, and how many reads of each kind reached it. */
function countingStore(): { store: ResourceStore; base: SqliteStore; reads: Map<string, number> } {
  const base = new SqliteStore(':memory:', { clock: new ManualClock() });
  cleanups.push(() => base.close());
  const reads = new Map<string, number>();
  const count = (kind: ResourceKind) => reads.set(kind.kind, (reads.get(kind.kind) ?? 0) + 1);
  const store = interceptStore(base, {
    get: <T extends KubeObject>(kind: ResourceKind<T>, ns: string, name: string) => (count(kind), base.get(kind, ns, name)),
    list: <T extends KubeObject>(kind: ResourceKind<T>, ns: string | undefined, opts?: { labelSelector?: string }) => (count(kind), base.list(kind, ns, opts)),
  });
  return { store, base, reads };
}

/** A Controller over Sandboxes whose passes a test can wait for (a pass runs after the cache took the change in). */
async function startedController(store: ResourceStore, namespace?: string) {
  const passes: string[] = [];
  let waiters: { key: string; resolve: () => void }[] = [];
  const controller = new Controller({ store, ...(namespace ? { namespace } : {}) }).register({
    name: 'sandbox',
    kind: SandboxKind,
    reconcile: async (key) => {
      passes.push(key);
      for (const w of waiters.filter((w) => w.key === key)) w.resolve();
      waiters = waiters.filter((w) => w.key !== key);
      return {};
    },
  });
  const next = (key: string) => new Promise<void>((resolve) => waiters.push({ key, resolve }));
  return { controller, next, passes };
}

describe('CachedStore over the controller cache', () => {
  it('serves get and list of a watched kind from memory, current with every watched change', async () => {
    const { store, base, reads } = countingStore();
    await base.create(SandboxKind, sandbox('b', { team: 'x' }));
    await base.create(SandboxKind, sandbox('a', { team: 'y' }));
    const { controller, next } = await startedController(store, NS);
    const cached = new CachedStore(store, (kind) => controller.cache(kind));
    // Not started: no cache yet, the store answers.
    expect((await cached.get(SandboxKind, NS, 'a'))?.metadata.name).toBe('a');
    expect(reads.get('Sandbox')).toBe(1);

    const seenC = next('default/c');
    await controller.start();
    cleanups.push(() => controller.stop());
    const listsAtStart = reads.get('Sandbox')!;
    expect((await cached.get(SandboxKind, NS, 'a'))?.metadata.labels).toEqual({ team: 'y' });
    expect((await cached.list(SandboxKind, NS)).items.map((s) => s.metadata.name)).toEqual(['a', 'b']);
    expect((await cached.list(SandboxKind, NS, { labelSelector: 'team=x' })).items.map((s) => s.metadata.name)).toEqual(['b']);

    const created = await base.create(SandboxKind, sandbox('c'));
    await seenC;
    expect((await cached.get(SandboxKind, NS, 'c'))?.metadata.resourceVersion).toBe(created.metadata.resourceVersion);
    const updated = next('default/c');
    const written = await base.updateStatus(SandboxKind, { ...created, status: { phase: 'RUNNING' } });
    await updated;
    expect(await cached.get(SandboxKind, NS, 'c')).toEqual(written);
    const deleted = next('default/c');
    await base.delete(SandboxKind, NS, 'c');
    await deleted;
    expect(await cached.get(SandboxKind, NS, 'c')).toBeUndefined();
    expect((await cached.list(SandboxKind, NS)).items).toHaveLength(2);
    // The controller's own list at start was the last Sandbox read that reached the store.
    expect(reads.get('Sandbox')).toBe(listsAtStart);
  });

  it('hands out copies: a reconciler changing what it read does not change the cache', async () => {
    const { store, base } = countingStore();
    await base.create(SandboxKind, sandbox('a'));
    const { controller } = await startedController(store, NS);
    await controller.start();
    cleanups.push(() => controller.stop());
    const cached = new CachedStore(store, (kind) => controller.cache(kind));
    const first = (await cached.get(SandboxKind, NS, 'a'))!;
    first.spec.paused = true;
    first.metadata.labels = { changed: 'yes' };
    (await cached.list(SandboxKind, NS)).items[0]!.spec.image = 'changed';
    expect(await cached.get(SandboxKind, NS, 'a')).toEqual(await base.get(SandboxKind, NS, 'a'));
  });

  it('sends other kinds, other namespaces and every write to the store', async () => {
    const { store, base, reads } = countingStore();
    await base.create(SandboxKind, sandbox('elsewhere', undefined, 'other'));
    const { controller } = await startedController(store, NS);
    await controller.start();
    cleanups.push(() => controller.stop());
    const cached = new CachedStore(store, (kind) => controller.cache(kind));
    const before = reads.get('Sandbox')!;
    expect((await cached.get(SandboxKind, 'other', 'elsewhere'))?.metadata.namespace).toBe('other');
    expect(reads.get('Sandbox')).toBe(before + 1);
    const conv: Conversation = { apiVersion: API_VERSION, kind: 'Conversation', metadata: { name: 'c1', namespace: NS }, spec: {} };
    await cached.create(ConversationKind, conv);
    expect((await cached.list(ConversationKind, NS)).items.map((c) => c.metadata.name)).toEqual(['c1']);
    expect(reads.get('Conversation')).toBe(1);
    const written = await cached.create(SandboxKind, sandbox('new'));
    expect(await base.get(SandboxKind, NS, 'new')).toEqual(written);
  });
});

describe('createController', () => {
  it('reads each Sandbox from the informer cache, not the store, for every pass to an idle pause', async () => {
    const clock = new ManualClock('2026-01-01T00:00:00Z');
    const { store, base, reads } = countingStore();
    const runtime = new FakeRuntime();
    runtime.startResult = (name) => ({ phase: 'running', runtimeId: name, url: `http://127.0.0.1:1/${name}` });
    const controller = createController({ store, runtime, clock, settings: { idleTimeMs: 60_000, deletionTimeMs: 3_600_000, capacity: 5 }, namespace: NS });
    await controller.start();
    cleanups.push(() => controller.stop());
    const sandboxReads = reads.get('Sandbox') ?? 0;
    const now = clock.now().toISO()!;
    await base.create(SandboxKind, { ...sandbox('sb'), metadata: { name: 'sb', namespace: NS, annotations: { [ANNOTATION_LAST_ACTIVITY]: now } } });
    const running = await waitFor(base, 'sb', (sb) => sb.status?.phase === 'RUNNING');
    expect(running.metadata.finalizers).toHaveLength(1);
    clock.advance(120_000);
    controller.queue('sandbox')!.add(`${NS}/sb`);
    const paused = await waitFor(base, 'sb', (sb) => sb.status?.phase === 'PAUSED');
    expect(paused.status?.pauseReason).toBe('IdleTimeout');
    expect(reads.get('Sandbox') ?? 0).toBe(sandboxReads);
  });
});

async function waitFor(store: SqliteStore, name: string, ok: (sb: Sandbox) => boolean): Promise<Sandbox> {
  const current = await store.get(SandboxKind, NS, name);
  if (current && ok(current)) return current;
  for await (const e of store.watch(SandboxKind, NS, { resourceVersion: current?.metadata.resourceVersion ?? '0', signal: AbortSignal.timeout(10_000) })) {
    if (e.object.metadata.name === name && ok(e.object)) return e.object;
  }
  throw new Error(`Sandbox ${name} never got there`);
}
