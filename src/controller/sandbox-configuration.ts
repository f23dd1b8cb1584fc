// The deployment-wide Sandbox Configuration as the controller uses it: the environment's lifecycle
// settings are the defaults, the SandboxConfiguration `default` overrides them field by field, and
// a change is taken up at once — the source below watches the object, swaps the values the
// reconcilers read, and requeues every Sandbox so its idle and deletion deadlines are recomputed
// (controller-runtime: a watch on a related kind mapped onto every primary key).
import { setTimeout as sleep } from 'node:timers/promises';
import { Gone, NotFound } from '../api/errors.ts';
import { SandboxKind } from '../api/sandbox.ts';
import { SANDBOX_CONFIGURATION_NAME, SandboxConfigurationKind, type SandboxConfiguration, type SandboxConfigurationSpec } from '../api/sandbox-configuration.ts';
import type { ResourceStore } from '../store/types.ts';
import type { Logger } from '../util/log.ts';
import { objectKey } from './keys.ts';
import type { LifecycleSettings } from './lifecycle.ts';
import type { Source } from './manager.ts';
import { recordDeletion, recordOutsideChanges } from './sandbox-configuration-audit.ts';

const RELIST_BACKOFF_MS = 1_000;
/** The kind is not served (a chart upgrade without `kubectl apply` of its CRDs): the defaults apply; look again now and then. */
const MISSING_KIND_BACKOFF_MS = 60_000;

/** The settings in force: each field of the configuration object, else the default. */
export function effectiveSettings(defaults: LifecycleSettings, spec: SandboxConfigurationSpec | undefined): LifecycleSettings {
  return {
    idleTimeMs: spec?.idleTimeSeconds !== undefined ? spec.idleTimeSeconds * 1000 : defaults.idleTimeMs,
    deletionTimeMs: spec?.deletionTimeSeconds !== undefined ? spec.deletionTimeSeconds * 1000 : defaults.deletionTimeMs,
    capacity: spec?.sandboxCapacity ?? defaults.capacity,
  };
}

/**
 * LifecycleSettings whose values follow the configuration object. The reconcilers hold this one
 * object and read its fields on every pass, so swapping the values here is all a change needs.
 */
export class LiveLifecycleSettings implements LifecycleSettings {
  readonly defaults: LifecycleSettings;
  #current: LifecycleSettings;

  constructor(defaults: LifecycleSettings) {
    this.defaults = { ...defaults };
    this.#current = { ...defaults };
  }

  get idleTimeMs(): number {
    return this.#current.idleTimeMs;
  }
  get deletionTimeMs(): number {
    return this.#current.deletionTimeMs;
  }
  get capacity(): number {
    return this.#current.capacity;
  }

  /** Takes up a configuration (undefined: deleted, back to the defaults); true when a value changed. */
  apply(spec: SandboxConfigurationSpec | undefined): boolean {
    const next = effectiveSettings(this.defaults, spec);
    const changed = next.idleTimeMs !== this.#current.idleTimeMs || next.deletionTimeMs !== this.#current.deletionTimeMs || next.capacity !== this.#current.capacity;
    this.#current = next;
    return changed;
  }
}

/**
 * A controller Source: list+watch the configuration object (relisting after a broken watch, as the
 * informers do), apply each change, and when a value moved enqueue every Sandbox of the namespace.
 * Each version it sees is also audited: a change written around the API (kubectl edit) gets its
 * entry in the trail (sandbox-configuration-audit.ts). `now`: the clock's time, for entries whose
 * time Kubernetes did not record.
 */
export function sandboxConfigurationSource(store: ResourceStore, namespace: string, live: LiveLifecycleSettings, log?: Logger, now: () => string = () => new Date().toISOString()): Source {
  // A failed audit write is logged and tried again with the next version seen (or the next relist); the settings apply meanwhile.
  const audit = async () => {
    await recordOutsideChanges(store, namespace, now, log).catch((err: unknown) => log?.warn({ err }, 'sandbox configuration: recording a change made outside the API failed; trying again with the next change'));
  };
  const deleted = async (last: SandboxConfiguration) => {
    await recordDeletion(store, namespace, last, now, log).catch((err: unknown) => log?.warn({ err }, 'sandbox configuration: keeping the audit trail of the deleted configuration failed'));
  };
  const requeueAll = async (enqueue: (key: string) => void) => {
    for (const sb of (await store.list(SandboxKind, namespace)).items) enqueue(objectKey(sb.metadata.namespace, sb.metadata.name));
  };
  const source: Source = async (enqueue, signal) => {
    while (!signal.aborted) {
      try {
        const list = await store.list(SandboxConfigurationKind, namespace);
        const current = list.items.find((c) => c.metadata.name === SANDBOX_CONFIGURATION_NAME);
        if (live.apply(current?.spec)) await requeueAll(enqueue);
        if (current) await audit();
        for await (const ev of store.watch(SandboxConfigurationKind, namespace, { resourceVersion: list.resourceVersion, signal })) {
          if (ev.object.metadata.name !== SANDBOX_CONFIGURATION_NAME) continue;
          if (ev.type !== 'DELETED') await audit();
          else await deleted(ev.object);
          if (live.apply(ev.type === 'DELETED' ? undefined : ev.object.spec)) {
            log?.info({ idleTimeMs: live.idleTimeMs, deletionTimeMs: live.deletionTimeMs, capacity: live.capacity }, 'sandbox configuration changed; requeueing sandboxes');
            await requeueAll(enqueue);
          }
        }
      } catch (err) {
        if (signal.aborted) return;
        if (err instanceof Gone) continue;
        const missing = err instanceof NotFound;
        // Without the object's kind the controller still runs, on the defaults (preflight names the missing CRD).
        log?.warn({ err }, missing ? 'SandboxConfiguration is not served (CRD missing?); the environment defaults apply' : 'sandbox configuration watch failed; relisting');
        await sleep(missing ? MISSING_KIND_BACKOFF_MS : RELIST_BACKOFF_MS, undefined, { signal }).catch(() => undefined);
      }
    }
  };
  return source;
}
