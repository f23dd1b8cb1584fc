// The admin console's Sandbox Configuration (spec part 8): read and change the SandboxConfiguration
// object `default`. A change and its audit entries are one write (retried on a concurrent update);
// the controller watches the object and takes the new values up at once. Fields not set fall back
// to the installation's environment, which is also what the facade's capacity check defaults to.
import { Conflict } from '../api/errors.ts';
import { API_VERSION } from '../api/meta.ts';
import {
  SANDBOX_CONFIGURATION_NAME,
  SandboxConfigurationKind,
  type ConfigChange,
  type ConfigField,
  type SandboxConfiguration,
  type SandboxConfigurationSpec,
} from '../api/sandbox-configuration.ts';
import type { SandboxConfigurationInfo, SandboxConfigurationUpdate } from '../api/app/admin.ts';
import { DEFAULT_LIFECYCLE, type LifecycleSettings } from '../controller/lifecycle.ts';
import { effectiveSettings } from '../controller/sandbox-configuration.ts';
import { appendChanges, unrecordedChanges } from '../controller/sandbox-configuration-audit.ts';
import type { AppUser } from './db/types.ts';
import type { FacadeDeps } from './deps.ts';

/** API field ↔ resource field. */
const FIELDS: [keyof SandboxConfigurationUpdate, ConfigField][] = [
  ['idle_time_seconds', 'idleTimeSeconds'],
  ['deletion_time_seconds', 'deletionTimeSeconds'],
  ['sandbox_capacity', 'sandboxCapacity'],
];
const API_FIELD = Object.fromEntries(FIELDS.map(([api, res]) => [res, api])) as Record<ConfigField, keyof SandboxConfigurationUpdate>;

/** The environment's values: what applies to a field the configuration leaves unset. */
export function lifecycleDefaults(d: FacadeDeps): LifecycleSettings {
  return {
    idleTimeMs: d.settings.idleTimeMs ?? DEFAULT_LIFECYCLE.idleTimeMs,
    deletionTimeMs: d.settings.deletionTimeMs ?? DEFAULT_LIFECYCLE.deletionTimeMs,
    capacity: d.settings.capacity,
  };
}

async function read(d: FacadeDeps): Promise<SandboxConfiguration | undefined> {
  return d.store.get(SandboxConfigurationKind, d.namespace, SANDBOX_CONFIGURATION_NAME);
}

/** The sandbox capacity in force (configuration, else environment). */
export async function currentCapacity(d: FacadeDeps): Promise<number> {
  return (await read(d))?.spec.sandboxCapacity ?? d.settings.capacity;
}

function info(d: FacadeDeps, spec: SandboxConfigurationSpec | undefined): SandboxConfigurationInfo {
  const defaults = lifecycleDefaults(d);
  const now = effectiveSettings(defaults, spec);
  const values = (s: LifecycleSettings) => ({ idle_time_seconds: Math.round(s.idleTimeMs / 1000), deletion_time_seconds: Math.round(s.deletionTimeMs / 1000), sandbox_capacity: s.capacity });
  return {
    ...values(now),
    defaults: values(defaults),
    overridden: FIELDS.filter(([, res]) => spec?.[res] !== undefined).map(([api]) => api),
    changes: [...(spec?.changes ?? [])].reverse().map((c) => ({
      time: c.time,
      user_id: c.userId ?? null,
      user_name: c.userName ?? null,
      outside_api: c.outsideApi === true,
      field_manager: c.fieldManager ?? null,
      object_deleted: c.objectDeleted === true,
      field: API_FIELD[c.field],
      from: c.from,
      to: c.to,
    })),
  };
}

export async function getSandboxConfiguration(d: FacadeDeps): Promise<SandboxConfigurationInfo> {
  return info(d, (await read(d))?.spec);
}

/** Applies the fields the request names (null: back to the default), recording each real change. */
export async function updateSandboxConfiguration(d: FacadeDeps, user: AppUser, req: SandboxConfigurationUpdate): Promise<SandboxConfigurationInfo> {
  for (let attempt = 0; ; attempt++) {
    const current = await read(d);
    const spec: SandboxConfigurationSpec = { ...(current?.spec ?? {}) };
    const time = d.clock.now().toUTC().toISO({ suppressMilliseconds: true })!;
    const changes: ConfigChange[] = [];
    for (const [api, res] of FIELDS) {
      if (!(api in req)) continue;
      const to = req[api] ?? null;
      const from = spec[res] ?? null;
      if (to === from) continue;
      if (to === null) delete spec[res];
      else spec[res] = to;
      changes.push({ time, userId: user.id, userName: user.name, field: res, from, to });
    }
    if (changes.length === 0) return info(d, current?.spec);
    // A change made around the API that the controller has not recorded yet goes in first, so the
    // `from` of this one follows on from it.
    const outside = current ? unrecordedChanges(current, time) : [];
    spec.changes = appendChanges(spec.changes ?? [], [...outside, ...changes]);
    try {
      const saved = current
        ? await d.store.update(SandboxConfigurationKind, { ...current, spec })
        : await d.store.create(SandboxConfigurationKind, { apiVersion: API_VERSION, kind: 'SandboxConfiguration', metadata: { name: SANDBOX_CONFIGURATION_NAME, namespace: d.namespace }, spec });
      d.log?.info({ user: user.id, changes: changes.map((c) => ({ field: c.field, from: c.from, to: c.to })) }, 'sandbox configuration changed');
      return info(d, saved.spec);
    } catch (err) {
      if (!(err instanceof Conflict) || attempt >= 5) throw err;
    }
  }
}
