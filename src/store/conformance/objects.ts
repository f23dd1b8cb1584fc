// Conformance: create, get, list, label selectors, schema validation and Secrets.
import { describe, expect, it } from 'vitest';
import { ConversationKind } from '../../api/conversation.ts';
import { BadRequest, Conflict, Invalid } from '../../api/errors.ts';
import { SandboxKind, type Sandbox } from '../../api/sandbox.ts';
import { SecretKind } from '../../api/secret.ts';
import { b64, conversation, rejection, sandbox, secret, uniq, uniqueName, WIRE_TIME, type Ctx } from './fixtures.ts';

export function describeObjects(ctx: Ctx): void {
  describe('create and get', () => {
    it('assigns uid, resourceVersion, generation 1 and creationTimestamp, and drops status', async () => {
      const { store, namespace } = ctx();
      const input = sandbox(uniqueName('sb'), { namespace, labels: { a: 'b' }, status: { phase: 'RUNNING' } });
      input.metadata = { ...input.metadata, uid: 'client-uid', resourceVersion: '12345', generation: 7 };
      const created = await store.create(SandboxKind, input);
      expect(created.apiVersion).toBe(SandboxKind.apiVersion);
      expect(created.kind).toBe('Sandbox');
      expect(created.metadata).toMatchObject({ name: input.metadata.name, namespace, labels: { a: 'b' }, generation: 1 });
      expect(created.metadata.uid).toEqual(expect.any(String));
      expect(created.metadata.uid).not.toBe('client-uid');
      expect(created.metadata.resourceVersion).toEqual(expect.any(String));
      expect(created.metadata.resourceVersion).not.toBe('');
      expect(created.metadata.creationTimestamp).toMatch(WIRE_TIME);
      expect(created.metadata.deletionTimestamp).toBeUndefined();
      expect(created.spec).toEqual({ paused: false });
      expect(created.status).toBeUndefined();
      expect(await store.get(SandboxKind, namespace, input.metadata.name)).toEqual(created);
    });

    it('fills schema defaults on create and update, as the API server does', async () => {
      const { store, namespace } = ctx();
      const created = await store.create(SandboxKind, sandbox(uniqueName('sb'), { namespace, spec: {} }));
      expect(created.spec).toEqual({ paused: false });
      const same = await store.update(SandboxKind, { ...created, spec: {} });
      expect(same.spec).toEqual({ paused: false });
      expect(same.metadata.generation).toBe(1);
      const message = { role: 'user' as const, content: [{ type: 'text' as const, text: 'hi' }] };
      const conv = await store.create(ConversationKind, conversation(uniqueName('conv'), { namespace, spec: { initialMessage: message } }));
      expect(conv.spec.initialMessage).toEqual({ ...message, run: true });
      const bare = await store.create(ConversationKind, conversation(uniqueName('conv'), { namespace, spec: {} }));
      expect(bare.spec).toEqual({});
    });

    it('gives every object its own uid', async () => {
      const { store, namespace } = ctx();
      const a = await store.create(SandboxKind, sandbox(uniqueName('sb'), { namespace }));
      const b = await store.create(SandboxKind, sandbox(uniqueName('sb'), { namespace }));
      expect(a.metadata.uid).not.toBe(b.metadata.uid);
    });

    it('refuses a name that already exists with Conflict', async () => {
      const { store, namespace } = ctx();
      const name = uniqueName('sb');
      const first = await store.create(SandboxKind, sandbox(name, { namespace, labels: { v: '1' } }));
      await rejection(store.create(SandboxKind, sandbox(name, { namespace, labels: { v: '2' } })), Conflict);
      expect(await store.get(SandboxKind, namespace, name)).toEqual(first);
    });

    it('keeps kinds apart: the same name in another kind is another object', async () => {
      const { store, namespace } = ctx();
      const name = uniqueName('same');
      await store.create(SandboxKind, sandbox(name, { namespace }));
      const conv = await store.create(ConversationKind, conversation(name, { namespace }));
      expect(conv.kind).toBe('Conversation');
      expect((await store.get(ConversationKind, namespace, name))?.spec).toEqual({ title: 'hello' });
      expect((await store.get(SandboxKind, namespace, name))?.kind).toBe('Sandbox');
    });

    it('answers undefined for a missing object', async () => {
      const { store, namespace } = ctx();
      expect(await store.get(SandboxKind, namespace, uniqueName('missing'))).toBeUndefined();
    });
  });

  describe('list and label selectors', () => {
    it('lists sorted by name, with a resourceVersion', async () => {
      const { store, namespace } = ctx();
      const run = uniq();
      for (const n of ['c', 'a', 'b']) await store.create(SandboxKind, sandbox(`${n}-${run}`, { namespace, labels: { run } }));
      const listed = await store.list(SandboxKind, namespace, { labelSelector: `run=${run}` });
      expect(listed.items.map((o) => o.metadata.name)).toEqual([`a-${run}`, `b-${run}`, `c-${run}`]);
      expect(listed.items.every((o) => o.kind === 'Sandbox' && o.apiVersion === SandboxKind.apiVersion)).toBe(true);
      expect(listed.resourceVersion).toEqual(expect.any(String));
      expect(listed.resourceVersion).not.toBe('');
      const all = await store.list(SandboxKind, namespace);
      expect(all.items.filter((o) => o.metadata.labels?.run === run)).toHaveLength(3);
    });

    it('lists across all namespaces when the namespace is undefined', async () => {
      const { store, namespace, otherNamespace } = ctx();
      const run = uniq();
      await store.create(SandboxKind, sandbox(`x-${run}`, { namespace, labels: { run } }));
      if (otherNamespace) await store.create(SandboxKind, sandbox(`y-${run}`, { namespace: otherNamespace, labels: { run } }));
      const listed = await store.list(SandboxKind, undefined, { labelSelector: `run=${run}` });
      const got = listed.items.map((o) => `${o.metadata.namespace}/${o.metadata.name}`);
      const want = [`${namespace}/x-${run}`, ...(otherNamespace ? [`${otherNamespace}/y-${run}`] : [])];
      expect(got).toEqual(want.sort());
      if (otherNamespace) {
        const other = await store.list(SandboxKind, otherNamespace, { labelSelector: `run=${run}` });
        expect(other.items.map((o) => o.metadata.name)).toEqual([`y-${run}`]);
      }
    });

    it('filters with every selector operator', async () => {
      const { store, namespace } = ctx();
      const run = uniq();
      const labels: Record<string, Record<string, string>> = {
        p: { run, tier: 'web', env: 'prod' },
        q: { run, tier: 'db', env: 'dev' },
        r: { run, tier: 'cache' },
        s: { run },
      };
      for (const [n, l] of Object.entries(labels)) await store.create(SandboxKind, sandbox(`${n}-${run}`, { namespace, labels: l }));
      const cases: [string, string[]][] = [
        ['tier=web', ['p']],
        ['tier==db', ['q']],
        ['tier!=web', ['q', 'r', 's']],
        ['tier in (web, db)', ['p', 'q']],
        ['tier notin (web,db)', ['r', 's']],
        ['env', ['p', 'q']],
        ['!env', ['r', 's']],
        ['tier,!env', ['r']],
        ['env=prod,tier=db', []],
      ];
      for (const [selector, want] of cases) {
        const listed = await store.list(SandboxKind, namespace, { labelSelector: `run=${run},${selector}` });
        expect({ selector, names: listed.items.map((o) => o.metadata.name) }).toEqual({ selector, names: want.map((n) => `${n}-${run}`) });
      }
    });

    it('refuses a malformed selector with Invalid', async () => {
      const { store, namespace } = ctx();
      await rejection(store.list(SandboxKind, namespace, { labelSelector: 'tier in web' }), Invalid);
      await rejection(store.list(SandboxKind, namespace, { labelSelector: 'a=b,' }), Invalid);
    });
  });

  describe('validation', () => {
    it('refuses objects that break the kind schema with Invalid, naming the field', async () => {
      const { store, namespace } = ctx();
      const locs = async (p: Promise<unknown>) => (await rejection(p, Invalid)).detail.map((i) => i.loc);

      const wrongType = sandbox(uniqueName('sb'), { namespace, spec: { paused: 'yes' as unknown as boolean } });
      expect(await locs(store.create(SandboxKind, wrongType))).toContainEqual(['spec', 'paused']);

      const extra = sandbox(uniqueName('sb'), { namespace, spec: { bogus: 1 } as never });
      expect(await locs(store.create(SandboxKind, extra))).toContainEqual(['spec', 'bogus']);

      const badName = sandbox('Not_A_DNS_Name', { namespace });
      expect(await locs(store.create(SandboxKind, badName))).toContainEqual(['metadata', 'name']);

      const badRepo = conversation(uniqueName('conv'), { namespace, spec: { selectedRepository: 'no slash' } });
      expect(await locs(store.create(ConversationKind, badRepo))).toContainEqual(['spec', 'selectedRepository']);

      const created = await store.create(SandboxKind, sandbox(uniqueName('sb'), { namespace }));
      const badUpdate: Sandbox = { ...created, spec: { ...created.spec, resources: { cpu: 2 as unknown as string } } };
      expect(await locs(store.update(SandboxKind, badUpdate))).toContainEqual(['spec', 'resources', 'cpu']);
      const badStatus: Sandbox = { ...created, status: { phase: 'SLEEPING' as never } };
      expect(await locs(store.updateStatus(SandboxKind, badStatus))).toContainEqual(['status', 'phase']);
      expect(await store.get(SandboxKind, namespace, created.metadata.name)).toEqual(created);
    });
  });

  describe('Secrets (no status subresource)', () => {
    it('round-trips data, defaults the type, and updates the whole object', async () => {
      const { store, namespace } = ctx();
      const name = uniqueName('sec');
      const created = await store.create(SecretKind, secret(name, { namespace, labels: { a: 'b' }, data: { token: b64('s3cret') } }));
      expect(created).toMatchObject({ apiVersion: 'v1', kind: 'Secret', type: 'Opaque', data: { token: b64('s3cret') } });
      expect(await store.get(SecretKind, namespace, name)).toEqual(created);

      const updated = await store.update(SecretKind, { ...created, data: { token: b64('rotated'), extra: b64('x') } });
      expect(updated.data).toEqual({ token: b64('rotated'), extra: b64('x') });
      expect(updated.metadata.resourceVersion).not.toBe(created.metadata.resourceVersion);
      expect((await store.get(SecretKind, namespace, name))?.data).toEqual(updated.data);
      await rejection(store.update(SecretKind, { ...created, data: {} }), Conflict);
      await rejection(store.updateStatus(SecretKind, updated), BadRequest);
    });

    it('refuses a bad Secret name or data key with Invalid and a non-base64 value with BadRequest', async () => {
      const { store, namespace } = ctx();
      const badName = await rejection(store.create(SecretKind, secret('Bad_Name', { namespace, data: {} })), Invalid);
      expect(badName.detail.map((i) => i.loc)).toContainEqual(['metadata', 'name']);
      const badKey = await rejection(store.create(SecretKind, secret(uniqueName('sec'), { namespace, data: { 'no spaces': b64('x') } })), Invalid);
      expect(badKey.detail.map((i) => i.loc)).toContainEqual(['data', 'no spaces']);
      await rejection(store.create(SecretKind, secret(uniqueName('sec'), { namespace, data: { token: 'not base64!' } })), BadRequest);
    });

    it('lists Secrets by label like any other kind', async () => {
      const { store, namespace } = ctx();
      const run = uniq();
      await store.create(SecretKind, secret(`k-${run}`, { namespace, labels: { run }, data: { v: b64('1') } }));
      const listed = await store.list(SecretKind, namespace, { labelSelector: `run=${run}` });
      expect(listed.items.map((s) => s.data)).toEqual([{ v: b64('1') }]);
    });
  });
}
