// The real agent (src/agent) behind the agent server, against the scripted model server: a real
// shell command runs in the workspace, every step is persisted and streamed, usage reaches the info.
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createAgent } from '../agent/agent.ts';
import { startScriptedLlm, type ScriptedLlm } from '../testing/scripted-llm/server.ts';
import { eventually, FrameCollector, startTestServer, tempDir, TEST_KEY, userText, type TestServer } from './test-support.ts';

let llm: ScriptedLlm;
let dir: ReturnType<typeof tempDir>;
let s: TestServer;

beforeAll(async () => (llm = await startScriptedLlm()));
afterAll(() => llm.close());
beforeEach(async () => {
  dir = tempDir();
  s = await startTestServer(dir.path, { createAgent, llmDefaults: { model: 'openai/scripted', baseUrl: llm.url, apiKey: 'sk-default' } });
});
afterEach(async () => {
  await s.close();
  dir.remove();
});

describe('agent server with the real agent', () => {
  it('runs a real command from a model tool call, persists and streams every step', async () => {
    const wd = join(dir.path, 'project');
    llm.push(
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
      secrets: { GREETING_NAME: 'secret-name-42' },
    };
    const id = (await s.api('/api/conversations', { method: 'POST', body })).body.id;
    const ws = new FrameCollector(`${s.url.replace('http', 'ws')}/sockets/events/${id}`, { 'x-session-api-key': TEST_KEY });
    await ws.until(1);

    await s.api(`/api/conversations/${id}/events`, { method: 'POST', body: userText('write a greeting to out.txt', true) });
    await eventually(async () => (await s.api(`/api/conversations/${id}`)).body.execution_status === 'finished', 15_000);

    expect(readFileSync(join(wd, 'out.txt'), 'utf8')).toBe('hello from secret-name-42\n');
    const items = (await s.api(`/api/conversations/${id}/events/search`)).body.items;
    const kinds = items.map((e: any) => e.kind);
    expect(kinds).toContain('SystemPromptEvent');
    const action = items.find((e: any) => e.kind === 'ActionEvent' && e.tool_name === 'terminal');
    const observation = items.find((e: any) => e.kind === 'ObservationEvent' && e.action_id === action.id);
    expect(observation.tool_call_id).toBe(action.tool_call_id);
    expect(JSON.stringify(items)).not.toContain('secret-name-42');
    expect((await s.api(`/api/conversations/${id}/agent_final_response`)).body).toEqual({ response: 'Wrote out.txt' });

    // The socket saw the same persisted events, in order, after its snapshot.
    await ws.until((f) => f.filter((e) => e.kind !== 'ConversationStateUpdateEvent' || e.key !== 'full_state').length >= items.length);
    const streamed = ws.frames.filter((e) => e.key !== 'full_state').map((e) => e.id);
    expect(streamed).toEqual(items.map((e: any) => e.id));
    await ws.close();

    // Usage reported by the agent shows in the conversation info.
    const info = (await s.api(`/api/conversations/${id}`)).body;
    expect(info.stats.usage_to_metrics.agent.accumulated_token_usage.prompt_tokens).toBe(32);
    expect(llm.requests.at(-1)?.headers['authorization']).toBe('Bearer sk-default');
  });
});
