// The Sandbox Configuration's audit trail, complete also for writes made around the API. The API
// records its own changes in the write that makes them (facade/sandbox-configuration.ts); a
// `kubectl edit`, `kubectl apply` or any other client writes the resource directly and records
// nothing. The trail therefore keeps an invariant: the newest entry of each field ends at the
// field's current value (`to`; null: unset). A field whose value differs from that was changed
// outside the API; the controller (and the API, before it writes its own change on top) appends an
// entry for it, marked as such, naming the writer by the field manager Kubernetes recorded for the
// field (metadata.managedFields: `kubectl-edit`, `kubectl-client-side-apply`, …). The user is not
// known there, and the entry says so.
//
// A deletion (`kubectl delete`) takes the trail with the object. The controller sees the deletion
// with the object's last state (the watch's DELETED event) and writes a new `default` in its place:
// no values (the defaults apply, as the deletion meant) and the trail, with an entry for each field
// the deletion sent back to its default. One it does not see (no controller running at the time)
// leaves no entry: a finalizer would catch that too, but would also hold the namespace's deletion
// after an uninstall removed the controller.
import { Conflict } from '../api/errors.ts';
import { API_VERSION } from '../api/meta.ts';
import type { ManagedFieldsEntry } from '../api/meta.ts';
import {
  MAX_CHANGES,
  SANDBOX_CONFIGURATION_NAME,
  SandboxConfigurationKind,
  type ConfigChange,
  type ConfigField,
  type SandboxConfiguration,
} from '../api/sandbox-configuration.ts';
import type { ResourceStore } from '../store/types.ts';
import type { Logger } from '../util/log.ts';

export const CONFIG_FIELDS: ConfigField[] = ['idleTimeSeconds', 'deletionTimeSeconds', 'sandboxCapacity'];

/** The writer Kubernetes recorded for spec.<field> (the newest, if several), and when; none in embedded mode. */
export function fieldWriter(obj: SandboxConfiguration, field: ConfigField): { manager: string; time?: string } | undefined {
  const entries = ((obj.metadata as { managedFields?: ManagedFieldsEntry[] }).managedFields ?? []).filter((e) => {
    const spec = e.fieldsV1?.['f:spec'] as Record<string, unknown> | undefined;
    return e.manager && !e.subresource && spec !== undefined && `f:${field}` in spec;
  });
  entries.sort((a, b) => (b.time ?? '').localeCompare(a.time ?? ''));
  const e = entries[0];
  return e ? { manager: e.manager!, ...(e.time ? { time: e.time } : {}) } : undefined;
}

/**
 * The changes of `obj`'s fields its trail does not account for, as entries to append: from the
 * value the trail last recorded to the current one. `now` stands in for the time of the change
 * where Kubernetes recorded none.
 */
export function unrecordedChanges(obj: SandboxConfiguration, now: string): ConfigChange[] {
  const trail = obj.spec.changes ?? [];
  const out: ConfigChange[] = [];
  for (const field of CONFIG_FIELDS) {
    const recorded = trail.findLast((c) => c.field === field)?.to ?? null;
    const current = obj.spec[field] ?? null;
    if (recorded === current) continue;
    const writer = fieldWriter(obj, field);
    out.push({ time: writer?.time ?? now, field, from: recorded, to: current, outsideApi: true, ...(writer ? { fieldManager: writer.manager } : {}) });
  }
  return out;
}

/**
 * The trail with `added` appended, cut to MAX_CHANGES: the oldest entries go first, but never the
 * newest of a field, which the invariant above reads.
 */
export function appendChanges(trail: ConfigChange[], added: ConfigChange[]): ConfigChange[] {
  const all = [...trail, ...added];
  const newest = new Set(CONFIG_FIELDS.map((f) => all.findLastIndex((c) => c.field === f)));
  let excess = all.length - MAX_CHANGES;
  return all.filter((_, i) => {
    if (excess <= 0 || newest.has(i)) return true;
    excess--;
    return false;
  });
}

/** The entries a deletion of `last` makes: each field it held goes back to its default. */
export function deletionChanges(last: SandboxConfiguration, now: string): ConfigChange[] {
  const trail = last.spec.changes ?? [];
  const out: ConfigChange[] = [];
  for (const field of CONFIG_FIELDS) {
    // From what the object held, or what its trail last recorded when that was not caught up yet.
    const from = last.spec[field] ?? trail.findLast((c) => c.field === field)?.to ?? null;
    if (from !== null) out.push({ time: now, field, from, to: null, outsideApi: true, objectDeleted: true });
  }
  return out;
}

/**
 * Keeps the trail of a deleted configuration, `last` as it was when deleted, with its deletion
 * recorded: a new object with no values and that trail. When one was written meanwhile (an admin's
 * change, another controller replica), the old trail and the deletion go before its own entries,
 * once. The entries recorded, for the log; none when there was nothing to keep.
 */
export async function recordDeletion(store: ResourceStore, namespace: string, last: SandboxConfiguration, now: () => string, log?: Logger): Promise<ConfigChange[]> {
  const added = deletionChanges(last, now());
  const kept = appendChanges(last.spec.changes ?? [], added);
  if (kept.length === 0) return [];
  for (let attempt = 0; ; attempt++) {
    const current = await store.get(SandboxConfigurationKind, namespace, SANDBOX_CONFIGURATION_NAME);
    try {
      if (!current) {
        await store.create(SandboxConfigurationKind, { apiVersion: API_VERSION, kind: 'SandboxConfiguration', metadata: { name: SANDBOX_CONFIGURATION_NAME, namespace }, spec: { changes: kept } });
      } else {
        const theirs = current.spec.changes ?? [];
        // Already kept (by another replica): its trail starts with the deleted object's.
        const old = last.spec.changes ?? [];
        if (old.length > 0 && JSON.stringify(theirs.slice(0, old.length)) === JSON.stringify(old)) return [];
        await store.update(SandboxConfigurationKind, { ...current, spec: { ...current.spec, changes: appendChanges(kept, theirs) } });
      }
      log?.info({ changes: added.map((c) => ({ field: c.field, from: c.from })) }, 'sandbox configuration deleted outside the API; its audit trail is kept, with the deletion, in a new object with no values');
      return added;
    } catch (err) {
      if (!(err instanceof Conflict) || attempt >= 5) throw err;
    }
  }
}

/**
 * Records what changed outside the API in the configuration object, if anything (read-modify-write,
 * retried on a concurrent update). The entries recorded, for the log.
 */
export async function recordOutsideChanges(store: ResourceStore, namespace: string, now: () => string, log?: Logger): Promise<ConfigChange[]> {
  for (let attempt = 0; ; attempt++) {
    const obj = await store.get(SandboxConfigurationKind, namespace, SANDBOX_CONFIGURATION_NAME);
    if (!obj || obj.metadata.deletionTimestamp) return [];
    const added = unrecordedChanges(obj, now());
    if (added.length === 0) return [];
    try {
      await store.update(SandboxConfigurationKind, { ...obj, spec: { ...obj.spec, changes: appendChanges(obj.spec.changes ?? [], added) } });
      log?.info({ changes: added.map((c) => ({ field: c.field, from: c.from, to: c.to, fieldManager: c.fieldManager ?? null })) }, 'sandbox configuration changed outside the API; recorded in its audit trail');
      return added;
    } catch (err) {
      if (!(err instanceof Conflict) || attempt >= 5) throw err;
    }
  }
}
