// Events about resources, as `kubectl describe` shows them: the controller says what it did and why.
import type { KubeObject } from '../api/meta.ts';
import type { Logger } from '../util/log.ts';

export type EventType = 'Normal' | 'Warning';

export interface EventRecorder {
  record(obj: KubeObject, type: EventType, reason: string, message: string): void;
}

/** Embedded mode: events go to the log (there is no `kubectl describe`). */
export function logRecorder(log: Logger | undefined): EventRecorder {
  return {
    record(obj, type, reason, message) {
      log?.[type === 'Warning' ? 'warn' : 'info']({ kind: obj.kind, name: obj.metadata.name, reason }, message);
    },
  };
}
