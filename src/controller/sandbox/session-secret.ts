// The sandbox's keys live in a Secret owned by the Sandbox, never in its status, so that reading a
// Sandbox never reveals them and garbage collection removes them with the Sandbox: the session key
// (`key`: agent server API and event sink) and the model token (`model-token`: the model gateway).
import { randomBytes } from 'node:crypto';
import { Conflict, NotFound } from '../../api/errors.ts';
import { MODEL_TOKEN_KEY, newModelToken } from '../../api/model-gateway.ts';
import type { Sandbox } from '../../api/sandbox.ts';
import { SecretKind, type Secret } from '../../api/secret.ts';
import type { ResourceStore } from '../../store/types.ts';

export function sessionSecretName(sandboxName: string): string {
  return `${sandboxName}-session`;
}

export const decode = (b64: string | undefined) => (b64 === undefined ? undefined : Buffer.from(b64, 'base64').toString('utf8'));
export const encode = (text: string) => Buffer.from(text).toString('base64');

export async function readSessionKey(store: ResourceStore, namespace: string, sandboxName: string): Promise<string | undefined> {
  const secret = await store.get(SecretKind, namespace, sessionSecretName(sandboxName));
  return decode(secret?.data?.key);
}

export interface SandboxKeys {
  sessionKey: string;
  modelToken: string;
}

/**
 * Returns the sandbox's keys, creating the Secret on first use and adding the model token to a
 * Secret made before there was one (the Sandbox keeps its session key across that upgrade).
 */
export async function ensureSandboxKeys(store: ResourceStore, sb: Sandbox): Promise<SandboxKeys> {
  return (await ensureKeys(store, sb, true)) as SandboxKeys;
}

/**
 * An unclaimed warm-pool member's key: a session key only. Its model token is issued when a user
 * claims it (warm-pool/hand-over.ts), so a member nobody owns cannot spend anyone's model budget.
 */
export async function ensurePoolMemberKey(store: ResourceStore, sb: Sandbox): Promise<{ sessionKey: string; modelToken?: string }> {
  return ensureKeys(store, sb, false);
}

async function ensureKeys(store: ResourceStore, sb: Sandbox, withToken: boolean): Promise<{ sessionKey: string; modelToken?: string }> {
  const namespace = sb.metadata.namespace ?? 'default';
  const name = sb.metadata.name;
  for (let attempt = 0; ; attempt++) {
    let existing = await store.get(SecretKind, namespace, sessionSecretName(name));
    if (existing && sb.metadata.uid && !existing.metadata.ownerReferences?.some((r) => r.uid === sb.metadata.uid)) {
      // A deleted namesake's, not yet collected: its keys must not carry over to this sandbox.
      await store.delete(SecretKind, namespace, sessionSecretName(name)).catch((err: unknown) => {
        if (!(err instanceof NotFound)) throw err;
      });
      existing = undefined;
    }
    const sessionKey = decode(existing?.data?.key);
    const modelToken = decode(existing?.data?.[MODEL_TOKEN_KEY]);
    if (sessionKey && (modelToken || !withToken)) return { sessionKey, ...(modelToken ? { modelToken } : {}) };
    try {
      if (existing && sessionKey) {
        const token = newModelToken(name);
        await store.update(SecretKind, { ...existing, data: { ...existing.data, [MODEL_TOKEN_KEY]: encode(token) } });
        return { sessionKey, modelToken: token };
      }
      const keys = { sessionKey: randomBytes(32).toString('base64url'), ...(withToken ? { modelToken: newModelToken(name) } : {}) };
      const secret: Secret = {
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: {
          name: sessionSecretName(name),
          namespace,
          labels: { 'agentyard.dev/sandbox': name },
          ownerReferences: [{ apiVersion: sb.apiVersion, kind: sb.kind, name, uid: sb.metadata.uid ?? '', controller: true, blockOwnerDeletion: true }],
        },
        type: 'Opaque',
        data: { key: encode(keys.sessionKey), ...(keys.modelToken ? { [MODEL_TOKEN_KEY]: encode(keys.modelToken) } : {}) },
      };
      await store.create(SecretKind, secret);
      return keys;
    } catch (err) {
      // Another pass created or changed it first: read theirs.
      if (!(err instanceof Conflict) || attempt >= 3) throw err;
    }
  }
}
