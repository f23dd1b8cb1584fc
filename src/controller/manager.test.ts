import { afterEach, describe, expect, it } from 'vitest';
import { ConversationKind, type Conversation } from '../api/conversation.ts';
import { Gone } from '../api/errors.ts';
import { API_VERSION, LABEL_SANDBOX, type KubeObject, type ResourceKind } from '../api/meta.ts';
import { SandboxKind, type Sandbox } from '../api/sandbox.ts';
import { SqliteStore } from '../store/sqlite/sqlite-store.ts';
import type { ResourceStore, WatchOptions } from '../store/types.ts';
import { ManualClock } from './clock.ts';
import { Controller, ConversationCounts, PlacementIndex, sandboxKeysOfConversation } from './manager.ts';
import { changedBeyondStatus } from './predicates.ts';
import { interceptStore } from './testing/env.ts';

const NS = 'default';
const sandbox = (name: string): Sandbox => ({ apiVersion: API_VERSION, kind: 'Sandbox', metadata: { name, namespace: NS }, spec: { paused: false } });
const conversation = (name: string, sandboxName?: string): Conversation => ({
  apiVersion: API_VERSION,
  kind: 'Conversation',
  metadata: { name, namespace: NS, ...(sandboxName ? { labels: { [LABEL_SANDBOX]: sandboxName } } : {}) },
  spec: {},
});

/** Records reconciled keys and lets a test wait for one without sleeping. */
class Recorder {
  readonly seen: string[] = [];
  #waiters: { key: string; resolve: () => void }[] = [];
  reconcile = async (key: string) => {
    this.seen.push(key);
    for (const w of this.#waiters.filter((w) => w.key === key)) w.resolve();
    this.#waiters = this.#waiters.filter((w) => w.key !== key);
    return {};
  };
  next(key: string): Promise<void> {
    return new Promise((resolve) => this.#waiters.push({ key, resolve }));
  }
}

/** A store whose first `failures` watches of each kind throw Gone right away, as a compacted API server does. */
function goneOnce(store: ResourceStore, failures = 1): ResourceStore & { watches: number } {
  const left = new Map<string, number>();
  const counter = { watches: 0 };
  const wrapped = interceptStore(store, {
    watch: <T extends KubeObject>(kind: ResourceKind<T>, ns: string | undefined, opts?: WatchOptions) => {
      counter.watches++;
      const n = left.get(kind.kind) ?? failures;
      left.set(kind.kind, n - 1);
      if (n > 0) {
        return { [Symbol.asyncIterator]: () => ({ next: () => Promise.reject(new Gone('too old resource version')) }) } as AsyncIterable<never>;
      }
      return store.watch(kind, ns, opts);
    },
  });
  return Object.defineProperty(wrapped, 'watches', { get: () => counter.watches }) as ResourceStore & { watches: number };
}

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

function newStore(): SqliteStore {
  const store = new SqliteStore(':memory:', { clock: new ManualClock() });
  cleanups.push(() => store.close());
  return store;
}

async function started(ctrl: Controller): Promise<Controller> {
  cleanups.push(() => ctrl.stop());
  await ctrl.start();
  return ctrl;
}

describe('Controller', () => {
  it('reconciles what exists at start, then every change, keyed namespace/name', async () => {
    const store = newStore();
    await store.create(SandboxKind, sandbox('before'));
    const rec = new Recorder();
    const first = rec.next('default/before');
    await started(new Controller({ store }).register({ name: 'sandbox', kind: SandboxKind, reconcile: rec.reconcile }));
    await first;
    const later = rec.next('default/later');
    await store.create(SandboxKind, sandbox('later'));
    await later;
    const deleted = rec.next('default/later');
    await store.delete(SandboxKind, NS, 'later');
    await deleted; // a deletion is a change too: the reconciler finds the object gone
  });

  it('reconciles keys an event source sends (the runtime liveness watch), and stops the source on stop', async () => {
    const store = newStore();
    const rec = new Recorder();
    let send: ((key: string) => void) | undefined;
    let stopped = false;
    const source = async (enqueue: (key: string) => void, signal: AbortSignal) => {
      send = enqueue;
      await new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
      stopped = true;
    };
    const ctrl = await started(new Controller({ store }).register({ name: 'sandbox', kind: SandboxKind, reconcile: rec.reconcile, sources: [source] }));
    const poked = rec.next('default/died');
    send!('default/died');
    await poked;
    await ctrl.stop();
    expect(stopped).toBe(true);
  });

  it('maps a Conversation change onto its Sandbox and a Sandbox change onto its conversations', async () => {
    const store = newStore();
    const sandboxes = new Recorder();
    const conversations = new Recorder();
    const placements = new PlacementIndex();
    await started(
      new Controller({ store })
        .register({ name: 'sandbox', kind: SandboxKind, reconcile: sandboxes.reconcile, workers: 1, watches: [{ kind: ConversationKind as ResourceKind, map: sandboxKeysOfConversation }] })
        .register({
          name: 'conversation',
          kind: ConversationKind,
          reconcile: conversations.reconcile,
          observe: (obj: KubeObject, deleted: boolean) => placements.observe(obj, deleted),
          watches: [{ kind: SandboxKind as ResourceKind, map: (sb) => placements.conversationsOf(sb) }],
        }),
    );
    const sb = await store.create(SandboxKind, sandbox('sb1'));
    const woken = sandboxes.next('default/sb1');
    const c1 = conversations.next('default/c1');
    await store.create(ConversationKind, conversation('c1', 'sb1'));
    await Promise.all([woken, c1]);

    const c1Again = conversations.next('default/c1');
    await store.updateStatus(SandboxKind, { ...sb, status: { phase: 'RUNNING' } });
    await c1Again; // the waiting start proceeds when its sandbox changes
  });

  it('queues no pass for a change its update predicate drops, while the cache and observe still see it', async () => {
    const store = newStore();
    const rec = new Recorder();
    const observed: string[] = [];
    const ctrl = await started(
      new Controller({ store }).register({
        name: 'sandbox',
        kind: SandboxKind,
        reconcile: rec.reconcile,
        workers: 1,
        observe: (obj: Sandbox) => observed.push(`${obj.metadata.name}@${obj.metadata.resourceVersion}`),
        updatePredicate: changedBeyondStatus,
      }),
    );
    const created = rec.next('default/a');
    const a = await store.create(SandboxKind, sandbox('a'));
    await created;
    const withStatus = await store.updateStatus(SandboxKind, { ...a, status: { phase: 'RUNNING' } });
    // One worker takes keys in order: had the status change queued `a`, it would come before `barrier`.
    const barrier = rec.next('default/barrier');
    await store.create(SandboxKind, sandbox('barrier'));
    await barrier;
    expect(rec.seen).toEqual(['default/a', 'default/barrier']);
    expect(observed).toContain(`a@${withStatus.metadata.resourceVersion}`);
    expect(ctrl.cache(SandboxKind)?.peek(NS, 'a')?.metadata.resourceVersion).toBe(withStatus.metadata.resourceVersion);

    const annotated = rec.next('default/a');
    await store.update(SandboxKind, { ...withStatus, metadata: { ...withStatus.metadata, annotations: { note: 'x' } } });
    await annotated; // a change beyond the status is queued
    expect(rec.seen).toEqual(['default/a', 'default/barrier', 'default/a']);
  });

  it('relists after Gone and misses nothing written meanwhile', async () => {
    const base = newStore();
    const store = goneOnce(base);
    const rec = new Recorder();
    await base.create(SandboxKind, sandbox('a'));
    const a = rec.next('default/a');
    await started(new Controller({ store }).register({ name: 'sandbox', kind: SandboxKind, reconcile: rec.reconcile }));
    await a;
    const b = rec.next('default/b');
    await base.create(SandboxKind, sandbox('b'));
    await b;
    expect(store.watches).toBe(2); // the Gone watch, then the one after the relist
  });

  it('reconciles a change made after start before the objects the first list queued', async () => {
    const store = newStore();
    for (let i = 0; i < 20; i++) await store.create(SandboxKind, sandbox(`listed-${i}`));
    const seen: string[] = [];
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const ctrl = await started(
      new Controller({ store }).register({
        name: 'sandbox',
        kind: SandboxKind,
        workers: 1,
        reconcile: async (key) => {
          seen.push(key);
          if (seen.length === 1) await gate; // the worker is busy with the first listed key
          return {};
        },
      }),
    );
    await store.create(SandboxKind, sandbox('changed'));
    const queue = ctrl.queue('sandbox')!;
    while (queue.length < 20) await new Promise((r) => setImmediate(r)); // 19 listed + the change
    expect(queue.lowPriority).toBe(19);
    release();
    while (seen.length < 21) await new Promise((r) => setImmediate(r));
    expect(seen[0]).toMatch(/^default\/listed-/);
    expect(seen[1]).toBe('default/changed');
  });

  it('tells handlers of an object deleted while no watch ran, when the relist no longer finds it', async () => {
    const base = newStore();
    await base.create(SandboxKind, sandbox('sb1'));
    await base.create(ConversationKind, conversation('kept', 'sb1'));
    await base.create(ConversationKind, conversation('gone', 'sb1'));
    let failed = false;
    // The first Conversation watch: 'gone' is deleted, then the watch is Gone (compacted meanwhile).
    const store = interceptStore(base, {
      watch: <T extends KubeObject>(kind: ResourceKind<T>, ns: string | undefined, opts?: WatchOptions) => {
        if (kind.kind !== 'Conversation' || failed) return base.watch(kind, ns, opts);
        failed = true;
        return { [Symbol.asyncIterator]: () => ({ next: async () => (await base.delete(ConversationKind, NS, 'gone'), Promise.reject(new Gone('too old resource version'))) }) } as AsyncIterable<never>;
      },
    });
    const counts = new ConversationCounts();
    const deletions: string[] = [];
    const rec = new Recorder();
    const relisted = rec.next('default/gone');
    await started(
      new Controller({ store }).register({
        name: 'conversation',
        kind: ConversationKind,
        reconcile: rec.reconcile,
        observe: (obj: KubeObject, deleted: boolean) => {
          counts.observe(obj, deleted);
          if (deleted) deletions.push(obj.metadata.name);
        },
      }),
    );
    await relisted; // queued again by the relist that found it gone
    while (deletions.length === 0) await new Promise((r) => setImmediate(r));
    expect(deletions).toEqual(['gone']);
    expect(counts.of(sandbox('sb1'))).toBe(1);
  });

  it('stop() ends watches and workers: later changes reconcile nothing', async () => {
    const store = newStore();
    const rec = new Recorder();
    const ctrl = new Controller({ store }).register({ name: 'sandbox', kind: SandboxKind, reconcile: rec.reconcile, workers: 3 });
    await ctrl.start();
    await ctrl.stop();
    await store.create(SandboxKind, sandbox('after-stop'));
    await store.get(SandboxKind, NS, 'after-stop');
    expect(rec.seen).toEqual([]);
  });
});

describe('ConversationCounts', () => {
  it('counts conversations by their sandbox label, leaving out those deleted or being deleted', () => {
    const counts = new ConversationCounts();
    counts.observe(conversation('c1', 'sb1'), false);
    counts.observe(conversation('c2', 'sb1'), false);
    counts.observe(conversation('c2', 'sb1'), false); // an update: still one
    counts.observe(conversation('c3'), false); // no sandbox label
    counts.observe({ ...conversation('c4', 'sb2'), metadata: { ...conversation('c4', 'sb2').metadata, namespace: 'other' } }, false);
    expect([counts.of(sandbox('sb1')), counts.of(sandbox('sb2'))]).toEqual([2, 0]); // sb2's is in another namespace
    counts.observe({ ...conversation('c1', 'sb1'), metadata: { ...conversation('c1', 'sb1').metadata, deletionTimestamp: '2026-01-01T00:00:00Z' } }, false);
    expect(counts.of(sandbox('sb1'))).toBe(1);
    counts.observe(conversation('c2', 'sb2'), false); // relabelled
    expect([counts.of(sandbox('sb1')), counts.of(sandbox('sb2'))]).toEqual([0, 1]);
    counts.observe(conversation('c2', 'sb2'), true);
    expect(counts.of(sandbox('sb2'))).toBe(0);
  });
});

describe('ConversationCounts.runningOn', () => {
  it('counts the running conversations of a sandbox as their execution status changes, moves and deletions come in', () => {
    const counts = new ConversationCounts();
    const withStatus = (name: string, sb: string, executionStatus?: 'running' | 'finished'): Conversation => ({ ...conversation(name, sb), status: executionStatus ? { executionStatus } : {} });
    counts.observe(withStatus('a', 'sb1', 'running'), false);
    counts.observe(withStatus('b', 'sb1', 'finished'), false);
    counts.observe(withStatus('c', 'sb2', 'running'), false);
    expect([counts.runningOn(sandbox('sb1')), counts.runningOn(sandbox('sb2'))]).toEqual([1, 1]);
    counts.observe(withStatus('a', 'sb1', 'finished'), false);
    counts.observe(withStatus('b', 'sb1', 'running'), false);
    expect(counts.runningOn(sandbox('sb1'))).toBe(1);
    counts.observe(withStatus('b', 'sb1', 'running'), true);
    counts.observe(withStatus('c', 'sb1', 'running'), false);
    expect([counts.runningOn(sandbox('sb1')), counts.runningOn(sandbox('sb2'))]).toEqual([1, 0]);
  });
});

describe('PlacementIndex', () => {
  it('follows conversations as they are placed, moved and deleted', () => {
    const idx = new PlacementIndex();
    const sb1 = sandbox('sb1');
    const sb2 = sandbox('sb2');
    idx.observe(conversation('c1', 'sb1'), false);
    idx.observe(conversation('c2', 'sb1'), false);
    idx.observe(conversation('c3'), false); // not placed yet
    expect(idx.conversationsOf(sb1).sort()).toEqual(['default/c1', 'default/c2']);
    idx.observe({ ...conversation('c2'), status: { sandboxName: 'sb2' } }, false);
    expect(idx.conversationsOf(sb1)).toEqual(['default/c1']);
    expect(idx.conversationsOf(sb2)).toEqual(['default/c2']);
    idx.observe(conversation('c1', 'sb1'), true);
    expect(idx.conversationsOf(sb1)).toEqual([]);
  });
});
