// Background cascading deletion, as Kubernetes' garbage collector does it for ownerReferences:
// when an owner is removed, each dependent whose other owners are all gone is deleted (marked,
// if it has finalizers); a dependent with a surviving owner only loses the dangling reference.
// In SQLite this runs in the owner's delete transaction instead of some seconds later.
import type { KubeObject, OwnerReference } from '../../api/meta.ts';
import { hasFinalizers, markDeleting, toJson } from './semantics.ts';

export interface GarbageOps {
  /** Objects of any kind in `namespace` with an ownerReference to `uid`. */
  dependents(namespace: string, uid: string): KubeObject[];
  /** Whether the object an ownerReference names (kind, name and uid) still exists. */
  exists(namespace: string, ref: OwnerReference): boolean;
  /** Removes an object for good (and collects its own dependents in turn). */
  remove(obj: KubeObject): void;
  modify(next: KubeObject, prev: KubeObject): void;
}

export function collectDependents(owner: KubeObject, now: string, ops: GarbageOps): void {
  const uid = owner.metadata.uid;
  const namespace = owner.metadata.namespace;
  if (!uid || !namespace) return;
  for (const dep of ops.dependents(namespace, uid)) {
    const others = (dep.metadata.ownerReferences ?? []).filter((r) => r.uid !== uid);
    if (others.some((r) => ops.exists(namespace, r))) {
      const next = toJson(dep);
      next.metadata.ownerReferences = others;
      ops.modify(next, dep);
    } else if (!hasFinalizers(dep)) {
      ops.remove(dep);
    } else {
      const marked = markDeleting(dep, now);
      if (marked) ops.modify(marked, dep);
    }
  }
}
