// Conformance: update with optimistic concurrency, the spec/status split, delete preconditions,
// finalizers and deletionTimestamp.
import { describe, expect, it } from 'vitest';
import { ConversationKind } from '../../api/conversation.ts';
import { Conflict, Invalid, NotFound } from '../../api/errors.ts';
import { SandboxKind, type Sandbox } from '../../api/sandbox.ts';
import { collect, conversation, rejection, sandbox, summary, uniq, uniqueName, watching, WIRE_TIME, type Ctx } from './fixtures.ts';

const FINALIZER = 'conformance.agentyard.dev/hold';

export function describeUpdates(ctx: Ctx): void {
  describe('update and optimistic concurrency', () => {
    it('gives each write a new resourceVersion and refuses a stale one with Conflict', async () => {
      const { store, namespace } = ctx();
      const created = await store.create(SandboxKind, sandbox(uniqueName('sb'), { namespace }));
      const first = await store.update(SandboxKind, { ...created, spec: { paused: true } });
      expect(first.metadata.resourceVersion).not.toBe(created.metadata.resourceVersion);
      await rejection(store.update(SandboxKind, { ...created, spec: { paused: false, image: 'late' } }), Conflict);
      expect(await store.get(SandboxKind, namespace, created.metadata.name)).toEqual(first);
    });

    it('refuses an update without resourceVersion with Conflict', async () => {
      const { store, namespace } = ctx();
      const created = await store.create(SandboxKind, sandbox(uniqueName('sb'), { namespace }));
      const { resourceVersion: _rv, ...metadata } = created.metadata;
      await rejection(store.update(SandboxKind, { ...created, metadata, spec: { paused: true } }), Conflict);
      await rejection(store.updateStatus(SandboxKind, { ...created, metadata, status: { phase: 'RUNNING' } }), Conflict);
      expect(await store.get(SandboxKind, namespace, created.metadata.name)).toEqual(created);
    });

    it('refuses a body whose uid names another incarnation with Conflict', async () => {
      const { store, namespace } = ctx();
      const created = await store.create(SandboxKind, sandbox(uniqueName('sb'), { namespace }));
      const other = { ...created, metadata: { ...created.metadata, uid: '00000000-0000-0000-0000-000000000000' }, spec: { paused: true } };
      await rejection(store.update(SandboxKind, other), Conflict);
    });

    it('keeps the resourceVersion when an update changes nothing', async () => {
      const { store, namespace } = ctx();
      const created = await store.create(SandboxKind, sandbox(uniqueName('sb'), { namespace, labels: { a: 'b' } }));
      const same = await store.update(SandboxKind, structuredClone(created));
      expect(same.metadata.resourceVersion).toBe(created.metadata.resourceVersion);
      expect(same).toEqual(created);
    });

    it('replaces labels, annotations and finalizers but never server-owned fields', async () => {
      const { store, namespace } = ctx();
      const created = await store.create(SandboxKind, sandbox(uniqueName('sb'), { namespace, labels: { a: '1', b: '2' } }));
      const body: Sandbox = {
        ...created,
        metadata: {
          ...created.metadata,
          labels: { a: '3' },
          annotations: { note: 'x' },
          finalizers: [FINALIZER],
          creationTimestamp: '2000-01-01T00:00:00Z',
          generation: 42,
        },
      };
      const updated = await store.update(SandboxKind, body);
      expect(updated.metadata).toMatchObject({ labels: { a: '3' }, annotations: { note: 'x' }, finalizers: [FINALIZER] });
      expect(updated.metadata.uid).toBe(created.metadata.uid);
      expect(updated.metadata.creationTimestamp).toBe(created.metadata.creationTimestamp);
      expect(updated.metadata.generation).toBe(1);
      const cleared = await store.update(SandboxKind, { ...updated, metadata: { ...updated.metadata, finalizers: [] } });
      expect(cleared.metadata.finalizers ?? []).toEqual([]);
    });

    it('answers NotFound for writes to a missing object', async () => {
      const { store, namespace } = ctx();
      const created = await store.create(SandboxKind, sandbox(uniqueName('sb'), { namespace }));
      const ghost = sandbox(uniqueName('ghost'), { namespace });
      ghost.metadata.resourceVersion = created.metadata.resourceVersion!;
      await rejection(store.update(SandboxKind, ghost), NotFound);
      await rejection(store.updateStatus(SandboxKind, { ...ghost, status: { phase: 'RUNNING' } }), NotFound);
      await rejection(store.delete(SandboxKind, namespace, ghost.metadata.name), NotFound);
    });
  });

  describe('spec and status', () => {
    it('bumps generation for spec changes only; each write ignores the other half', async () => {
      const { store, namespace } = ctx();
      const created = await store.create(SandboxKind, sandbox(uniqueName('sb'), { namespace }));
      expect(created.metadata.generation).toBe(1);

      const s1 = await store.updateStatus(SandboxKind, { ...created, spec: { paused: true }, status: { phase: 'STARTING', observedGeneration: 1 } });
      expect(s1.status).toEqual({ phase: 'STARTING', observedGeneration: 1 });
      expect(s1.spec).toEqual({ paused: false });
      expect(s1.metadata.generation).toBe(1);
      expect(s1.metadata.resourceVersion).not.toBe(created.metadata.resourceVersion);

      const u1 = await store.update(SandboxKind, { ...s1, spec: { paused: true }, status: { phase: 'ERROR' } });
      expect(u1.spec).toEqual({ paused: true });
      expect(u1.status).toEqual({ phase: 'STARTING', observedGeneration: 1 });
      expect(u1.metadata.generation).toBe(2);

      const u2 = await store.update(SandboxKind, { ...u1, metadata: { ...u1.metadata, labels: { only: 'metadata' } } });
      expect(u2.metadata.generation).toBe(2);
      expect(u2.metadata.resourceVersion).not.toBe(u1.metadata.resourceVersion);

      const s2 = await store.updateStatus(SandboxKind, { ...u2, metadata: { ...u2.metadata, labels: { ignored: 'yes' } }, status: { phase: 'RUNNING', observedGeneration: 2 } });
      expect(s2.metadata.labels).toEqual({ only: 'metadata' });
      expect(s2.metadata.generation).toBe(2);
      expect(await store.get(SandboxKind, namespace, created.metadata.name)).toEqual(s2);

      const { status: _s, ...withoutStatus } = s2;
      const s3 = await store.updateStatus<Sandbox>(SandboxKind, withoutStatus);
      expect(s3.status).toBeUndefined();
    });

    it('refuses a status write with a stale resourceVersion with Conflict', async () => {
      const { store, namespace } = ctx();
      const created = await store.create(SandboxKind, sandbox(uniqueName('sb'), { namespace }));
      const moved = await store.update(SandboxKind, { ...created, spec: { paused: true } });
      await rejection(store.updateStatus(SandboxKind, { ...created, status: { phase: 'RUNNING' } }), Conflict);
      expect(await store.get(SandboxKind, namespace, created.metadata.name)).toEqual(moved);
    });

    it('keeps a Conversation status across spec updates', async () => {
      const { store, namespace } = ctx();
      const created = await store.create(ConversationKind, conversation(uniqueName('conv'), { namespace }));
      const withStatus = await store.updateStatus(ConversationKind, { ...created, status: { executionStatus: 'running', sandboxName: 'sb-1' } });
      const retitled = await store.update(ConversationKind, { ...withStatus, spec: { title: 'renamed' }, status: {} });
      expect(retitled.metadata.generation).toBe(2);
      expect(retitled.status).toEqual({ executionStatus: 'running', sandboxName: 'sb-1' });
    });
  });

  describe('delete and finalizers', () => {
    it('deletes an object without finalizers at once', async () => {
      const { store, namespace } = ctx();
      const created = await store.create(SandboxKind, sandbox(uniqueName('sb'), { namespace }));
      await store.delete(SandboxKind, namespace, created.metadata.name);
      expect(await store.get(SandboxKind, namespace, created.metadata.name)).toBeUndefined();
      await rejection(store.delete(SandboxKind, namespace, created.metadata.name), NotFound);
    });

    it('honours a resourceVersion precondition on delete', async () => {
      const { store, namespace } = ctx();
      const created = await store.create(SandboxKind, sandbox(uniqueName('sb'), { namespace }));
      const moved = await store.update(SandboxKind, { ...created, spec: { paused: true } });
      await rejection(store.delete(SandboxKind, namespace, created.metadata.name, { resourceVersion: created.metadata.resourceVersion! }), Conflict);
      expect(await store.get(SandboxKind, namespace, created.metadata.name)).toEqual(moved);
      await store.delete(SandboxKind, namespace, created.metadata.name, { resourceVersion: moved.metadata.resourceVersion! });
      expect(await store.get(SandboxKind, namespace, created.metadata.name)).toBeUndefined();
    });

    it('marks an object with finalizers once, and deletes it when the last finalizer goes', async () => {
      const { store, namespace } = ctx();
      const run = uniq();
      const created = await store.create(SandboxKind, sandbox(uniqueName('sb'), { namespace, labels: { run }, finalizers: [FINALIZER, `${FINALIZER}-2`] }));
      const name = created.metadata.name;
      const w = watching<Sandbox>(store, SandboxKind, namespace, { resourceVersion: created.metadata.resourceVersion!, labelSelector: `run=${run}` });
      try {
        await store.delete(SandboxKind, namespace, name);
        const marked = (await store.get(SandboxKind, namespace, name))!;
        expect(marked.metadata.deletionTimestamp).toMatch(WIRE_TIME);
        expect(marked.metadata.generation).toBe(2);
        expect(marked.metadata.finalizers).toEqual([FINALIZER, `${FINALIZER}-2`]);

        // A second delete changes nothing: the timestamp is set once.
        await store.delete(SandboxKind, namespace, name);
        expect(await store.get(SandboxKind, namespace, name)).toEqual(marked);

        // An update can neither clear the timestamp nor add a finalizer; status writes still work.
        const { deletionTimestamp: _d, ...metaWithout } = marked.metadata;
        const kept = await store.update(SandboxKind, { ...marked, metadata: { ...metaWithout, finalizers: [FINALIZER], labels: { run, step: 'one' } } });
        expect(kept.metadata.deletionTimestamp).toBe(marked.metadata.deletionTimestamp);
        expect(kept.metadata.finalizers).toEqual([FINALIZER]);
        const added = await rejection(store.update(SandboxKind, { ...kept, metadata: { ...kept.metadata, finalizers: [FINALIZER, 'new.example.com/f'] } }), Invalid);
        expect(added.detail.map((i) => i.loc)).toContainEqual(['metadata', 'finalizers']);
        const withStatus = await store.updateStatus(SandboxKind, { ...kept, status: { phase: 'MISSING' } });
        expect(withStatus.metadata.deletionTimestamp).toBe(marked.metadata.deletionTimestamp);

        await store.update(SandboxKind, { ...withStatus, metadata: { ...withStatus.metadata, finalizers: [] } });
        expect(await store.get(SandboxKind, namespace, name)).toBeUndefined();

        const events = [];
        for (;;) {
          const [e] = await collect(w.it, 1);
          events.push(e!);
          if (e!.type === 'DELETED') break;
        }
        expect(events[0]).toMatchObject({ type: 'MODIFIED', object: { metadata: { deletionTimestamp: marked.metadata.deletionTimestamp } } });
        expect(summary(events).at(-1)).toBe(`DELETED ${name}`);
        expect(summary(events).filter((s) => s.startsWith('DELETED'))).toHaveLength(1);
      } finally {
        w.stop();
      }
    });
  });
}
