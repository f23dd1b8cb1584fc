// StartTraces on the real SDK with an in-memory exporter: the span tree, and a start resumed by a
// second process (a new StartTraces) that completes the same trace.
import { InMemorySpanExporter, RandomIdGenerator, SimpleSpanProcessor, TracerProvider } from '@opentelemetry/sdk-trace';
import { describe, expect, it } from 'vitest';
import type { Conversation, StartTaskStatus } from '../../api/conversation.ts';
import { SlotIds, type Telemetry } from './provider.ts';
import { rootSpanIdOf, StartTraces } from './start-traces.ts';

function telemetry(exporter: InMemorySpanExporter): Telemetry {
  const ids = new SlotIds(new RandomIdGenerator());
  const provider = new TracerProvider({ idGenerator: ids, spanProcessors: [new SimpleSpanProcessor({ exporter })] });
  return {
    tracer: provider.getTracer('test'),
    withIds(next, fn) {
      ids.next = next;
      try {
        return fn();
      } finally {
        ids.next = undefined;
      }
    },
    flush: () => provider.forceFlush(),
    shutdown: () => provider.shutdown(),
  };
}

const ID = '0123456789abcdef0123456789abcdef';
function conv(step: StartTaskStatus | undefined, second: number, extra: Partial<Conversation['status']> = {}): Conversation {
  return {
    apiVersion: 'agentyard.dev/v1alpha1',
    kind: 'Conversation',
    metadata: { name: ID, namespace: 'default', creationTimestamp: '2026-01-01T00:00:00.000Z', labels: { 'agentyard.dev/start-task': 'task1' } },
    spec: { owner: 'u1', observability: { spanName: 'nightly', tags: ['t'], metadata: { n: 1 } } },
    ...(step ? { status: { startTask: { status: step, updatedAt: `2026-01-01T00:00:0${second}.000Z` }, ...extra } } : {}),
  } as Conversation;
}

describe('StartTraces', () => {
  it('builds conversation → named span → one span per step, ended at READY', () => {
    const exporter = new InMemorySpanExporter();
    const traces = new StartTraces(telemetry(exporter));
    traces.observe(conv(undefined, 0));
    traces.observe(conv('WAITING_FOR_SANDBOX', 1, { sandboxName: 'sb1' }));
    traces.observe(conv('WAITING_FOR_SANDBOX', 1, { sandboxName: 'sb1' }));
    traces.observe(conv('STARTING_CONVERSATION', 3, { sandboxName: 'sb1' }));
    expect(exporter.getFinishedSpans().map((s) => s.name)).toEqual(['start_task.WORKING', 'start_task.WAITING_FOR_SANDBOX']);
    traces.observe(conv('READY', 4, { sandboxName: 'sb1' }));
    const spans = exporter.getFinishedSpans();
    const root = spans.find((s) => s.name === 'conversation')!;
    const named = spans.find((s) => s.name === 'nightly')!;
    expect(root.spanContext().traceId).toBe(ID);
    expect(root.spanContext().spanId).toBe(rootSpanIdOf(ID));
    expect(root.parentSpanContext).toBeUndefined();
    expect(root.attributes).toMatchObject({ 'gen_ai.conversation.id': ID, 'agentyard.sandbox.id': 'sb1', 'user.id': 'u1', 'agentyard.tags': ['t'], 'agentyard.metadata.n': 1 });
    expect(named.parentSpanContext?.spanId).toBe(root.spanContext().spanId);
    for (const s of spans.filter((x) => x.name.startsWith('start_task.'))) expect(s.parentSpanContext?.spanId).toBe(named.spanContext().spanId);
    expect(spans.filter((x) => x.name.startsWith('start_task.')).map((s) => s.name)).toEqual(['start_task.WORKING', 'start_task.WAITING_FOR_SANDBOX', 'start_task.STARTING_CONVERSATION']);
    expect(traces.openCount).toBe(0);
  });

  it('a second process resuming the start completes the same trace; finished starts are not traced again', () => {
    const first = new InMemorySpanExporter();
    const a = new StartTraces(telemetry(first));
    a.observe(conv('WORKING', 0));
    a.observe(conv('WAITING_FOR_SANDBOX', 1)); // then the process dies
    const second = new InMemorySpanExporter();
    const b = new StartTraces(telemetry(second));
    b.observe(conv('WAITING_FOR_SANDBOX', 1));
    b.observe(conv('ERROR', 5));
    const root = second.getFinishedSpans().find((s) => s.name === 'conversation')!;
    expect(root.spanContext().traceId).toBe(first.getFinishedSpans()[0]!.spanContext().traceId);
    expect(root.status.code).toBe(2);
    const named = second.getFinishedSpans().find((s) => s.name === 'nightly')!;
    expect(first.getFinishedSpans()[0]!.parentSpanContext?.spanId).toBe(named.spanContext().spanId);
    const c = new StartTraces(telemetry(new InMemorySpanExporter()));
    c.observe(conv('READY', 6));
    expect(c.openCount).toBe(0);
  });
});
