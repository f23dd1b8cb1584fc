// POST /api/conversations/{id}/switch_profile over HTTP with the real agent: the conversation's next
// model call goes to the profile's base_url and model with the profile's (sealed) key, the
// usage is the profile model's, the key is never shown; unknown conversation 404 before the
// profile's 404, a bad name 400, a missing body 422. Two scripted model servers stand in for two
// providers.
import { describe, expect, it } from 'vitest';
import { join } from 'node:path';
import { createAgent } from '../agent/agent.ts';
import { eventually, useOtherScriptedLlm, useRealAgentServer, userText } from './test-support.ts';

const t = useRealAgentServer({ createAgent, overrides: () => ({ secretKey: 'switch-profile-test-key' }) });
const other = useOtherScriptedLlm();

const SECRET = 'sk-profile-only-key';
const auth = (req: { headers: Record<string, unknown> }) => req.headers['authorization'];
async function create(): Promise<string> {
  const body = { workspace: { kind: 'LocalWorkspace', working_dir: join(t.dir.path, 'wd') }, agent: { llm: { model: 'openai/scripted' } } };
  return (await t.s.api('/api/conversations', { method: 'POST', body })).body.id;
}
const info = async (id: string) => (await t.s.api(`/api/conversations/${id}`)).body;
const until = (id: string, want: string) => eventually(async () => (await info(id)).execution_status === want, 15_000);
const say = (id: string, text: string) => t.s.api(`/api/conversations/${id}/events`, { method: 'POST', body: userText(text, true) });
const switchProfile = (id: string, body: unknown) => t.s.api(`/api/conversations/${id}/switch_profile`, { method: 'POST', body });

describe('switch_profile', () => {
  it("sends the conversation's next model call to the profile's endpoint, model and key", async () => {
    const id = await create();
    t.llm.push((req) => {
      expect(req.model).toBe('scripted');
      expect(auth(req)).toBe('Bearer sk-default');
      return { content: 'from the default model' };
    });
    await say(id, 'first');
    await until(id, 'finished');

    const saved = await t.s.api('/api/profiles/second', { method: 'POST', body: { llm: { model: 'openai/second-model', base_url: other.llm.url, api_key: SECRET, temperature: 0.5 } } });
    expect(saved.status).toBe(201);
    expect(await switchProfile(id, { profile_name: 'second' })).toEqual({ status: 200, body: { success: true } });
    expect((await info(id)).agent.llm).toMatchObject({ model: 'openai/second-model', base_url: other.llm.url, api_key: '**********', usage_id: 'profile:second' });

    other.llm.push((req) => {
      expect(req.model).toBe('second-model');
      expect(auth(req)).toBe(`Bearer ${SECRET}`);
      expect(JSON.stringify(req.messages)).toContain('from the default model');
      return { content: 'from the profile model', usage: { prompt_tokens: 7, completion_tokens: 1 } };
    });
    await say(id, 'second');
    await until(id, 'finished');
    const done = await info(id);
    // Booked under the profile's usage id, as OpenHands keys an LLM's metrics; the first model's calls stay under `agent`.
    expect(done.stats.usage_to_metrics['profile:second']).toMatchObject({ model_name: 'openai/second-model', accumulated_token_usage: { prompt_tokens: 7 } });
    expect(done.stats.usage_to_metrics.agent).toMatchObject({ model_name: 'openai/scripted' });
    expect(done.stats.usage_to_metrics.agent.accumulated_token_usage.prompt_tokens).not.toBe(7);
    const events = (await t.s.api(`/api/conversations/${id}/events/search?limit=100`)).body.items;
    expect(JSON.stringify([done, events])).not.toContain(SECRET);

    // Saving the profile again does not change the conversation: it took the profile's LLM when it switched.
    await t.s.api('/api/profiles/second', { method: 'POST', body: { llm: { model: 'openai/changed', base_url: other.llm.url } } });
    other.llm.push((req) => {
      expect(req.model).toBe('second-model');
      return { content: 'still the switched model' };
    });
    await say(id, 'third');
    await until(id, 'finished');
  });

  it('answers 404 for an unknown conversation (before the profile), 404 for an unknown profile, 400 for a bad name, 422 without a body', async () => {
    const id = await create();
    expect((await switchProfile('00000000-0000-0000-0000-000000000000', { profile_name: 'nope' })).status).toBe(404);
    expect(await switchProfile(id, { profile_name: 'nope' })).toEqual({ status: 404, body: { detail: "Profile 'nope' not found" } });
    expect((await switchProfile(id, { profile_name: '../etc' })).status).toBe(400);
    const missing = await switchProfile(id, {});
    expect(missing.status).toBe(422);
    expect(missing.body.detail[0]).toMatchObject({ loc: ['body', 'profile_name'], type: 'missing' });
    expect((await switchProfile('not-a-uuid', { profile_name: 'x' })).status).toBe(422);
    expect((await info(id)).agent.llm.model).toBe('openai/scripted');
  });
});
