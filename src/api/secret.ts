// A core/v1 Secret. In cluster mode this is a real Secret; SqliteStore keeps the same shape
// (encrypted at rest) so that code reading per-conversation secrets has one path.
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
