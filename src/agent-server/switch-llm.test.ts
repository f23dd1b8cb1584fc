// POST /api/conversations/{id}/switch_llm over HTTP with the real agent: the next model call (also
// within a run) goes to the new model and endpoint with the right key, the key is never shown, the
// LLM_API_KEY rule holds, and the switch survives a restart. Two scripted model servers stand in for
// two providers.
import { describe, expect, it } from 'vitest';
import { join } from 'node:path';
import { createAgent } from '../agent/agent.ts';
import { eventually, startTestServer, useOtherScriptedLlm, useRealAgentServer, userText } from './test-support.ts';

const SECRET_KEY = 'switch-llm-test-secret-key';
const t = useRealAgentServer({ createAgent, overrides: () => ({ secretKey: SECRET_KEY }) });
const other = useOtherScriptedLlm();

const think = (thought: string) => ({ toolCalls: [{ name: 'think', arguments: { thought } }] });
const auth = (req: { headers: Record<string, unknown> }) => req.headers['authorization'];

async function create(): Promise<string> {
  const body = { workspace: { kind: 'LocalWorkspace', working_dir: join(t.dir.path, 'wd') }, agent: { llm: { model: 'openai/scripted' } } };
  return (await t.s.api('/api/conversations', { method: 'POST', body })).body.id;
}
const info = async (id: string) => (await t.s.api(`/api/conversations/${id}`)).body;
const until = (id: string, want: string) => eventually(async () => (await info(id)).execution_status === want, 15_000);
const events = async (id: string) => (await t.s.api(`/api/conversations/${id}/events/search?limit=100`)).body.items as any[];
const say = (id: string, text: string) => t.s.api(`/api/conversations/${id}/events`, { method: 'POST', body: userText(text, true) });
const switchLlm = (id: string, llm: unknown) => t.s.api(`/api/conversations/${id}/switch_llm`, { method: 'POST', body: { llm } });

describe('switch_llm', () => {
  it('takes effect at the next model call, also while running (no 409); the key reaches only its endpoint and is never shown; kept across a restart', async () => {
    const id = await create();
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    t.llm.push(async (req) => {
      expect(auth(req)).toBe('Bearer sk-default');
      await held;
      return { ...think('first step on the old model'), usage: { prompt_tokens: 10, completion_tokens: 1 } };
    });
    await say(id, 'work on it');
    await until(id, 'running');
    await eventually(() => t.llm.remaining() === 0);

    const r = await switchLlm(id, { model: 'openai/second', base_url: other.llm.url, api_key: 'sk-switched-secret', usage_id: 'agent' });
    expect(r).toEqual({ status: 200, body: { success: true } });
    const switched = await info(id);
    expect(switched.agent.llm).toMatchObject({ model: 'openai/second', base_url: other.llm.url, api_key: '**********', usage_id: 'agent' });
    const update = (await events(id)).find((e) => e.kind === 'ConversationStateUpdateEvent' && e.key === 'agent');
    expect(update.value.llm).toMatchObject({ model: 'openai/second', api_key: '**********' });

    other.llm.push((req) => {
      expect(req.model).toBe('second');
      expect(auth(req)).toBe('Bearer sk-switched-secret');
      expect(JSON.stringify(req.messages)).toContain('first step on the old model');
      return { content: 'from the second model', usage: { prompt_tokens: 20, completion_tokens: 2 } };
    });
    release();
    await until(id, 'finished');
    const done = await info(id);
    expect(done.stats.usage_to_metrics.agent).toMatchObject({ model_name: 'openai/second', accumulated_token_usage: { prompt_tokens: 30 } });
    expect(JSON.stringify([done, await events(id)])).not.toContain('sk-switched-secret');

    // The sealed key comes back after a restart.
    await t.s.close();
    t.s = await startTestServer(t.dir.path, { createAgent, secretKey: SECRET_KEY, llmDefaults: { model: 'openai/scripted', baseUrl: t.llm.url, apiKey: 'sk-default' } });
    expect((await info(id)).agent.llm).toMatchObject({ model: 'openai/second', base_url: other.llm.url, api_key: '**********' });
    other.llm.push((req) => {
      expect(auth(req)).toBe('Bearer sk-switched-secret');
      return { content: 'still the second model' };
    });
    await say(id, 'after the restart');
    await until(id, 'finished');
  });

  it('LLM_API_KEY goes only to the LLM_* endpoint: not to a base_url the switch chose, yes to the default endpoint', async () => {
    const id = await create();
    await switchLlm(id, { model: 'openai/elsewhere', base_url: other.llm.url });
    expect((await info(id)).agent.llm).not.toHaveProperty('api_key');
    other.llm.push((req) => {
      expect(req.model).toBe('elsewhere');
      expect(auth(req)).not.toBe('Bearer sk-default');
      return { content: 'no server key here' };
    });
    await say(id, 'one');
    await until(id, 'finished');

    await switchLlm(id, { model: 'openai/back-home' });
    t.llm.push((req) => {
      expect(req.model).toBe('back-home');
      expect(auth(req)).toBe('Bearer sk-default');
      return { content: 'the server key, at its own endpoint' };
    });
    await say(id, 'two');
    await until(id, 'finished');
    expect((await info(id)).agent.llm).toMatchObject({ model: 'openai/back-home', base_url: t.llm.url, api_key: '**********' });
  });

  it('answers 422 without an llm and 404 for an unknown conversation', async () => {
    const id = await create();
    const missing = await t.s.api(`/api/conversations/${id}/switch_llm`, { method: 'POST', body: {} });
    expect(missing.status).toBe(422);
    expect(missing.body.detail[0]).toMatchObject({ loc: ['body', 'llm'], type: 'missing' });
    const bad = await switchLlm(id, { model: 42 });
    expect(bad.status).toBe(422);
    expect(bad.body.detail[0].loc).toEqual(['body', 'llm', 'model']);
    expect((await switchLlm('00000000-0000-0000-0000-000000000000', { model: 'openai/x' })).status).toBe(404);
    expect((await info(id)).agent.llm.model).toBe('openai/scripted');
  });
});
