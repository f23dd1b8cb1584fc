// A conversation started from an agent profile (`agent_profile_id`) with the real agent: its model
// call goes to the profile's LLM profile (endpoint, model, key), offers the profile's tools, carries
// its persona and suffix in the system prompt, and gets only the secrets it names; the conversation
// records the profile and revision that launched it. An unknown profile is a 404, an LLM profile
// gone a 400.
import { describe, expect, it } from 'vitest';
import { join } from 'node:path';
import { createAgent } from '../agent/agent.ts';
import { eventually, useOtherScriptedLlm, useRealAgentServer } from './test-support.ts';

const t = useRealAgentServer({ createAgent, overrides: () => ({ secretKey: 'agent-profile-launch-key' }) });
const other = useOtherScriptedLlm();
const KEY = 'sk-agent-profile-llm-key';
const start = (extra: Record<string, unknown>) =>
  t.s.api('/api/conversations', { method: 'POST', body: { workspace: { kind: 'LocalWorkspace', working_dir: join(t.dir.path, 'wd') }, ...extra } });

describe('starting a conversation from an agent profile', () => {
  it("runs the profile's LLM, tools, persona and secrets, and records the launch", async () => {
    await t.s.api('/api/profiles/reviewing', { method: 'POST', body: { llm: { model: 'openai/review-model', base_url: other.llm.url, api_key: KEY } } });
    await t.s.api('/api/agent-profiles/reviewer', { method: 'POST', body: { llm_profile_ref: 'reviewing', persona: 'You are a meticulous reviewer.', system_message_suffix: 'Answer tersely.', tools: [{ name: 'terminal' }], secret_refs: ['ALLOWED'] } });
    await t.s.api('/api/agent-profiles/reviewer', { method: 'POST', body: { llm_profile_ref: 'reviewing', persona: 'You are a meticulous reviewer.', system_message_suffix: 'Answer tersely.', tools: [{ name: 'terminal' }], secret_refs: ['ALLOWED'] } });
    const profile = (await t.s.api('/api/agent-profiles/reviewer')).body.profile;

    other.llm.push((req) => {
      expect(req.model).toBe('review-model');
      expect(req.headers['authorization']).toBe(`Bearer ${KEY}`);
      expect(req.tools?.map((x) => x.function.name)).toEqual(expect.arrayContaining(['terminal', 'finish']));
      expect(req.tools?.map((x) => x.function.name)).not.toContain('file_editor');
      const system = JSON.stringify(req.messages[0]!.content);
      expect(system).toContain('You are a meticulous reviewer.');
      expect(system).toContain('Answer tersely.');
      return { toolCalls: [{ name: 'finish', arguments: { message: 'reviewed' } }] };
    });
    const r = await start({ agent_profile_id: profile.id, secrets: { ALLOWED: 'a-value', OTHER: 'b-value' }, initial_message: { role: 'user', content: [{ type: 'text', text: 'review this' }] } });
    expect(r.status).toBe(201);
    expect(r.body.launched_agent_profile).toEqual({ agent_profile_id: profile.id, revision: 1, secret_refs: ['ALLOWED'], llm_profile_ref: null });
    expect(r.body.agent.llm).toMatchObject({ model: 'openai/review-model', base_url: other.llm.url, api_key: '**********' });
    expect(Object.keys(r.body.secret_registry.secret_sources)).toEqual(['ALLOWED']);
    await eventually(async () => (await t.s.api(`/api/conversations/${r.body.id}`)).body.execution_status === 'finished', 15_000);
    expect(JSON.stringify((await t.s.api(`/api/conversations/${r.body.id}`)).body)).not.toContain(KEY);
  });

  it('answers 404 for an unknown profile id and 422 naming every dangling reference at once', async () => {
    expect((await start({ agent_profile_id: '00000000-0000-4000-8000-000000000000' })).status).toBe(404);
    await t.s.api('/api/agent-profiles/orphan', { method: 'POST', body: { llm_profile_ref: 'missing-llm', mcp_server_refs: ['no-server'], enable_classify_and_switch_llm_tool: true, meta_profile_ref: 'no-router' } });
    const id = (await t.s.api('/api/agent-profiles/orphan')).body.profile.id;
    const r = await start({ agent_profile_id: id });
    expect(r.status).toBe(422);
    expect(r.body.detail.map((d: any) => [d.loc, d.msg])).toEqual([
      [['body', 'agent_profile_id'], "Agent profile 'orphan': LLM profile 'missing-llm' not found"],
      [['body', 'agent_profile_id'], "Agent profile 'orphan': MCP server(s) not configured: no-server"],
      [['body', 'agent_profile_id'], "Agent profile 'orphan': Meta-profile 'no-router' not found"],
    ]);
  });
});
