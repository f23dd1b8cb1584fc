// The one interface the facade and the controller use to read and write resources.
// SqliteStore (embedded) and KubeStore (cluster) implement it with the same semantics and the
// same errors; store/conformance.ts is the suite both must pass unchanged.
import type { KubeObject, ResourceKind } from '../api/meta.ts';

export interface ListOptions {
  /** Kubernetes label selector syntax: `a=b,c!=d,e in (x,y),f notin (z),g,!h`. */
  labelSelector?: string;
  /**
   * The caller only reads the items and never modifies them: the store may answer with frozen
   * objects it shares between calls (SqliteStore keeps such a list until its next write). Without
   * it every list returns objects of the caller's own.
   */
  shared?: boolean;
}

export interface ListResult<T> {
  /** Sorted by the string `namespace/name`, as the API server lists (etcd key order). */
  items: T[];
  /** The store's resourceVersion at the time of the list; a watch may start from it. */
  resourceVersion: string;
}

export type WatchEventType = 'ADDED' | 'MODIFIED' | 'DELETED';

/**
 * With a label selector, an object that starts matching arrives as ADDED and one that stops
 * matching as DELETED (carrying its last matching content at the new resourceVersion), as the
 * API server's watch filter does. A DELETED object carries the resourceVersion of the delete.
 */
export interface WatchEvent<T> {
  type: WatchEventType;
  object: T;
}

export interface WatchOptions extends ListOptions {
  /**
   * Deliver changes after this resourceVersion (from a list, or from any event's object). Too
   * old: the iterator throws `Gone`; list again and watch from the list's resourceVersion.
   */
  resourceVersion?: string;
  /** Aborting ends the iteration cleanly (`done`), also while it waits for a change. */
  signal?: AbortSignal;
}

/**
 * Errors (from src/api/errors.ts): NotFound for a missing object; Conflict for an existing name on
 * create or a stale resourceVersion on update/updateStatus/delete-with-precondition; Invalid for an
 * object that fails its kind's schema or a malformed label selector; Gone for a watch from a
 * compacted resourceVersion. resourceVersions are opaque strings: compare them for equality only.
 * Every write fills the kind schema's defaults, as the API server does for a CRD.
 */
export interface ResourceStore {
  get<T extends KubeObject>(kind: ResourceKind<T>, namespace: string, name: string): Promise<T | undefined>;
  list<T extends KubeObject>(kind: ResourceKind<T>, namespace: string | undefined, opts?: ListOptions): Promise<ListResult<T>>;
  /**
   * Sets uid, resourceVersion, generation 1, creationTimestamp (whole seconds, UTC); client
   * values for those are ignored. Status is dropped for kinds with a status subresource.
   */
  create<T extends KubeObject>(kind: ResourceKind<T>, obj: T): Promise<T>;
  /**
   * Replaces metadata (labels, annotations, finalizers, ownerReferences) and spec. Requires
   * `metadata.resourceVersion` to match: a missing one is a Conflict too (the API server refuses
   * unconditional updates of custom resources). A `metadata.uid` that names another incarnation
   * is a Conflict. uid, creationTimestamp, generation and deletionTimestamp keep their stored
   * values. Bumps generation only when spec changed. Ignores status. An update that changes
   * nothing writes nothing (same resourceVersion, no watch event). While a deletionTimestamp is
   * set no finalizer may be added (Invalid); removing the last one deletes the object.
   */
  update<T extends KubeObject>(kind: ResourceKind<T>, obj: T): Promise<T>;
  /**
   * Replaces status only (an absent status clears it); spec and metadata in the body are ignored.
   * Requires `metadata.resourceVersion` to match. Never bumps generation. BadRequest for a kind
   * without a status subresource.
   */
  updateStatus<T extends KubeObject>(kind: ResourceKind<T>, obj: T): Promise<T>;
  /**
   * Deletes now when there are no finalizers; otherwise sets deletionTimestamp (once, bumping
   * generation; a repeated delete changes nothing) and leaves the object until its finalizers are
   * removed. NotFound when absent; Conflict when `resourceVersion` is given and stale.
   */
  delete<T extends KubeObject>(kind: ResourceKind<T>, namespace: string, name: string, opts?: { resourceVersion?: string }): Promise<void>;
  /** Changes after `resourceVersion` (or after now), in order, until the signal aborts. */
  watch<T extends KubeObject>(kind: ResourceKind<T>, namespace: string | undefined, opts?: WatchOptions): AsyncIterable<WatchEvent<T>>;
  close?(): Promise<void> | void;
}
