// The controller's metrics as Prometheus scrapes them: a real Controller over a SQLite store, its
// registry served by the controller's metrics server over HTTP, the text format parsed.
import { afterEach, describe, expect, it } from 'vitest';
import { API_VERSION } from '../api/meta.ts';
import type { Conversation } from '../api/conversation.ts';
import { SandboxKind, type Sandbox } from '../api/sandbox.ts';
import { eventually } from '../facade/test-support.ts';
import { SqliteStore } from '../store/sqlite/sqlite-store.ts';
import { newRegistry, startMetricsServer } from '../util/metrics.ts';
import { sampleValue, scrape, type Sample } from '../util/prometheus-text.ts';
import { ManualClock } from './clock.ts';
import { Controller } from './manager.ts';
import { startTaskSteps } from './metrics.ts';

const NS = 'default';
const sandbox = (name: string): Sandbox => ({ apiVersion: API_VERSION, kind: 'Sandbox', metadata: { name, namespace: NS }, spec: { paused: false } });

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

describe('controller metrics', () => {
  it('counts reconciles by result, errors, queue adds and waits, and sandboxes by phase, as controller-runtime names them', async () => {
    const store = new SqliteStore(':memory:', { clock: new ManualClock() });
    cleanups.push(() => store.close());
    const registry = newRegistry();
    const server = await startMetricsServer(registry, 0, '127.0.0.1');
    cleanups.push(() => server.close());
    let failuresLeft = 1;
    const ctrl = new Controller({ store, metrics: registry }).register({
      name: 'sandbox',
      kind: SandboxKind,
      workers: 3,
      reconcile: async (key) => {
        if (key === 'default/fails' && failuresLeft-- > 0) throw new Error('runtime unavailable');
        if (key === 'default/waits') return { requeueAfterMs: 3_600_000 };
        return {};
      },
    });
    cleanups.push(() => ctrl.stop());
    await ctrl.start();
    const before = await scrape(`${server.url}/metrics`);
    // Every series exists before anything happened (a rate over a series that appears late misses its first increase).
    expect(sampleValue(before, 'controller_runtime_reconcile_total', { controller: 'sandbox', result: 'error' })).toBe(0);
    expect(sampleValue(before, 'controller_runtime_max_concurrent_reconciles', { controller: 'sandbox' })).toBe(3);

    await store.create(SandboxKind, sandbox('ok'));
    await store.create(SandboxKind, sandbox('fails'));
    const waits = await store.create(SandboxKind, sandbox('waits'));
    await store.updateStatus(SandboxKind, { ...waits, status: { phase: 'RUNNING' } });

    let after: Sample[] = [];
    const value = (name: string, labels: Record<string, string>) => sampleValue(after, name, labels) ?? 0;
    await eventually(async () => {
      after = await scrape(`${server.url}/metrics`);
      // fails: an error, then a success after its backoff
      return value('controller_runtime_reconcile_total', { controller: 'sandbox', result: 'success' }) >= 2;
    }, 'the failed sandbox to be reconciled again');
    expect(value('controller_runtime_reconcile_total', { controller: 'sandbox', result: 'error' })).toBe(1);
    expect(value('controller_runtime_reconcile_errors_total', { controller: 'sandbox' })).toBe(1);
    expect(value('controller_runtime_terminal_reconcile_errors_total', { controller: 'sandbox' })).toBe(0);
    expect(value('controller_runtime_reconcile_total', { controller: 'sandbox', result: 'requeue_after' })).toBeGreaterThanOrEqual(1);
    expect(value('workqueue_retries_total', { name: 'sandbox', controller: 'sandbox' })).toBe(1);
    const passes = value('controller_runtime_reconcile_time_seconds_count', { controller: 'sandbox' });
    expect(passes).toBe(value('controller_runtime_reconcile_total', { controller: 'sandbox', result: 'success' }) + value('controller_runtime_reconcile_total', { controller: 'sandbox', result: 'error' }) + value('controller_runtime_reconcile_total', { controller: 'sandbox', result: 'requeue_after' }));
    // Each pass took a key off the queue, and was counted as an add when it was queued.
    expect(value('workqueue_queue_duration_seconds_count', { name: 'sandbox' })).toBe(passes);
    expect(value('workqueue_adds_total', { name: 'sandbox' })).toBeGreaterThanOrEqual(passes);
    expect(value('workqueue_depth', { name: 'sandbox' })).toBe(0);
    expect(value('controller_runtime_active_workers', { controller: 'sandbox' })).toBe(0);
    expect(value('agentyard_sandboxes', { phase: 'RUNNING' })).toBe(1);
    expect(value('agentyard_sandboxes', { phase: 'PENDING' })).toBe(2);

    await store.delete(SandboxKind, NS, 'waits');
    await eventually(async () => {
      after = await scrape(`${server.url}/metrics`);
      return value('agentyard_sandboxes', { phase: 'RUNNING' }) === 0;
    }, 'the deleted sandbox to leave the phase count');
    expect(value('agentyard_sandboxes', { phase: 'PENDING' })).toBe(2);
  });

  it('times each start-task step from its own updatedAt to the next step, and the whole start from creation', async () => {
    const registry = newRegistry();
    const observe = startTaskSteps(registry);
    const conv = (status: string, at: string): Conversation => ({
      apiVersion: API_VERSION,
      kind: 'Conversation',
      metadata: { name: 'c1', namespace: NS, creationTimestamp: '2026-03-01T10:00:00.000Z' },
      spec: {},
      status: { startTask: { status: status as never, updatedAt: at } },
    });
    observe(conv('WAITING_FOR_SANDBOX', '2026-03-01T10:00:00.000Z'), false);
    observe(conv('WAITING_FOR_SANDBOX', '2026-03-01T10:00:00.000Z'), false); // the same step again: nothing
    observe(conv('STARTING_CONVERSATION', '2026-03-01T10:00:01.500Z'), false);
    observe(conv('READY', '2026-03-01T10:00:02.000Z'), false);
    observe(conv('READY', '2026-03-01T10:00:02.000Z'), false); // seen again (a relist): not counted twice
    const server = await startMetricsServer(registry, 0, '127.0.0.1');
    cleanups.push(() => server.close());
    const s = await scrape(`${server.url}/metrics`);
    expect(sampleValue(s, 'agentyard_start_task_step_duration_seconds_count', { step: 'WAITING_FOR_SANDBOX' })).toBe(1);
    expect(sampleValue(s, 'agentyard_start_task_step_duration_seconds_sum', { step: 'WAITING_FOR_SANDBOX' })).toBe(1.5);
    expect(sampleValue(s, 'agentyard_start_task_step_duration_seconds_sum', { step: 'STARTING_CONVERSATION' })).toBe(0.5);
    expect(sampleValue(s, 'agentyard_start_task_duration_seconds_count', { result: 'READY' })).toBe(1);
    expect(sampleValue(s, 'agentyard_start_task_duration_seconds_sum', { result: 'READY' })).toBe(2);
    // A start already READY when first seen (after a restart) is history, not a new start.
    observe({ ...conv('READY', '2026-03-01T10:05:00.000Z'), metadata: { name: 'c2', namespace: NS, creationTimestamp: '2026-03-01T10:00:00.000Z' } }, false);
    const again = await scrape(`${server.url}/metrics`);
    expect(sampleValue(again, 'agentyard_start_task_duration_seconds_count', { result: 'READY' })).toBe(1);
  });
});
