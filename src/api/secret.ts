// A core/v1 Secret. In cluster mode this is a real Secret; SqliteStore keeps the same shape
// (encrypted at rest) so that code reading per-conversation secrets has one path.
import { createHash } from 'node:crypto';
import type { ObjectMeta, ResourceKind } from './meta.ts';

export interface Secret {
  apiVersion: 'v1';
  kind: 'Secret';
  metadata: ObjectMeta;
  type?: string;
  /** base64-encoded values, as in Kubernetes. */
  data?: Record<string, string>;
}

export const SecretKind: ResourceKind<Secret> = {
  apiVersion: 'v1',
  kind: 'Secret',
  plural: 'secrets',
  hasStatus: false,
};

/**
 * The Secret holding a user's stored secrets (Settings > Secrets), one per user, owned by label.
 * Named by a digest of the user id so any id gives a valid resource name.
 */
export function userSecretsName(userId: string): string {
  return `user-${createHash('sha256').update(userId).digest('hex').slice(0, 40)}-secrets`;
}
