// Update predicates (controller-runtime's predicate.Funcs) for ControllerSpec.updatePredicate.
import { isDeepStrictEqual } from 'node:util';
import type { KubeObject } from '../api/meta.ts';

/**
 * Whether a change touched more than the status: spec, labels, annotations, finalizers, deletion
 * or owners. resourceVersion moves with every write and managedFields with every write on a
 * cluster, so neither counts.
 */
export function changedBeyondStatus(old: KubeObject, obj: KubeObject): boolean {
  const { resourceVersion: _a, managedFields: _b, ...oldMeta } = old.metadata as KubeObject['metadata'] & { managedFields?: unknown };
  const { resourceVersion: _c, managedFields: _d, ...newMeta } = obj.metadata as KubeObject['metadata'] & { managedFields?: unknown };
  return !isDeepStrictEqual(oldMeta, newMeta) || !isDeepStrictEqual((old as { spec?: unknown }).spec, (obj as { spec?: unknown }).spec);
}
