// The OpenAI-compatible gateway offers each stored LLM profile as a model (`openhands_<name>`, as
// OpenHands 1.58 does) beside the configured `openhands_default`: a completion for a profile's model
// runs the agent on that profile's endpoint, model and key; a deleted profile is an unknown model.
import OpenAI from 'openai';
import { describe, expect, it } from 'vitest';
import { createAgent } from '../agent/agent.ts';
import { TEST_KEY, useOtherScriptedLlm, useRealAgentServer } from './test-support.ts';

const ctx = useRealAgentServer({ createAgent, overrides: () => ({ secretKey: 'gateway-profiles-key', tuning: { gatewayTimeoutMs: 5000 } }) });
const other = useOtherScriptedLlm();
const client = () => new OpenAI({ baseURL: `${ctx.s.url}/v1`, apiKey: TEST_KEY, maxRetries: 0 });
const SECRET = 'sk-gateway-profile-key';

describe('gateway models from LLM profiles', () => {
  it("lists stored profiles beside openhands_default and runs a profile's model on its endpoint with its key", async () => {
    await ctx.s.api('/api/profiles/fast', { method: 'POST', body: { llm: { model: 'openai/fast-model', base_url: other.llm.url, api_key: SECRET } } });
    expect((await client().models.list()).data.map((m) => m.id)).toEqual(['openhands_default', 'openhands_fast']);

    other.llm.push((req) => {
      expect(req.model).toBe('fast-model');
      expect(req.headers['authorization']).toBe(`Bearer ${SECRET}`);
      return { toolCalls: [{ name: 'finish', arguments: { message: 'from the fast profile' } }] };
    });
    const done = await client().chat.completions.create({ model: 'openhands_fast', messages: [{ role: 'user', content: 'hi' }] }).withResponse();
    expect(done.data).toMatchObject({ model: 'openhands_fast', choices: [{ message: { content: 'from the fast profile' } }] });
    const info = (await ctx.s.api(`/api/conversations/${done.response.headers.get('x-openhands-serverconversation-id')}`)).body;
    expect(info.agent.llm).toMatchObject({ model: 'openai/fast-model', base_url: other.llm.url, api_key: '**********' });
    expect(ctx.llm.requests).toHaveLength(0); // nothing went to the configured model

    await ctx.s.api('/api/profiles/fast', { method: 'DELETE' });
    expect((await client().models.list()).data.map((m) => m.id)).toEqual(['openhands_default']);
    await expect(client().chat.completions.create({ model: 'openhands_fast', messages: [{ role: 'user', content: 'hi' }] })).rejects.toMatchObject({ status: 404 });
  });
});
