// The sandbox session key lives in a Secret owned by the Sandbox, never in its status, so that
// reading a Sandbox never reveals it and garbage collection removes it with the Sandbox.
import { randomBytes } from 'node:crypto';
import { Conflict } from '../../api/errors.ts';
import type { Sandbox } from '../../api/sandbox.ts';
import { SecretKind, type Secret } from '../../api/secret.ts';
import type { ResourceStore } from '../../store/types.ts';

export function sessionSecretName(sandboxName: string): string {
  return `${sandboxName}-session`;
}

export async function readSessionKey(store: ResourceStore, namespace: string, sandboxName: string): Promise<string | undefined> {
  const secret = await store.get(SecretKind, namespace, sessionSecretName(sandboxName));
  const encoded = secret?.data?.key;
  return encoded === undefined ? undefined : Buffer.from(encoded, 'base64').toString('utf8');
}

/** Returns the sandbox's session key, creating the Secret on first use. */
export async function ensureSessionKey(store: ResourceStore, sb: Sandbox): Promise<string> {
  const namespace = sb.metadata.namespace ?? 'default';
  const existing = await readSessionKey(store, namespace, sb.metadata.name);
  if (existing) return existing;
  const key = randomBytes(32).toString('base64url');
  const secret: Secret = {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: {
      name: sessionSecretName(sb.metadata.name),
      namespace,
      labels: { 'agentyard.dev/sandbox': sb.metadata.name },
      ownerReferences: [{ apiVersion: sb.apiVersion, kind: sb.kind, name: sb.metadata.name, uid: sb.metadata.uid ?? '', controller: true, blockOwnerDeletion: true }],
    },
    type: 'Opaque',
    data: { key: Buffer.from(key).toString('base64') },
  };
  try {
    await store.create(SecretKind, secret);
    return key;
  } catch (err) {
    // Another pass created it first: use theirs.
    if (err instanceof Conflict) return (await readSessionKey(store, namespace, sb.metadata.name)) ?? Promise.reject(err);
    throw err;
  }
}
