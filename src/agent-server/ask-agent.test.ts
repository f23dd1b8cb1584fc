// POST /api/conversations/{id}/ask_agent over HTTP with the real agent and the scripted model: a side
// question answered with the conversation as context, leaving no event and no status change (also
// while a run goes on), its usage counted under `ask-agent-llm` as in OpenHands, secrets masked.
import { describe, expect, it } from 'vitest';
import { join } from 'node:path';
import { createAgentWith } from '../agent/agent.ts';
import { eventually, useRealAgentServer, userText } from './test-support.ts';

const t = useRealAgentServer({ createAgent: createAgentWith({ model: { maxRetries: 0 } }) });

async function create(extra: Record<string, unknown> = {}): Promise<string> {
  const body = { workspace: { kind: 'LocalWorkspace', working_dir: join(t.dir.path, 'wd') }, agent: { llm: { model: 'openai/scripted' }, tools: [{ name: 'terminal' }] }, ...extra };
  return (await t.s.api('/api/conversations', { method: 'POST', body })).body.id;
}
const info = async (id: string) => (await t.s.api(`/api/conversations/${id}`)).body;
const until = (id: string, want: string) => eventually(async () => (await info(id)).execution_status === want, 15_000);
const eventIds = async (id: string) => ((await t.s.api(`/api/conversations/${id}/events/search?limit=100`)).body.items as any[]).map((e) => e.id);
const say = (id: string, text: string) => t.s.api(`/api/conversations/${id}/events`, { method: 'POST', body: userText(text, true) });
const ask = (id: string, question: string) => t.s.api(`/api/conversations/${id}/ask_agent`, { method: 'POST', body: { question } });

describe('ask_agent', () => {
  it('answers from the conversation with its tools, records nothing, keeps the status, and counts its usage apart', async () => {
    const id = await create();
    t.llm.push(
      { toolCalls: [{ name: 'terminal', arguments: { command: 'echo the-answer-is-$((6*7))' } }], usage: { prompt_tokens: 10, completion_tokens: 2 } },
      { content: 'Printed it.', usage: { prompt_tokens: 12, completion_tokens: 3 } },
    );
    await say(id, 'print the answer');
    await until(id, 'finished');
    const before = await eventIds(id);
    const agentUsage = (await info(id)).stats.usage_to_metrics.default;

    t.llm.push((req) => {
      expect(req.messages[0]!.role).toBe('system');
      expect(JSON.stringify(req.messages)).toContain('the-answer-is-42');
      const last = req.messages.at(-1)!;
      expect(last.role).toBe('user');
      expect(String(last.content)).toContain('What number did you print?');
      expect(req.tools!.map((x) => x.function.name)).toContain('terminal');
      expect(req.stream).toBeUndefined();
      return { content: 'I printed 42.', usage: { prompt_tokens: 40, completion_tokens: 4 } };
    });
    expect(await ask(id, 'What number did you print?')).toEqual({ status: 200, body: { response: 'I printed 42.' } });
    expect(await eventIds(id)).toEqual(before);
    const after = await info(id);
    expect(after.execution_status).toBe('finished');
    expect(after.stats.usage_to_metrics.default).toEqual(agentUsage);
    expect(after.stats.usage_to_metrics['ask-agent-llm'].accumulated_token_usage).toMatchObject({ prompt_tokens: 40, completion_tokens: 4 });

    // The agent's view is untouched: the next run does not see the side question; its stats event keeps the ask usage.
    t.llm.push((req) => {
      expect(JSON.stringify(req.messages)).not.toContain('What number did you print?');
      return { content: 'Carrying on.', usage: { prompt_tokens: 50, completion_tokens: 1 } };
    });
    await say(id, 'go on');
    await until(id, 'finished');
    const stats = (await info(id)).stats.usage_to_metrics;
    expect(stats.default.accumulated_token_usage.prompt_tokens).toBe(72);
    expect(stats['ask-agent-llm'].accumulated_token_usage.prompt_tokens).toBe(40);
  });

  it('answers while a run goes on without touching it, and before any run without recording a system prompt', async () => {
    const fresh = await create({ secrets: { API_TOKEN: { kind: 'StaticSecret', value: 'tok-very-secret-value' } } });
    t.llm.push((req) => {
      expect(req.messages.map((m) => m.role)).toEqual(['system', 'user']);
      return { content: 'Nothing happened yet; the token is tok-very-secret-value.' };
    });
    // The answer is masked like any output of the conversation.
    expect((await ask(fresh, 'What happened so far?')).body).toEqual({ response: 'Nothing happened yet; the token is <secret-hidden>.' });
    expect(await eventIds(fresh)).toEqual([]);
    expect((await info(fresh)).execution_status).toBe('idle');

    const id = await create();
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    t.llm.push(async () => {
      await held;
      return { content: 'the run is done' };
    }, { content: 'The run is still thinking.' });
    await say(id, 'think slowly');
    await until(id, 'running');
    await eventually(() => t.llm.remaining() === 1);
    const before = await eventIds(id);
    expect((await ask(id, 'Are you busy?')).body).toEqual({ response: 'The run is still thinking.' });
    expect((await info(id)).execution_status).toBe('running');
    expect(await eventIds(id)).toEqual(before);
    release();
    await until(id, 'finished');
    expect((await t.s.api(`/api/conversations/${id}/agent_final_response`)).body).toEqual({ response: 'the run is done' });
  });

  it('answers 502 when the model fails or only calls tools, 422 without a question, 404 for an unknown conversation', async () => {
    const id = await create();
    t.llm.push({ status: 401, errorMessage: 'bad key' });
    const failed = await ask(id, 'anything?');
    expect(failed.status).toBe(502);
    expect(failed.body.detail).toContain('LLMAuthenticationError');
    t.llm.push({ toolCalls: [{ name: 'terminal', arguments: { command: 'ls' } }] });
    expect((await ask(id, 'list the files')).status).toBe(502);
    expect(await eventIds(id)).toEqual([]);
    expect((await info(id)).execution_status).toBe('idle');

    const missing = await t.s.api(`/api/conversations/${id}/ask_agent`, { method: 'POST', body: {} });
    expect(missing.status).toBe(422);
    expect(missing.body.detail[0]).toMatchObject({ loc: ['body', 'question'], type: 'missing' });
    expect((await ask('00000000-0000-0000-0000-000000000000', 'hello?')).status).toBe(404);
  });
});
