// An OpenHands client's start request against `agentyard up` (issue 19 item 2): the per-conversation
// model and the system message suffix reach the scripted model; a caller-chosen id is the id.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { finished, startReady, userMessage } from './flows.ts';
import { startServiceWithModel, type ServiceWithModel } from './harness.ts';

const CHOSEN = '5a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d';
const SUFFIX = 'Always sign your answers with MARKER-7f3e.';

describe('OpenHands start request in `agentyard up`', () => {
  let s: ServiceWithModel;
  let conversationId: string;

  beforeAll(async () => {
    s = await startServiceWithModel();
    s.llm.push({ toolCalls: [{ name: 'finish', arguments: { message: 'planned' } }] });
    const task = await startReady(s.svc, {
      conversation_id: CHOSEN,
      initial_message: userMessage('make a plan'),
      llm_model: 'openai/scripted-override',
      system_message_suffix: SUFFIX,
      agent_type: 'plan',
      trigger: 'openhands_api',
      processors: [{ kind: 'SetTitleCallbackProcessor' }],
    });
    conversationId = task.app_conversation_id;
    await finished(s.svc, conversationId);
  }, 120_000);

  afterAll(async () => {
    await s?.stop();
  });

  it('the model is asked under the llm_model name, with the suffix and plan instruction in its system prompt', () => {
    expect(s.llm.failures).toEqual([]);
    expect(s.llm.requests.length).toBeGreaterThanOrEqual(1);
    const first = s.llm.requests[0]!;
    expect(first.model).toBe('scripted-override');
    const system = first.messages.filter((m) => m.role === 'system').map((m) => JSON.stringify(m.content)).join('\n');
    expect(system).toContain('MARKER-7f3e');
    expect(system).toContain('planning mode');
  });

  it('the conversation has the chosen id and shows what was asked', async () => {
    expect(conversationId).toBe(CHOSEN.replaceAll('-', ''));
    const { body } = await s.svc.api<Record<string, unknown>[]>('GET', `/api/v1/app-conversations?ids=${CHOSEN}`);
    expect(body[0]).toMatchObject({ id: conversationId, llm_model: 'openai/scripted-override', agent_type: 'plan', trigger: 'openhands_api' });
    expect(Object.keys(body[0]!['unapplied_fields'] as object)).toEqual(['processors']);
    const again = await s.svc.api('POST', '/api/v1/app-conversations', { conversation_id: CHOSEN });
    expect(again.status).toBe(409);
  });

  it('stream-start: a sub-conversation started through the stream, its snapshots ending READY, on the parent model', async () => {
    s.llm.push({ toolCalls: [{ name: 'finish', arguments: { message: 'child done' } }] });
    const before = s.llm.requests.length;
    const res = await fetch(`${s.svc.url}/api/v1/app-conversations/stream-start`, {
      method: 'POST',
      headers: { authorization: `Bearer ${s.svc.apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ parent_conversation_id: CHOSEN, initial_message: userMessage('a sub-task') }),
    });
    expect(res.status).toBe(200);
    const snapshots = JSON.parse(await res.text()) as { status: string; app_conversation_id: string | null }[];
    expect(snapshots[0]!.status).toBe('WORKING');
    expect(snapshots.at(-1)!.status).toBe('READY');
    // A snapshot per step, as OpenHands streams them: each a new status (a change, not a poll).
    for (let i = 1; i < snapshots.length; i++) expect(snapshots[i]!.status).not.toBe(snapshots[i - 1]!.status);
    const child = snapshots.at(-1)!.app_conversation_id!;
    await finished(s.svc, child);
    expect(s.llm.requests[before]!.model).toBe('scripted-override');
    const { body } = await s.svc.api<Record<string, unknown>[]>('GET', `/api/v1/app-conversations?ids=${CHOSEN}&ids=${child}`);
    expect(body[0]!['sub_conversation_ids']).toEqual([child]);
    expect(body[1]).toMatchObject({ parent_conversation_id: conversationId, sandbox_id: body[0]!['sandbox_id'] });
  });
});
