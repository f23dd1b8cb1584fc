// core/v1 Events in the cluster, so `kubectl describe sandbox <name>` shows the controller's story.
// Recording never blocks or fails a reconcile: an event that cannot be written is logged and dropped.
import { CoreV1Api, type KubeConfig } from '@kubernetes/client-node';
import { randomBytes } from 'node:crypto';
import type { Logger } from '../util/log.ts';
import type { EventRecorder } from './events.ts';
import { apiClient } from '../store/kube/api-client.ts';

export function kubeEventRecorder(kc: KubeConfig, component: string, log?: Logger): EventRecorder {
  const core = apiClient(kc, CoreV1Api);
  return {
    record(obj, type, reason, message) {
      const namespace = obj.metadata.namespace ?? 'default';
      const now = new Date();
      core
        .createNamespacedEvent({
          namespace,
          body: {
            metadata: { name: `${obj.metadata.name}.${randomBytes(8).toString('hex')}`, namespace },
            involvedObject: { apiVersion: obj.apiVersion, kind: obj.kind, name: obj.metadata.name, namespace, uid: obj.metadata.uid, resourceVersion: obj.metadata.resourceVersion },
            type,
            reason,
            message,
            source: { component },
            reportingComponent: component,
            firstTimestamp: now,
            lastTimestamp: now,
            count: 1,
          },
        })
        .catch((err: unknown) => log?.warn({ err, reason }, 'could not record an event'));
    },
  };
}
