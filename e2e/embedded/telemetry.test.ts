// Start requests' observability fields become OpenTelemetry spans, exported over OTLP/HTTP to a
// real receiver on loopback by a real `agentyard up` (embedded mode) with the scripted model.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startScriptedLlm, type ScriptedLlm } from '../../src/testing/scripted-llm/server.ts';
import { eventually, removeDataDir, startService, type RunningService } from './harness.ts';
import { startOtlpReceiver, type OtlpReceiver, type ReceivedSpan } from './otlp-receiver.ts';

const SECRET = 'sk-conversation-secret-5f1c9d';
const MODEL_KEY = 'sk-model-key-not-for-traces';

interface Task {
  id: string;
  status: string;
  detail?: string | null;
  app_conversation_id?: string | null;
  sandbox_id?: string | null;
}

describe('observability: start tasks exported as OpenTelemetry traces', () => {
  let llm: ScriptedLlm;
  let otlp: OtlpReceiver;
  let svc: RunningService;

  beforeAll(async () => {
    llm = await startScriptedLlm([{ content: 'Done.' }]);
    otlp = await startOtlpReceiver();
    svc = await startService({
      env: {
        LLM_MODEL: 'openai/scripted',
        LLM_BASE_URL: llm.url,
        LLM_API_KEY: MODEL_KEY,
        OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url,
        OTEL_BSP_SCHEDULE_DELAY: '50',
        OTEL_SERVICE_NAME: 'agentyard-e2e',
      },
    });
  });

  afterAll(async () => {
    await svc?.stop();
    await otlp?.close();
    await llm?.close();
    if (svc) removeDataDir(svc.dataDir);
  });

  it('refuses metadata values that are not scalars or homogeneous scalar arrays, naming the field', async () => {
    for (const bad of [{ mixed: ['a', 1] }, { nested: { a: 1 } }, { nulls: null }]) {
      const res = await svc.api<{ detail: { loc: (string | number)[] }[] }>('POST', '/api/v1/app-conversations', { observability_metadata: bad });
      expect(res.status).toBe(422);
      const key = Object.keys(bad)[0]!;
      expect(res.body.detail.some((d) => d.loc.join('.').startsWith(`body.observability_metadata.${key}`))).toBe(true);
    }
  });

  it('exports a root conversation span, the named child span and one span per start step', async () => {
    const started = await svc.api<Task>('POST', '/api/v1/app-conversations', {
      initial_message: { role: 'user', content: [{ type: 'text', text: 'hello' }], run: true },
      secrets: { MY_TOKEN: SECRET },
      observability_span_name: 'ci.fix-tests',
      observability_tags: ['ci', 'nightly'],
      observability_metadata: { run: 42, branch: 'main', retried: false, shards: [1, 2], owners: ['a', 'b'] },
    });
    expect(started.status, JSON.stringify(started.body)).toBeLessThan(300);
    const task = await eventually(async () => {
      const { body } = await svc.api<(Task | null)[]>('GET', `/api/v1/app-conversations/start-tasks?ids=${started.body.id}`);
      if (body[0]?.status === 'ERROR') throw new Error(`start failed: ${body[0].detail}`);
      return body[0]?.status === 'READY' ? body[0] : undefined;
    }, 'READY');
    const conversationId = task.app_conversation_id!;

    const root = await eventually(async () => otlp.spans.find((s) => s.name === 'conversation' && s.attributes['gen_ai.conversation.id'] === conversationId), 'the root span');
    expect(root.parentSpanId ?? '').toBe('');
    expect(root.traceId).toBe(conversationId);
    expect(root.resource['service.name']).toBe('agentyard-e2e');
    expect(root.attributes).toMatchObject({
      'agentyard.sandbox.id': task.sandbox_id,
      'agentyard.start_task.id': started.body.id,
      'user.id': 'admin',
      'agentyard.tags': ['ci', 'nightly'],
      'agentyard.metadata.run': 42,
      'agentyard.metadata.branch': 'main',
      'agentyard.metadata.retried': false,
      'agentyard.metadata.shards': [1, 2],
      'agentyard.metadata.owners': ['a', 'b'],
    });
    expect(root.status?.code).toBe(1); // OK

    const trace = otlp.spans.filter((s) => s.traceId === root.traceId);
    const named = trace.find((s) => s.name === 'ci.fix-tests');
    expect(named?.parentSpanId).toBe(root.spanId);
    const steps = trace.filter((s) => s.name.startsWith('start_task.'));
    for (const s of steps) expect(s.parentSpanId).toBe(named!.spanId);
    const names = steps.sort(byStart).map((s) => s.name);
    expect(names).toContain('start_task.STARTING_CONVERSATION');
    expect(names.at(-1)).toBe('start_task.STARTING_CONVERSATION');
    expect(new Set(names).size).toBe(names.length);
    for (const s of [root, named!, ...steps]) {
      expect(BigInt(s.endTimeUnixNano)).toBeGreaterThanOrEqual(BigInt(s.startTimeUnixNano));
      expect(BigInt(s.startTimeUnixNano)).toBeGreaterThanOrEqual(BigInt(root.startTimeUnixNano));
    }

    // Nothing secret and no message text leaves in a trace.
    for (const body of otlp.bodies) {
      expect(body).not.toContain(SECRET);
      expect(body).not.toContain(MODEL_KEY);
      expect(body).not.toContain('hello');
    }
  });
});

function byStart(a: ReceivedSpan, b: ReceivedSpan): number {
  const d = BigInt(a.startTimeUnixNano) - BigInt(b.startTimeUnixNano);
  return d < 0n ? -1 : d > 0n ? 1 : 0;
}
