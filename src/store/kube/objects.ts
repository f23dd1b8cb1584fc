// Where a ResourceKind lives on the API server, and the small object rewrites KubeStore does on
// the way in and out (server-owned fields, typed client models back to plain JSON).
import type { KubeObject, ResourceKind } from '../../api/meta.ts';
import { NotImplemented } from '../../api/errors.ts';

export interface KindTarget {
  /** '' for the core group (v1 Secrets). */
  group: string;
  version: string;
  plural: string;
}

export function targetOf(kind: ResourceKind): KindTarget {
  const slash = kind.apiVersion.indexOf('/');
  if (slash < 0) {
    // Core kinds other than Secret have no use in agentyard; refusing beats guessing a client.
    if (kind.kind !== 'Secret') throw new NotImplemented(`KubeStore does not handle core kind ${kind.kind}`);
    return { group: '', version: kind.apiVersion, plural: kind.plural };
  }
  return { group: kind.apiVersion.slice(0, slash), version: kind.apiVersion.slice(slash + 1), plural: kind.plural };
}

/** Collection path for watches: all namespaces when `namespace` is undefined. */
export function collectionPath(t: KindTarget, namespace: string | undefined): string {
  const base = t.group === '' ? `/api/${t.version}` : `/apis/${t.group}/${t.version}`;
  return namespace === undefined
    ? `${base}/${t.plural}`
    : `${base}/namespaces/${encodeURIComponent(namespace)}/${t.plural}`;
}

const SERVER_OWNED_META = [
  'resourceVersion',
  'uid',
  'creationTimestamp',
  'deletionTimestamp',
  'deletionGracePeriodSeconds',
  'generation',
  'managedFields',
] as const;

/** Fields the server assigns; sending some of them on create is an error there, all are meaningless. */
export function forCreate<T extends KubeObject>(kind: ResourceKind<T>, obj: T): T {
  const metadata: Record<string, unknown> = { ...obj.metadata };
  for (const key of SERVER_OWNED_META) delete metadata[key];
  const out = { ...obj, apiVersion: kind.apiVersion, kind: kind.kind, metadata } as T;
  if (kind.hasStatus) delete out.status;
  return out;
}

/**
 * What callers see: apiVersion/kind always set (lists and core models omit them) and no
 * managedFields, which are server bookkeeping that SqliteStore does not have — but for a kind that
 * keeps them for an audit (ResourceKind.keepManagedFields). forUpdate() leaves them out of a PUT,
 * which keeps the server's copy.
 */
export function fromServer<T extends KubeObject>(kind: ResourceKind<T>, raw: unknown): T {
  // Custom resources come back as parsed JSON already (client-node deserializes them as `any`):
  // taken as they are, not copied (a list of 10,000 Sandboxes was otherwise built twice).
  const obj = (isCoreKind(kind) ? plain(raw) : raw) as T & { metadata: { managedFields?: unknown } };
  obj.apiVersion = kind.apiVersion;
  obj.kind = kind.kind;
  if (obj.metadata && !kind.keepManagedFields) delete obj.metadata.managedFields;
  return obj;
}

/** The body of a PUT: apiVersion/kind set, and no managedFields (a copy sent back would overwrite the server's). */
export function forUpdate<T extends KubeObject>(kind: ResourceKind<T>, obj: T): T {
  const metadata: Record<string, unknown> = { ...obj.metadata };
  delete metadata['managedFields'];
  return { ...obj, apiVersion: kind.apiVersion, kind: kind.kind, metadata } as T;
}

function isCoreKind(kind: ResourceKind): boolean {
  return !kind.apiVersion.includes('/');
}

/**
 * Core API models are class instances with Date fields; CR responses are plain JSON. Render both
 * the way the wire does (metav1.Time has second precision, RFC 3339 with Z) so a Secret read by
 * get() equals the same Secret delivered by a watch.
 */
function plain(value: unknown): unknown {
  if (value instanceof Date) return value.toISOString().replace(/\.\d{3}Z$/, 'Z');
  if (Array.isArray(value)) return value.map(plain);
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) if (v !== undefined) out[k] = plain(v);
    return out;
  }
  return value;
}
