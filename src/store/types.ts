// The one interface the facade and the controller use to read and write resources.
// SqliteStore (embedded) and KubeStore (cluster) implement it with the same semantics and the
// same errors; store/conformance.ts is the suite both must pass unchanged.
import type { KubeObject, ResourceKind } from '../api/meta.ts';

export interface ListOptions {
  /** Kubernetes label selector syntax: `a=b,c!=d,e in (x,y),f notin (z),g,!h`. */
  labelSelector?: string;
}

export interface ListResult<T> {
  items: T[];
  /** The store's resourceVersion at the time of the list; a watch may start from it. */
  resourceVersion: string;
}

export type WatchEventType = 'ADDED' | 'MODIFIED' | 'DELETED';

export interface WatchEvent<T> {
  type: WatchEventType;
  object: T;
}

export interface WatchOptions extends ListOptions {
  /** Deliver changes after this resourceVersion. Too old: the iterator throws `Gone`. */
  resourceVersion?: string;
  signal?: AbortSignal;
}

/**
 * Errors (from src/api/errors.ts): NotFound for a missing object; Conflict for an existing name on
 * create or a stale resourceVersion on update/updateStatus/delete-with-precondition; Invalid for an
 * object that fails its kind's schema; Gone for a watch from a compacted resourceVersion.
 */
export interface ResourceStore {
  get<T extends KubeObject>(kind: ResourceKind<T>, namespace: string, name: string): Promise<T | undefined>;
  list<T extends KubeObject>(kind: ResourceKind<T>, namespace: string | undefined, opts?: ListOptions): Promise<ListResult<T>>;
  /** Sets uid, resourceVersion, generation 1, creationTimestamp. Status is dropped for kinds with a status subresource. */
  create<T extends KubeObject>(kind: ResourceKind<T>, obj: T): Promise<T>;
  /**
   * Replaces metadata (labels, annotations, finalizers, ownerReferences) and spec. Requires
   * `metadata.resourceVersion` to match. Bumps generation only when spec changed. Ignores status.
   * Removing the last finalizer of an object with a deletionTimestamp deletes it.
   */
  update<T extends KubeObject>(kind: ResourceKind<T>, obj: T): Promise<T>;
  /** Replaces status only. Requires `metadata.resourceVersion` to match. Never bumps generation. */
  updateStatus<T extends KubeObject>(kind: ResourceKind<T>, obj: T): Promise<T>;
  /**
   * Deletes now when there are no finalizers; otherwise sets deletionTimestamp (once) and leaves
   * the object until its finalizers are removed. NotFound when absent.
   */
  delete<T extends KubeObject>(kind: ResourceKind<T>, namespace: string, name: string, opts?: { resourceVersion?: string }): Promise<void>;
  /** Changes after `resourceVersion` (or after now), in order, until the signal aborts. */
  watch<T extends KubeObject>(kind: ResourceKind<T>, namespace: string | undefined, opts?: WatchOptions): AsyncIterable<WatchEvent<T>>;
  close?(): Promise<void> | void;
}
