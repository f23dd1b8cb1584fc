// The real agent (src/agent) behind the agent server, against the scripted model server: a real
// shell command runs in the workspace, every step is persisted and streamed, usage reaches the info.
import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createAgent } from '../agent/agent.ts';
import { eventually, FrameCollector, TEST_KEY, useRealAgentServer, userText } from './test-support.ts';

const ctx = useRealAgentServer({ createAgent });

describe('agent server with the real agent', () => {
  it('records a TokenEvent per agent model call when litellm_extra_body asks for token ids (sent along to the endpoint), none otherwise', async () => {
    ctx.llm.push(
      { toolCalls: [{ name: 'finish', arguments: { message: 'one' } }], tokenIds: { prompt: [1, 2, 3], response: [7, 8] } },
      { toolCalls: [{ name: 'finish', arguments: { message: 'two' } }], tokenIds: { prompt: [4], response: [9] } },
    );
    const run = async (extra: Record<string, unknown> | undefined) => {
      const body = { workspace: { kind: 'LocalWorkspace', working_dir: join(ctx.dir.path, 'p') }, agent: { llm: { model: 'openai/scripted', ...(extra ? { litellm_extra_body: extra } : {}) }, tools: [] }, initial_message: userText('go', true) };
      const id = (await ctx.s.api('/api/conversations', { method: 'POST', body })).body.id;
      await eventually(async () => (await ctx.s.api(`/api/conversations/${id}`)).body.execution_status === 'finished', 15_000);
      return (await ctx.s.api(`/api/conversations/${id}/events/search`)).body.items as any[];
    };
    const asked = await run({ return_token_ids: true });
    expect(ctx.llm.requests.at(-1)?.body['return_token_ids']).toBe(true);
    const tokens = asked.filter((e) => e.kind === 'TokenEvent');
    expect(tokens).toEqual([expect.objectContaining({ source: 'agent', prompt_token_ids: [1, 2, 3], response_token_ids: [7, 8] })]);
    const kinds = asked.map((e) => e.kind).filter((k) => k !== 'ConversationStateUpdateEvent');
    // Where OpenHands puts it: after the answer's actions ran (here the finish and its observation).
    expect(kinds.slice(-3)).toEqual(['ActionEvent', 'ObservationEvent', 'TokenEvent']);

    const plain = await run(undefined);
    expect(ctx.llm.requests.at(-1)?.body['return_token_ids']).toBeUndefined();
    expect(plain.some((e) => e.kind === 'TokenEvent')).toBe(false);
  });

  it('streams an LLMCompletionLogEvent per model call when log_completions is on, masked, and none when it is off', async () => {
    ctx.llm.push(
      { toolCalls: [{ name: 'terminal', arguments: { command: 'echo $TOKEN_X' } }], usage: { prompt_tokens: 30, completion_tokens: 5 } },
      { status: 429, errorMessage: 'slow down', retryAfterMs: 1 },
      { toolCalls: [{ name: 'finish', arguments: { message: 'done' } }], usage: { prompt_tokens: 40, completion_tokens: 2 } },
      { toolCalls: [{ name: 'finish', arguments: { message: 'quiet' } }] },
    );
    const run = async (log: boolean, text: string) => {
      const body = { workspace: { kind: 'LocalWorkspace', working_dir: join(ctx.dir.path, 'p') }, agent: { llm: { model: 'openai/scripted', log_completions: log, num_retries: 2, retry_min_wait: 0, retry_max_wait: 0 }, tools: [{ name: 'terminal' }] }, secrets: { TOKEN_X: { kind: 'StaticSecret', value: 'tok-value-9876' } } };
      const id = (await ctx.s.api('/api/conversations', { method: 'POST', body })).body.id;
      const ws = new FrameCollector(`${ctx.s.url.replace('http', 'ws')}/sockets/events/${id}`, { 'x-session-api-key': TEST_KEY });
      await ws.until(1);
      await ctx.s.api(`/api/conversations/${id}/events`, { method: 'POST', body: userText(text, true) });
      await eventually(async () => (await ctx.s.api(`/api/conversations/${id}`)).body.execution_status === 'finished', 15_000);
      const items = (await ctx.s.api(`/api/conversations/${id}/events/search`)).body.items;
      await ws.until((f) => f.filter((e) => e.kind === 'LLMCompletionLogEvent').length >= items.filter((e: any) => e.kind === 'LLMCompletionLogEvent').length);
      await ws.close();
      return { items, streamed: ws.frames.filter((e) => e.kind === 'LLMCompletionLogEvent') };
    };

    const on = await run(true, 'print the token');
    const logs = on.items.filter((e: any) => e.kind === 'LLMCompletionLogEvent');
    // Two answers and the 429 in between (the SDK retried it inside one call: one log per answer).
    expect(logs).toHaveLength(2);
    expect(on.streamed.map((e) => e.id)).toEqual(logs.map((e: any) => e.id));
    for (const e of logs) {
      // The LLM's usage_id, 'default' when the request names none (as OpenHands).
      expect(e).toMatchObject({ source: 'environment', model_name: 'openai/scripted', usage_id: 'default' });
      expect(e.filename).toMatch(/^openai__scripted-\d+\.\d{3}-[0-9a-f]{4}\.json$/);
    }
    const first = JSON.parse(logs[0].log_data);
    expect(first).toMatchObject({ kwargs: { stream: false }, cost: 0, usage_summary: { prompt_tokens: 30, completion_tokens: 5 } });
    expect(first.response.tool_calls[0]).toMatchObject({ name: 'terminal' });
    expect(first.messages.at(-1)).toMatchObject({ role: 'user' });
    expect(typeof first.timestamp).toBe('number');
    expect(typeof first.latency_sec).toBe('number');
    // The second call's request carries the command's output: the secret is masked in the log too.
    expect(logs[1].log_data).toContain('<secret-hidden>');
    expect(JSON.stringify(on.items)).not.toContain('tok-value-9876');
    // Each log comes before what the agent made of that answer.
    const kinds = on.items.map((e: any) => e.kind);
    expect(kinds.indexOf('LLMCompletionLogEvent')).toBeLessThan(kinds.indexOf('ActionEvent'));

    const off = await run(false, 'quiet please');
    expect(off.items.some((e: any) => e.kind === 'LLMCompletionLogEvent')).toBe(false);
  });

  it('runs a real command from a model tool call, persists and streams every step', async () => {
    const wd = join(ctx.dir.path, 'project');
    ctx.llm.push(
      { content: 'Writing the file.', toolCalls: [{ name: 'terminal', arguments: { command: 'echo "hello from $GREETING_NAME" > out.txt && cat out.txt' } }], usage: { prompt_tokens: 12, completion_tokens: 7 } },
      (req) => {
        const tool = req.messages.find((m) => m.role === 'tool');
        // The agent masks secret values in what the model sees.
        expect(JSON.stringify(tool?.content)).toContain('hello from <secret-hidden>');
        return { toolCalls: [{ name: 'finish', arguments: { message: 'Wrote out.txt' } }], usage: { prompt_tokens: 20, completion_tokens: 3 } };
      },
    );
    const body = {
      workspace: { kind: 'LocalWorkspace', working_dir: wd },
      agent: { llm: { model: 'openai/scripted' }, tools: [{ name: 'terminal' }] },
      secrets: { GREETING_NAME: { kind: 'StaticSecret', value: 'secret-name-42' } },
    };
    const id = (await ctx.s.api('/api/conversations', { method: 'POST', body })).body.id;
    const ws = new FrameCollector(`${ctx.s.url.replace('http', 'ws')}/sockets/events/${id}`, { 'x-session-api-key': TEST_KEY });
    await ws.until(1);

    await ctx.s.api(`/api/conversations/${id}/events`, { method: 'POST', body: userText('write a greeting to out.txt', true) });
    await eventually(async () => (await ctx.s.api(`/api/conversations/${id}`)).body.execution_status === 'finished', 15_000);

    expect(readFileSync(join(wd, 'out.txt'), 'utf8')).toBe('hello from secret-name-42\n');
    const items = (await ctx.s.api(`/api/conversations/${id}/events/search`)).body.items;
    const kinds = items.map((e: any) => e.kind);
    expect(kinds).toContain('SystemPromptEvent');
    const action = items.find((e: any) => e.kind === 'ActionEvent' && e.tool_name === 'terminal');
    const observation = items.find((e: any) => e.kind === 'ObservationEvent' && e.action_id === action.id);
    expect(observation.tool_call_id).toBe(action.tool_call_id);
    expect(JSON.stringify(items)).not.toContain('secret-name-42');
    expect((await ctx.s.api(`/api/conversations/${id}/agent_final_response`)).body).toEqual({ response: 'Wrote out.txt' });

    // The socket saw the same persisted events, in order, after its snapshot.
    await ws.until((f) => f.filter((e) => e.kind !== 'ConversationStateUpdateEvent' || e.key !== 'full_state').length >= items.length);
    const streamed = ws.frames.filter((e) => e.key !== 'full_state').map((e) => e.id);
    expect(streamed).toEqual(items.map((e: any) => e.id));
    await ws.close();

    // Usage reported by the agent shows in the conversation info.
    const info = (await ctx.s.api(`/api/conversations/${id}`)).body;
    expect(info.stats.usage_to_metrics.default.accumulated_token_usage.prompt_tokens).toBe(32);
    expect(ctx.llm.requests.at(-1)?.headers['authorization']).toBe('Bearer sk-default');
  });
});
