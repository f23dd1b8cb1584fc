import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ConversationKind, type Conversation } from '../../api/conversation.ts';
import { API_VERSION, type KubeObject, type OwnerReference } from '../../api/meta.ts';
import { SandboxKind, type Sandbox } from '../../api/sandbox.ts';
import { SecretKind } from '../../api/secret.ts';
import { b64, collect, conversation, sandbox, secret, summary, watching } from '../conformance/fixtures.ts';
import { SqliteStore } from './sqlite-store.ts';

function ownedBy(owner: KubeObject): OwnerReference {
  return { apiVersion: owner.apiVersion, kind: owner.kind, name: owner.metadata.name, uid: owner.metadata.uid!, controller: true };
}

describe('SqliteStore garbage collection of ownerReferences', () => {
  let store: SqliteStore;
  const ns = 'gc';
  beforeEach(() => {
    store = new SqliteStore(':memory:');
  });
  afterEach(() => store.close());

  async function child(name: string, owners: KubeObject[], finalizers?: string[]): Promise<Conversation> {
    const c = conversation(name, { namespace: ns, ...(finalizers ? { finalizers } : {}) });
    c.metadata.ownerReferences = owners.map(ownedBy);
    return store.create(ConversationKind, c);
  }

  it('deletes dependents, and theirs, in the same write as the owner', async () => {
    const start = store.resourceVersion;
    const owner = await store.create(SandboxKind, sandbox('owner', { namespace: ns }));
    const conv = await child('conv', [owner]);
    const sec = secret('conv-secrets', { namespace: ns, data: { k: b64('v') } });
    sec.metadata.ownerReferences = [ownedBy(conv)];
    await store.create(SecretKind, sec);
    const bystander = await store.create(ConversationKind, conversation('bystander', { namespace: ns }));

    await store.delete(SandboxKind, ns, 'owner');
    expect(await store.get(ConversationKind, ns, 'conv')).toBeUndefined();
    expect(await store.get(SecretKind, ns, 'conv-secrets')).toBeUndefined();
    expect(await store.get(ConversationKind, ns, 'bystander')).toEqual(bystander);

    const w = watching<Conversation>(store, ConversationKind, ns, { resourceVersion: start });
    try {
      expect(summary(await collect(w.it, 3))).toEqual(['ADDED conv', 'ADDED bystander', 'DELETED conv']);
    } finally {
      w.stop();
    }
  });

  it('marks a dependent with finalizers instead of removing it', async () => {
    const owner = await store.create(SandboxKind, sandbox('owner', { namespace: ns }));
    await child('held', [owner], ['example.com/hold']);
    await store.delete(SandboxKind, ns, 'owner');
    const held = await store.get(ConversationKind, ns, 'held');
    expect(held?.metadata.deletionTimestamp).toBeDefined();
    await store.update(ConversationKind, { ...held!, metadata: { ...held!.metadata, finalizers: [] } });
    expect(await store.get(ConversationKind, ns, 'held')).toBeUndefined();
  });

  it('keeps a dependent that still has a live owner, dropping only the dangling reference', async () => {
    const a = await store.create(SandboxKind, sandbox('a', { namespace: ns }));
    const b = await store.create(SandboxKind, sandbox('b', { namespace: ns }));
    await child('shared', [a, b]);
    await store.delete(SandboxKind, ns, 'a');
    const shared = await store.get(ConversationKind, ns, 'shared');
    expect(shared?.metadata.ownerReferences).toEqual([ownedBy(b)]);
    await store.delete(SandboxKind, ns, 'b');
    expect(await store.get(ConversationKind, ns, 'shared')).toBeUndefined();
  });

  it('collects when the owner goes through its finalizers, not when it is only marked', async () => {
    const owner = await store.create(SandboxKind, sandbox('owner', { namespace: ns, finalizers: ['example.com/f'] }));
    await child('conv', [owner]);
    await store.delete(SandboxKind, ns, 'owner');
    expect(await store.get(ConversationKind, ns, 'conv')).toBeDefined();
    const marked = (await store.get(SandboxKind, ns, 'owner'))!;
    await store.update(SandboxKind, { ...marked, metadata: { ...marked.metadata, finalizers: [] } });
    expect(await store.get(ConversationKind, ns, 'conv')).toBeUndefined();
  });

  it('ignores references to an earlier incarnation of the owner name', async () => {
    const first = await store.create(SandboxKind, sandbox('owner', { namespace: ns }));
    await store.delete(SandboxKind, ns, 'owner');
    const second = await store.create<Sandbox>(SandboxKind, { apiVersion: API_VERSION, kind: 'Sandbox', metadata: { name: 'owner', namespace: ns }, spec: {} });
    const orphan = await child('orphan', [first]);
    await store.delete(SandboxKind, ns, second.metadata.name);
    expect(await store.get(ConversationKind, ns, 'orphan')).toEqual(orphan);
  });
});
