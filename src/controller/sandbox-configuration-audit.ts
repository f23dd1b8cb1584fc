// The Sandbox Configuration's audit trail, complete also for writes made around the API. The API
// records its own changes in the write that makes them (facade/sandbox-configuration.ts); a
// `kubectl edit`, `kubectl apply` or any other client writes the resource directly and records
// nothing. The trail therefore keeps an invariant: the newest entry of each field ends at the
// field's current value (`to`; null: unset). A field whose value differs from that was changed
// outside the API; the controller (and the API, before it writes its own change on top) appends an
// entry for it, marked as such, naming the writer by the field manager Kubernetes recorded for the
// field (metadata.managedFields: `kubectl-edit`, `kubectl-client-side-apply`, …). The user is not
// known there, and the entry says so.
import { Conflict } from '../api/errors.ts';
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
