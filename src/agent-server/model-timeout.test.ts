// A hung model behind the agent server, over real HTTP: the conversation's own llm.timeout and
// num_retries (sent in the start request) end the run quickly with an LLMTimeoutError that names
// them, and the conversation takes the next message.
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createAgent } from '../agent/agent.ts';
import { eventually, useRealAgentServer, userText } from './test-support.ts';

const t = useRealAgentServer({ createAgent });

describe('model timeouts from the conversation settings', () => {
  it('ends a run on a hung model after timeout x num_retries with a clear error, then runs again', async () => {
    const hung = (req: { signal: AbortSignal }) => new Promise<{ content: string }>((resolve) => req.signal.addEventListener('abort', () => resolve({ content: 'never seen' })));
    t.llm.push(hung, hung, { content: 'back again' });
    const body = {
      workspace: { kind: 'LocalWorkspace', working_dir: join(t.dir.path, 'w') },
      agent: { llm: { model: 'openai/scripted', timeout: 1, num_retries: 2, retry_min_wait: 0, retry_max_wait: 0 }, tools: [] },
    };
    const id = (await t.s.api('/api/conversations', { method: 'POST', body })).body.id as string;
    const started = Date.now();
    await t.s.api(`/api/conversations/${id}/events`, { method: 'POST', body: userText('hello', true) });
    await eventually(async () => (await t.s.api(`/api/conversations/${id}`)).body.execution_status === 'error', 15_000);
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(t.llm.requests).toHaveLength(2);

    const items = (await t.s.api(`/api/conversations/${id}/events/search?kind=ConversationErrorEvent`)).body.items;
    expect(items).toHaveLength(1);
    expect(items[0]).toMatchObject({ code: 'LLMTimeoutError', detail: 'The model did not answer within 1 s (llm.timeout), in 2 attempts (llm.num_retries 2)' });

    await t.s.api(`/api/conversations/${id}/events`, { method: 'POST', body: userText('again', true) });
    await eventually(async () => (await t.s.api(`/api/conversations/${id}`)).body.execution_status === 'finished', 15_000);
    expect(t.llm.requests).toHaveLength(3);
  });
});
