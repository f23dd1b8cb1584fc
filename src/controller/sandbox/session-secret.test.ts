import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { MODEL_TOKEN_KEY, modelTokenSandbox } from '../../api/model-gateway.ts';
import { API_VERSION } from '../../api/meta.ts';
import { SandboxKind, type Sandbox } from '../../api/sandbox.ts';
import { SecretKind } from '../../api/secret.ts';
import { SqliteStore } from '../../store/sqlite/sqlite-store.ts';
import { ensureSandboxKeys, readSessionKey, sessionSecretName } from './session-secret.ts';

describe('sandbox keys', () => {
  let store: SqliteStore;
  const sandbox = (name: string) => store.create(SandboxKind, { apiVersion: API_VERSION, kind: 'Sandbox', metadata: { name, namespace: 'ns' }, spec: { paused: false } } as Sandbox);
  beforeEach(() => {
    store = new SqliteStore(':memory:');
  });
  afterEach(() => store.close());

  it('makes a session key and a model token naming the sandbox once, in a Secret the sandbox owns', async () => {
    const sb = await sandbox('sb.one');
    const keys = await ensureSandboxKeys(store, sb);
    expect(modelTokenSandbox(keys.modelToken)).toBe('sb.one');
    expect(keys.modelToken).not.toContain(keys.sessionKey);
    expect(await ensureSandboxKeys(store, sb)).toEqual(keys);
    expect(await readSessionKey(store, 'ns', 'sb.one')).toBe(keys.sessionKey);
    const secret = (await store.get(SecretKind, 'ns', sessionSecretName('sb.one')))!;
    expect(secret.metadata.ownerReferences).toEqual([expect.objectContaining({ kind: 'Sandbox', uid: sb.metadata.uid })]);
  });

  it('adds a model token to a Secret made before there were any, keeping the session key', async () => {
    const sb = await sandbox('old');
    const keys = await ensureSandboxKeys(store, sb);
    const secret = (await store.get(SecretKind, 'ns', sessionSecretName('old')))!;
    const { [MODEL_TOKEN_KEY]: _dropped, ...data } = secret.data!;
    await store.update(SecretKind, { ...secret, data });
    const again = await ensureSandboxKeys(store, sb);
    expect(again.sessionKey).toBe(keys.sessionKey);
    expect(modelTokenSandbox(again.modelToken)).toBe('old');
    expect(again.modelToken).not.toBe(keys.modelToken);
  });

  it("never hands a deleted namesake's keys to a new sandbox", async () => {
    const first = await sandbox('reused');
    const stale = await ensureSandboxKeys(store, first);
    // A Secret whose owner is gone but that is still there (cluster garbage collection is not immediate).
    const secret = (await store.get(SecretKind, 'ns', sessionSecretName('reused')))!;
    await store.update(SecretKind, { ...secret, metadata: { ...secret.metadata, ownerReferences: [{ ...secret.metadata.ownerReferences![0]!, uid: 'uid-of-a-deleted-sandbox' }] } });
    const fresh = await ensureSandboxKeys(store, first);
    expect(fresh.sessionKey).not.toBe(stale.sessionKey);
    expect(fresh.modelToken).not.toBe(stale.modelToken);
  });
});
