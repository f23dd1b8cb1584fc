// Conformance: watch. Resource versions are opaque here: they are compared for equality only,
// never parsed or ordered, because a Kubernetes resourceVersion promises nothing more.
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { ConversationKind, type Conversation } from '../../api/conversation.ts';
import { Gone } from '../../api/errors.ts';
import { SandboxKind, type Sandbox } from '../../api/sandbox.ts';
import type { WatchEvent } from '../types.ts';
import { collect, conversation, rejection, sandbox, summary, uniq, watching, type ConformanceOptions, type Ctx } from './fixtures.ts';

export function describeWatch(ctx: Ctx, options: ConformanceOptions): void {
  describe('watch', () => {
    it('replays changes after a resourceVersion in order, then continues live, without gaps or duplicates', async () => {
      const { store, namespace } = ctx();
      const run = uniq();
      const selector = `run=${run}`;
      const start = (await store.list(SandboxKind, namespace, { labelSelector: selector })).resourceVersion;
      const n = (s: string) => `${s}-${run}`;

      const a1 = await store.create(SandboxKind, sandbox(n('a'), { namespace, labels: { run } }));
      const a2 = await store.update(SandboxKind, { ...a1, spec: { paused: true } });
      const b1 = await store.create(SandboxKind, sandbox(n('b'), { namespace, labels: { run } }));
      const b2 = await store.updateStatus(SandboxKind, { ...b1, status: { phase: 'RUNNING' } });
      await store.delete(SandboxKind, namespace, n('a'));

      const w = watching<Sandbox>(store, SandboxKind, namespace, { resourceVersion: start, labelSelector: selector });
      try {
        const past = await collect(w.it, 5);
        expect(summary(past)).toEqual([`ADDED ${n('a')}`, `MODIFIED ${n('a')}`, `ADDED ${n('b')}`, `MODIFIED ${n('b')}`, `DELETED ${n('a')}`]);
        expect(past.slice(0, 4).map((e) => e.object)).toEqual([a1, a2, b1, b2]);
        expect(past[4]!.object.spec).toEqual({ paused: true });
        // A delete is a change of its own, with its own resourceVersion.
        expect(past[4]!.object.metadata.resourceVersion).not.toBe(a2.metadata.resourceVersion);

        const b3 = await store.update(SandboxKind, { ...b2, spec: { paused: true } });
        await store.delete(SandboxKind, namespace, n('b'));
        const live = await collect(w.it, 2);
        expect(summary(live)).toEqual([`MODIFIED ${n('b')}`, `DELETED ${n('b')}`]);
        expect(live[0]!.object).toEqual(b3);

        // The next event is a fresh sentinel, so nothing was delivered twice in between.
        const c1 = await store.create(SandboxKind, sandbox(n('c'), { namespace, labels: { run } }));
        expect(await collect(w.it, 1)).toEqual([{ type: 'ADDED', object: c1 }]);
      } finally {
        w.stop();
      }
    });

    it('from a list resourceVersion, delivers only what changed after the list', async () => {
      const { store, namespace } = ctx();
      const run = uniq();
      const x = await store.create(SandboxKind, sandbox(`x-${run}`, { namespace, labels: { run } }));
      const listed = await store.list(SandboxKind, namespace, { labelSelector: `run=${run}` });
      expect(listed.items).toEqual([x]);
      const w = watching<Sandbox>(store, SandboxKind, namespace, { resourceVersion: listed.resourceVersion, labelSelector: `run=${run}` });
      try {
        const y = await store.create(SandboxKind, sandbox(`y-${run}`, { namespace, labels: { run } }));
        expect(await collect(w.it, 1)).toEqual([{ type: 'ADDED', object: y }]);
      } finally {
        w.stop();
      }
    });

    it('resumes from the resourceVersion of any event', async () => {
      const { store, namespace } = ctx();
      const run = uniq();
      const start = (await store.list(SandboxKind, namespace)).resourceVersion;
      const a = await store.create(SandboxKind, sandbox(`a-${run}`, { namespace, labels: { run } }));
      await store.update(SandboxKind, { ...a, spec: { paused: true } });
      await store.delete(SandboxKind, namespace, `a-${run}`);
      const first = watching<Sandbox>(store, SandboxKind, namespace, { resourceVersion: start, labelSelector: `run=${run}` });
      const events = await collect(first.it, 3).finally(() => first.stop());
      const resumed = watching<Sandbox>(store, SandboxKind, namespace, { resourceVersion: events[0]!.object.metadata.resourceVersion!, labelSelector: `run=${run}` });
      try {
        expect(await collect(resumed.it, 2)).toEqual(events.slice(1));
      } finally {
        resumed.stop();
      }
    });

    it('without a resourceVersion starts at the present', async () => {
      const { store, namespace } = ctx();
      const run = uniq();
      await store.create(SandboxKind, sandbox(`old-${run}`, { namespace, labels: { run } }));
      const w = watching<Sandbox>(store, SandboxKind, namespace, { labelSelector: `run=${run}` });
      try {
        let first: IteratorResult<WatchEvent<Sandbox>> | undefined;
        const pending = w.it.next().then((r) => (first = r));
        // The watch may take a moment to be in place on a remote server: write until it sees one.
        let fresh = await store.create(SandboxKind, sandbox(`new-${run}`, { namespace, labels: { run } }));
        for (let i = 0; first === undefined && i < 100; i++) {
          const nap = new AbortController();
          await Promise.race([pending, sleep(100, undefined, { signal: nap.signal }).catch(() => {})]);
          nap.abort();
          if (first === undefined) fresh = await store.update(SandboxKind, { ...fresh, metadata: { ...fresh.metadata, annotations: { n: String(i) } } });
        }
        const got = await pending;
        expect(got.done).toBe(false);
        expect(got.value?.object.metadata.name).toBe(`new-${run}`);
      } finally {
        w.stop();
      }
    });

    it('with a label selector, reports objects entering the selection as ADDED and leaving it as DELETED', async () => {
      const { store, namespace } = ctx();
      const run = uniq();
      const start = (await store.list(SandboxKind, namespace)).resourceVersion;
      const w = watching<Sandbox>(store, SandboxKind, namespace, { resourceVersion: start, labelSelector: `run=${run},tier=x` });
      try {
        const p = await store.create(SandboxKind, sandbox(`p-${run}`, { namespace, labels: { run, tier: 'x' } }));
        const q = await store.create(SandboxKind, sandbox(`q-${run}`, { namespace, labels: { run, tier: 'y' } }));
        const q2 = await store.update(SandboxKind, { ...q, metadata: { ...q.metadata, labels: { run, tier: 'x' } } });
        const p2 = await store.update(SandboxKind, { ...p, metadata: { ...p.metadata, labels: { run, tier: 'y' } } });
        await store.update(SandboxKind, { ...p2, spec: { paused: true } });
        await store.delete(SandboxKind, namespace, `q-${run}`);
        const s = await store.create(SandboxKind, sandbox(`s-${run}`, { namespace, labels: { run, tier: 'x' } }));
        const events = await collect(w.it, 5);
        expect(summary(events)).toEqual([`ADDED p-${run}`, `ADDED q-${run}`, `DELETED p-${run}`, `DELETED q-${run}`, `ADDED s-${run}`]);
        expect(events[1]!.object).toEqual(q2);
        // Leaving the selection: the last content that matched, at the resourceVersion of the change.
        expect(events[2]!.object.metadata.labels).toEqual({ run, tier: 'x' });
        expect(events[2]!.object.metadata.resourceVersion).toBe(p2.metadata.resourceVersion);
        expect(events[4]!.object).toEqual(s);
      } finally {
        w.stop();
      }
    });

    it('sees only its namespace, or all of them when the namespace is undefined', async ({ skip }) => {
      const { store, namespace, otherNamespace } = ctx();
      if (!otherNamespace) return skip('the factory gave no otherNamespace');
      const run = uniq();
      const start = (await store.list(SandboxKind, undefined)).resourceVersion;
      const one = watching<Sandbox>(store, SandboxKind, namespace, { resourceVersion: start, labelSelector: `run=${run}` });
      const all = watching<Sandbox>(store, SandboxKind, undefined, { resourceVersion: start, labelSelector: `run=${run}` });
      try {
        await store.create(SandboxKind, sandbox(`o-${run}`, { namespace: otherNamespace, labels: { run } }));
        await store.create(SandboxKind, sandbox(`h-${run}`, { namespace, labels: { run } }));
        expect(summary(await collect(one.it, 1))).toEqual([`ADDED h-${run}`]);
        const both = await collect(all.it, 2);
        expect(both.map((e) => `${e.object.metadata.namespace}/${e.object.metadata.name}`)).toEqual([`${otherNamespace}/o-${run}`, `${namespace}/h-${run}`]);
      } finally {
        one.stop();
        all.stop();
      }
    });

    it('sees only its kind', async () => {
      const { store, namespace } = ctx();
      const run = uniq();
      const w = watching<Conversation>(store, ConversationKind, namespace, {
        resourceVersion: (await store.list(ConversationKind, namespace)).resourceVersion,
        labelSelector: `run=${run}`,
      });
      try {
        await store.create(SandboxKind, sandbox(`k-${run}`, { namespace, labels: { run } }));
        const conv = await store.create(ConversationKind, conversation(`k-${run}`, { namespace, labels: { run } }));
        expect(await collect(w.it, 1)).toEqual([{ type: 'ADDED', object: conv }]);
      } finally {
        w.stop();
      }
    });

    it('serves several watchers at once, each the whole sequence', async () => {
      const { store, namespace } = ctx();
      const run = uniq();
      const start = (await store.list(SandboxKind, namespace)).resourceVersion;
      const ws = [1, 2, 3].map(() => watching<Sandbox>(store, SandboxKind, namespace, { resourceVersion: start, labelSelector: `run=${run}` }));
      try {
        const pending = ws.map((w) => collect(w.it, 4));
        const a = await store.create(SandboxKind, sandbox(`a-${run}`, { namespace, labels: { run } }));
        const a2 = await store.update(SandboxKind, { ...a, spec: { paused: true } });
        const b = await store.create(SandboxKind, sandbox(`b-${run}`, { namespace, labels: { run } }));
        const b2 = await store.updateStatus(SandboxKind, { ...b, status: { phase: 'PAUSED' } });
        const want = [a, a2, b, b2].map((o, i) => ({ type: i % 2 ? 'MODIFIED' : 'ADDED', object: o }));
        for (const got of await Promise.all(pending)) expect(got).toEqual(want);
      } finally {
        for (const w of ws) w.stop();
      }
    });

    it('ends cleanly when the signal aborts, also while waiting', async () => {
      const { store, namespace } = ctx();
      const pre = new AbortController();
      pre.abort();
      const never = store.watch(SandboxKind, namespace, { signal: pre.signal })[Symbol.asyncIterator]();
      expect((await never.next()).done).toBe(true);

      const run = uniq();
      const ac = new AbortController();
      const seen: string[] = [];
      const loop = (async () => {
        for await (const e of store.watch(SandboxKind, namespace, { labelSelector: `run=${run}`, signal: ac.signal })) {
          seen.push(e.object.metadata.name);
        }
      })();
      const w = store.watch(SandboxKind, namespace, { labelSelector: `run=${run}`, signal: ac.signal })[Symbol.asyncIterator]();
      const waiting = w.next();
      ac.abort();
      expect((await waiting).done).toBe(true);
      await loop;
      expect(seen).toEqual([]);
    });

    it.skipIf(!options.canForceCompaction)('throws Gone for a resourceVersion older than the store remembers', async () => {
      const { store, namespace } = ctx();
      const run = uniq();
      const created = await store.create(SandboxKind, sandbox(`g-${run}`, { namespace, labels: { run } }));
      const updated = await store.update(SandboxKind, { ...created, spec: { paused: true } });
      await store.updateStatus(SandboxKind, { ...updated, status: { phase: 'RUNNING' } });
      await options.canForceCompaction!(store);
      const stale = watching<Sandbox>(store, SandboxKind, namespace, { resourceVersion: created.metadata.resourceVersion!, labelSelector: `run=${run}` });
      await rejection(stale.it.next(), Gone).finally(() => stale.stop());

      // A fresh list gives a resourceVersion to start over from.
      const relist = await store.list(SandboxKind, namespace, { labelSelector: `run=${run}` });
      const fresh = watching<Sandbox>(store, SandboxKind, namespace, { resourceVersion: relist.resourceVersion, labelSelector: `run=${run}` });
      try {
        await store.delete(SandboxKind, namespace, `g-${run}`);
        expect(summary(await collect(fresh.it, 1))).toEqual([`DELETED g-${run}`]);
      } finally {
        fresh.stop();
      }
    });
  });
}
