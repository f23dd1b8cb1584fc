// The controller's Prometheus metrics, named and labelled as controller-runtime (and client-go's
// work queue) name them, so that the dashboards and alerts operators have for operators work here:
//   controller_runtime_reconcile_total{controller,result}      result: success | error | requeue_after
//   controller_runtime_reconcile_errors_total{controller}
//   controller_runtime_terminal_reconcile_errors_total{controller}
//   controller_runtime_reconcile_time_seconds{controller}      histogram
//   controller_runtime_active_workers{controller}
//   controller_runtime_max_concurrent_reconciles{controller}
//   workqueue_depth{name,controller}  workqueue_adds_total{name,controller}  workqueue_retries_total{name,controller}
//   workqueue_queue_duration_seconds{name,controller}          histogram: queued → taken by a worker
// plus what is ours: agentyard_sandboxes{phase} (Sandboxes the controller sees, by status phase) and
// start-task durations by step (agentyard_start_task_step_duration_seconds{step}).
import type { Conversation } from '../api/conversation.ts';
import type { KubeObject } from '../api/meta.ts';
import type { Sandbox } from '../api/sandbox.ts';
import { counter, gauge, histogram, LATENCY_BUCKETS, type Registry } from '../util/metrics.ts';
import { objectKey } from './keys.ts';
import type { QueueMetrics } from './queue.ts';

/** Queue waits can be long (deadlines, backoff): up to 10 minutes. */
const QUEUE_BUCKETS = [...LATENCY_BUCKETS, 120, 300, 600];

export function queueMetrics(registry: Registry, controller: string, workers: number): QueueMetrics {
  const c = { controller };
  const q = { name: controller, controller };
  const reconcileTotal = counter(registry, 'controller_runtime_reconcile_total', 'Total number of reconciliations per controller', ['controller', 'result']);
  const errors = counter(registry, 'controller_runtime_reconcile_errors_total', 'Total number of reconciliation errors per controller', ['controller']);
  const terminal = counter(registry, 'controller_runtime_terminal_reconcile_errors_total', 'Total number of terminal reconciliation errors per controller', ['controller']);
  const time = histogram(registry, 'controller_runtime_reconcile_time_seconds', 'Length of time per reconciliation per controller', ['controller']);
  const active = gauge(registry, 'controller_runtime_active_workers', 'Number of currently used workers per controller', ['controller']);
  const max = gauge(registry, 'controller_runtime_max_concurrent_reconciles', 'Maximum number of concurrent reconciles per controller', ['controller']);
  const depth = gauge(registry, 'workqueue_depth', 'Current depth of workqueue', ['name', 'controller']);
  const adds = counter(registry, 'workqueue_adds_total', 'Total number of adds handled by workqueue', ['name', 'controller']);
  const retries = counter(registry, 'workqueue_retries_total', 'Total number of retries handled by workqueue', ['name', 'controller']);
  const waited = histogram(registry, 'workqueue_queue_duration_seconds', 'How long in seconds an item stays in workqueue before being requested', ['name', 'controller'], QUEUE_BUCKETS);
  max.set(c, workers);
  // Every series present from the start (a rate over a series that appears late misses its first increase).
  for (const result of ['success', 'error', 'requeue_after']) reconcileTotal.inc({ ...c, result }, 0);
  errors.inc(c, 0);
  terminal.inc(c, 0);
  active.set(c, 0);
  depth.set(q, 0);
  adds.inc(q, 0);
  retries.inc(q, 0);
  return {
    added: () => adds.inc(q),
    depth: (n) => depth.set(q, n),
    waited: (s) => waited.observe(q, s),
    reconciled: (result, s, isTerminal) => {
      reconcileTotal.inc({ ...c, result });
      time.observe(c, s);
      if (result === 'error') errors.inc(c);
      if (isTerminal) terminal.inc(c);
    },
    retried: () => retries.inc(q),
    active: (n) => active.set(c, n),
  };
}

/**
 * `agentyard_sandboxes{phase}`: fed by the controller's Sandbox informer (every change and deletion),
 * so it counts what the controller sees without listing anything at scrape time.
 */
export function sandboxPhases(registry: Registry): (obj: KubeObject, deleted: boolean) => void {
  const phases = new Map<string, string>();
  const g = gauge(registry, 'agentyard_sandboxes', 'Sandboxes by status phase, as the controller sees them', ['phase']);
  const counts = new Map<string, number>();
  const bump = (phase: string, by: number) => {
    const n = (counts.get(phase) ?? 0) + by;
    counts.set(phase, n);
    g.set({ phase }, n);
  };
  return (obj, deleted) => {
    const key = objectKey(obj.metadata.namespace, obj.metadata.name);
    const before = phases.get(key);
    const now = deleted ? undefined : ((obj as Sandbox).status?.phase ?? 'PENDING');
    if (before === now) return;
    if (before !== undefined) bump(before, -1);
    if (now === undefined) phases.delete(key);
    else {
      phases.set(key, now);
      bump(now, 1);
    }
  };
}

/**
 * Start-task durations from the Conversation informer: `agentyard_start_task_step_duration_seconds
 * {step}` for each step seen from its beginning to the next (by the steps' own `updatedAt` times),
 * and `agentyard_start_task_duration_seconds{result}` from the conversation's creation to READY or
 * ERROR. A step already under way when the controller started is not observed (its start is unknown).
 */
export function startTaskSteps(registry: Registry): (obj: KubeObject, deleted: boolean) => void {
  const steps = histogram(registry, 'agentyard_start_task_step_duration_seconds', 'Time a start task spent in each step', ['step'], QUEUE_BUCKETS);
  const total = histogram(registry, 'agentyard_start_task_duration_seconds', 'Time from a conversation\'s creation to its start task READY or ERROR', ['result'], QUEUE_BUCKETS);
  const current = new Map<string, { step: string; since: number }>();
  return (obj, deleted) => {
    const key = objectKey(obj.metadata.namespace, obj.metadata.name);
    const task = (obj as Conversation).status?.startTask;
    if (deleted || !task) {
      current.delete(key);
      return;
    }
    const at = Date.parse(task.updatedAt ?? '');
    const seen = current.get(key);
    if (seen?.step === task.status || !Number.isFinite(at)) return;
    if (seen) steps.observe({ step: seen.step }, Math.max(0, at - seen.since) / 1000);
    if (task.status === 'READY' || task.status === 'ERROR') {
      current.delete(key);
      // Only a start this controller followed (a READY seen at list time after a restart is history).
      const created = Date.parse(obj.metadata.creationTimestamp ?? '');
      if (seen && Number.isFinite(created)) total.observe({ result: task.status }, Math.max(0, at - created) / 1000);
      return;
    }
    current.set(key, { step: task.status, since: at });
  };
}
