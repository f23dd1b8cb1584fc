// The model-routing tool (route_task_to_model) of an agent profile launched with
// `enable_classify_and_switch_llm_tool`, through the agent server's HTTP API with the real agent and
// two scripted model servers: the model calls the tool, the classifier (an LLM profile) picks a class
// of the meta-profile, and the next step goes to that class's LLM profile (its endpoint, its key);
// the events (stored, and on the events socket) show the action, the switch (the agent's state
// update) and the observation; the classifier's usage is its own bucket, the routed steps' their
// profile's. Misses are error observations, bad arguments an AgentErrorEvent; a meta-profile deleted
// after the launch routes with the launch's copy; a prompt template routes by profile name.
import { describe, expect, it } from 'vitest';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createAgent } from '../agent/agent.ts';
import { eventually, FrameCollector, TEST_KEY, useOtherScriptedLlm, useRealAgentServer } from './test-support.ts';

const t = useRealAgentServer({ createAgent, overrides: () => ({ secretKey: 'route-task-test-key' }) });
const other = useOtherScriptedLlm();
const PLANNER_KEY = 'sk-route-planner-key';
const CODER_KEY = 'sk-route-coder-key';

const start = (extra: Record<string, unknown>) =>
  t.s.api('/api/conversations', { method: 'POST', body: { workspace: { kind: 'LocalWorkspace', working_dir: join(t.dir.path, 'wd') }, ...extra } });
const text = (s: string) => ({ role: 'user', content: [{ type: 'text', text: s }] });
const events = async (id: string) => (await t.s.api(`/api/conversations/${id}/events/search?limit=100`)).body.items as any[];
const finished = (id: string) => eventually(async () => ['finished', 'error', 'stuck'].includes((await t.s.api(`/api/conversations/${id}`)).body.execution_status), 15_000);

/** planner (the first scripted server) starts and classifies; coder (the other one) takes backend work. */
async function routedProfile(classes: { description: string; model: string }[]): Promise<string> {
  await t.s.api('/api/profiles/planner', { method: 'POST', body: { llm: { model: 'openai/planner-model', base_url: t.llm.url, api_key: PLANNER_KEY } } });
  await t.s.api('/api/profiles/coder', { method: 'POST', body: { llm: { model: 'openai/coder-model', base_url: other.llm.url, api_key: CODER_KEY } } });
  await t.s.api('/api/meta-profiles/router', { method: 'POST', body: { classifier_model: 'planner', classes } });
  await t.s.api('/api/agent-profiles/routed', { method: 'POST', body: { llm_profile_ref: 'planner', tools: [{ name: 'terminal' }], enable_classify_and_switch_llm_tool: true, meta_profile_ref: 'router' } });
  return (await t.s.api('/api/agent-profiles/routed')).body.profile.id;
}

describe('the model-routing tool (route_task_to_model)', () => {
  it("classifies the task, switches to the class's LLM profile for the next step, and accounts the classifier apart", async () => {
    const id = await routedProfile([{ description: 'UI work: pages, styles, screenshots', model: 'planner' }, { description: 'Backend code: services, databases', model: 'coder' }]);
    t.llm.push((req) => {
      expect(req.model).toBe('planner-model');
      const route = req.tools?.find((x) => x.function.name === 'route_task_to_model');
      expect(route?.function.parameters).toMatchObject({ type: 'object' });
      return { toolCalls: [{ name: 'route_task_to_model', arguments: { summary: 'route the task' } }] };
    });
    // The classifier: the planner profile, no tools, the classes numbered and the recent messages.
    t.llm.push((req) => {
      expect(req.headers['authorization']).toBe(`Bearer ${PLANNER_KEY}`);
      expect(req.tools ?? []).toEqual([]);
      expect(req.messages[0]!.role).toBe('system');
      expect(String(req.messages[0]!.content)).toContain('1. UI work: pages, styles, screenshots\n2. Backend code: services, databases');
      expect(String(req.messages[1]!.content)).toContain('user: add an index to the orders table');
      return { content: '2', usage: { prompt_tokens: 40, completion_tokens: 1, cost: 0.25 } };
    });
    // The next step goes to the coder profile: its endpoint, model and key, with the whole history.
    other.llm.push((req) => {
      expect(req.model).toBe('coder-model');
      expect(req.headers['authorization']).toBe(`Bearer ${CODER_KEY}`);
      expect(JSON.stringify(req.messages)).toContain("switched to LLM profile 'coder'");
      return { toolCalls: [{ name: 'finish', arguments: { message: 'indexed' } }], usage: { prompt_tokens: 90, completion_tokens: 5 } };
    });
    const r = await start({ agent_profile_id: id });
    expect(r.status).toBe(201);
    expect(r.body.agent.tools.map((x: any) => x.name)).toEqual(['terminal', 'ClassifyAndSwitchLLMTool']);
    // A client on the events socket sees the action, the switch and the observation as they happen.
    const ws = new FrameCollector(`${t.s.url.replace('http', 'ws')}/sockets/events/${r.body.id}`, { 'x-session-api-key': TEST_KEY });
    await ws.opened;
    await t.s.api(`/api/conversations/${r.body.id}/events`, { method: 'POST', body: { ...text('add an index to the orders table'), run: true } });
    const frames = await ws.until((f) => f.some((e) => e.kind === 'ObservationEvent' && e.tool_name === 'finish'), 15_000);
    await ws.close();
    const seen = frames.filter((e) => (e.kind === 'ActionEvent' || e.kind === 'ObservationEvent') && e.tool_name === 'route_task_to_model' || (e.kind === 'ConversationStateUpdateEvent' && e.key === 'agent'));
    expect(seen.map((e) => e.action?.kind ?? e.observation?.kind ?? e.value.llm.model)).toEqual(['ClassifyAndSwitchLLMAction', 'openai/coder-model', 'ClassifyAndSwitchLLMObservation']);
    await finished(r.body.id);
    const info = (await t.s.api(`/api/conversations/${r.body.id}`)).body;
    expect(info.execution_status).toBe('finished');

    const items = await events(r.body.id);
    const prompt = items.find((e) => e.kind === 'SystemPromptEvent');
    expect(prompt.tools.map((x: any) => x.kind)).toContain('ClassifyAndSwitchLLMTool');
    const action = items.find((e) => e.kind === 'ActionEvent' && e.tool_name === 'route_task_to_model');
    expect(action.action).toEqual({ kind: 'ClassifyAndSwitchLLMAction' });
    const obs = items.find((e) => e.kind === 'ObservationEvent' && e.tool_name === 'route_task_to_model');
    expect(obs.observation).toMatchObject({ kind: 'ClassifyAndSwitchLLMObservation', is_error: false, chosen_class: 'Backend code: services, databases', model: 'coder', active_model: 'openai/coder-model' });
    // The switch, as switch_profile shows it: the agent's state update, its key masked, before the observation.
    const switched = items.findIndex((e) => e.kind === 'ConversationStateUpdateEvent' && e.key === 'agent' && e.value.llm.model === 'openai/coder-model');
    expect(switched).toBeGreaterThan(items.indexOf(action));
    expect(switched).toBeLessThan(items.indexOf(obs));
    expect(items[switched].value.llm).toMatchObject({ usage_id: 'profile:coder', base_url: other.llm.url, api_key: '**********' });
    expect(info.agent.llm).toMatchObject({ model: 'openai/coder-model', base_url: other.llm.url });
    // The classifier's call is its own usage bucket, under its model: no stats update of its own, in the next one.
    const stats = items.filter((e) => e.kind === 'ConversationStateUpdateEvent' && e.key === 'stats');
    expect(stats.some((e) => items.indexOf(e) > items.indexOf(action) && items.indexOf(e) < items.indexOf(obs))).toBe(false);
    expect(stats.at(-1).value.usage_to_metrics['classifier:planner']).toMatchObject({ accumulated_cost: 0.25 });
    // The steps on the profile routed to are that profile's bucket (switch_profile's usage id).
    expect(info.stats.usage_to_metrics['profile:coder']).toMatchObject({ model_name: 'openai/coder-model', accumulated_token_usage: { prompt_tokens: 90, completion_tokens: 5 } });
    expect(info.stats.usage_to_metrics['classifier:planner']).toMatchObject({ model_name: 'openai/planner-model', accumulated_cost: 0.25, accumulated_token_usage: { prompt_tokens: 40, completion_tokens: 1 } });
    const all = JSON.stringify({ info, items });
    expect(all).not.toContain(PLANNER_KEY);
    expect(all).not.toContain(CODER_KEY);
  });

  it('answers bad arguments with an AgentErrorEvent, and a classifier miss or a target profile gone with error observations', async () => {
    await t.s.api('/api/profiles/temp', { method: 'POST', body: { llm: { model: 'openai/temp-model', base_url: other.llm.url } } });
    const id = await routedProfile([{ description: 'UI work', model: 'planner' }, { description: 'Backend code', model: 'coder' }, { description: 'Throwaway', model: 'temp' }]);
    const r = await start({ agent_profile_id: id });
    expect(r.status).toBe(201);
    // The LLM profile routed to is deleted after the launch: the tool says so when it picks it. The
    // meta-profile is deleted too: the copy the launch carried routes instead.
    expect((await t.s.api('/api/profiles/temp', { method: 'DELETE' })).status).toBe(200);
    expect((await t.s.api('/api/meta-profiles/router', { method: 'DELETE' })).status).toBe(200);
    t.llm.push({ toolCalls: [{ name: 'route_task_to_model', arguments: { profile_name: 'coder' } }] });
    t.llm.push({ toolCalls: [{ name: 'route_task_to_model', arguments: {} }] });
    t.llm.push({ content: 'I would say 9' });
    t.llm.push({ toolCalls: [{ name: 'route_task_to_model', arguments: {} }] });
    t.llm.push({ content: '3' });
    t.llm.push((req) => {
      // Nothing switched: the planner still answers.
      expect(req.model).toBe('planner-model');
      return { toolCalls: [{ name: 'finish', arguments: { message: 'stayed' } }] };
    });
    await t.s.api(`/api/conversations/${r.body.id}/events`, { method: 'POST', body: { ...text('tidy the repository'), run: true } });
    await finished(r.body.id);
    const items = await events(r.body.id);
    const errors = items.filter((e) => e.kind === 'AgentErrorEvent');
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatchObject({ tool_name: 'route_task_to_model', error: expect.stringMatching(/profile_name/) });
    const observations = items.filter((e) => e.kind === 'ObservationEvent' && e.tool_name === 'route_task_to_model').map((e) => e.observation);
    expect(observations).toEqual([
      expect.objectContaining({ is_error: true, content: [expect.objectContaining({ text: expect.stringMatching(/picked no valid category \(reply: "I would say 9"\)/) })] }),
      expect.objectContaining({ is_error: true, chosen_class: 'Throwaway', model: 'temp', content: [expect.objectContaining({ text: "Target LLM profile 'temp' was not found." })] }),
    ]);
    expect(observations.some((o) => o.active_model != null)).toBe(false);
    expect(items.some((e) => e.kind === 'ConversationStateUpdateEvent' && e.key === 'agent')).toBe(false);
    expect((await t.s.api(`/api/conversations/${r.body.id}`)).body.agent.llm.model).toBe('openai/planner-model');
  });

  it("counts the classifier's cost against the run's budget (max_budget_per_run)", async () => {
    const id = await routedProfile([{ description: 'all', model: 'coder' }]);
    t.llm.push({ toolCalls: [{ name: 'route_task_to_model', arguments: {} }], usage: { prompt_tokens: 10, completion_tokens: 1, cost: 0.05 } });
    t.llm.push({ content: '1', usage: { prompt_tokens: 40, completion_tokens: 1, cost: 0.25 } });
    const r = await start({ agent_profile_id: id, max_budget_per_run: 0.2, initial_message: text('anything') });
    expect(r.status).toBe(201);
    await finished(r.body.id);
    // The switch happened, but the classifier's call spent the budget: no step on the coder profile.
    const items = await events(r.body.id);
    expect(items.find((e) => e.kind === 'ConversationErrorEvent')).toMatchObject({ code: 'MaxBudgetReached', detail: expect.stringMatching(/spent 0\.3000 USD/) });
    expect(other.llm.requests).toHaveLength(0);
  });

  it("keeps the classifier's own key out of the events when its endpoint echoes it", async () => {
    const JUDGE_KEY = 'sk-route-judge-key';
    await t.s.api('/api/profiles/judge', { method: 'POST', body: { llm: { model: 'openai/judge-model', base_url: t.llm.url, api_key: JUDGE_KEY } } });
    await t.s.api('/api/profiles/planner', { method: 'POST', body: { llm: { model: 'openai/planner-model', base_url: t.llm.url, api_key: PLANNER_KEY } } });
    await t.s.api('/api/profiles/coder', { method: 'POST', body: { llm: { model: 'openai/coder-model', base_url: other.llm.url, api_key: CODER_KEY } } });
    await t.s.api('/api/meta-profiles/judged', { method: 'POST', body: { classifier_model: 'judge', classes: [{ description: 'all', model: 'coder' }] } });
    await t.s.api('/api/agent-profiles/judged', { method: 'POST', body: { llm_profile_ref: 'planner', enable_classify_and_switch_llm_tool: true, meta_profile_ref: 'judged', tools: [] } });
    const id = (await t.s.api('/api/agent-profiles/judged')).body.profile.id;
    t.llm.push({ toolCalls: [{ name: 'route_task_to_model', arguments: {} }] });
    t.llm.push((req) => {
      expect(req.headers['authorization']).toBe(`Bearer ${JUDGE_KEY}`);
      return { status: 401, errorMessage: `Incorrect API key provided: ${JUDGE_KEY}` };
    });
    t.llm.push({ toolCalls: [{ name: 'finish', arguments: { message: 'unrouted' } }] });
    const r = await start({ agent_profile_id: id, initial_message: text('anything') });
    await finished(r.body.id);
    const items = await events(r.body.id);
    const obs = items.find((e) => e.kind === 'ObservationEvent' && e.tool_name === 'route_task_to_model').observation;
    expect(obs).toMatchObject({ is_error: true, content: [expect.objectContaining({ text: expect.stringMatching(/^Classifier call failed: LLMAuthenticationError: .*\*{10}/) })] });
    expect(JSON.stringify(items)).not.toContain(JUDGE_KEY);
  });

  it("routes directly with a meta-profile's prompt template: the classifier names the LLM profile", async () => {
    await t.s.api('/api/profiles/planner', { method: 'POST', body: { llm: { model: 'openai/planner-model', base_url: t.llm.url, api_key: PLANNER_KEY } } });
    await t.s.api('/api/profiles/coder', { method: 'POST', body: { llm: { model: 'openai/coder-model', base_url: other.llm.url, api_key: CODER_KEY } } });
    await t.s.api('/api/meta-profiles/direct', { method: 'POST', body: { classifier_model: 'planner', prompt_template: 'Models:\n{{ model_table }}\nTask:\n{{instance_text}}\nAnswer {"model": <name>}.', model_table: 'coder: backend work' } });
    await t.s.api('/api/agent-profiles/direct', { method: 'POST', body: { llm_profile_ref: 'planner', enable_classify_and_switch_llm_tool: true, meta_profile_ref: 'direct', tools: [] } });
    const id = (await t.s.api('/api/agent-profiles/direct')).body.profile.id;
    t.llm.push({ toolCalls: [{ name: 'route_task_to_model', arguments: {} }] });
    t.llm.push((req) => {
      expect(req.messages.map((m) => m.role)).toEqual(['system', 'user']);
      expect(req.messages[1]!.content).toBe('Models:\ncoder: backend work\nTask:\nuser: migrate the schema\nAnswer {"model": <name>}.');
      return { content: '```json\n{"model": "CODER"}\n```' };
    });
    other.llm.push((req) => {
      expect(req.model).toBe('coder-model');
      return { toolCalls: [{ name: 'finish', arguments: { message: 'migrated' } }] };
    });
    const r = await start({ agent_profile_id: id, initial_message: text('migrate the schema') });
    expect(r.status).toBe(201);
    await finished(r.body.id);
    const obs = (await events(r.body.id)).find((e) => e.kind === 'ObservationEvent' && e.tool_name === 'route_task_to_model').observation;
    expect(obs).toMatchObject({ is_error: false, chosen_class: 'model: coder', model: 'coder', active_model: 'openai/coder-model' });
  });

  it("agent_settings (1.58's start form) with the routing fields: the tool routes with the named meta-profile, or the inline one", async () => {
    await routedProfile([{ description: 'Backend code: services, databases', model: 'coder' }]);
    const settings = { agent_kind: 'openhands', llm: { model: 'openai/planner-model', base_url: t.llm.url, api_key: PLANNER_KEY }, tools: [{ name: 'terminal' }], enable_classify_and_switch_llm_tool: true, condenser: { enabled: false } };
    for (const routing of [{ active_meta_profile: 'router' }, { active_meta_profile: 'gone', meta_profile: { classifier_model: 'planner', classes: [{ description: 'Backend code: services, databases', model: 'coder' }] } }]) {
      t.llm.push({ toolCalls: [{ name: 'route_task_to_model', arguments: {} }] }, { content: '1' });
      other.llm.push((req) => {
        expect([req.model, req.headers['authorization']]).toEqual(['coder-model', `Bearer ${CODER_KEY}`]);
        return { toolCalls: [{ name: 'finish', arguments: { message: 'routed' } }] };
      });
      const r = await start({ agent_settings: { ...settings, ...routing } });
      expect(r.status, JSON.stringify(r.body)).toBe(201);
      expect(r.body.agent.tools).toEqual([{ name: 'terminal', params: {} }, { name: 'ClassifyAndSwitchLLMTool', params: expect.objectContaining({ active_meta_profile: routing.active_meta_profile }) }]);
      expect(r.body.agent.llm.api_key).toBe('**********');
      await t.s.api(`/api/conversations/${r.body.id}/events`, { method: 'POST', body: { ...text('add an index'), run: true } });
      await finished(r.body.id);
      const obs = (await events(r.body.id)).find((e) => e.kind === 'ObservationEvent' && e.tool_name === 'route_task_to_model');
      expect(obs.observation).toMatchObject({ is_error: false, model: 'coder', active_model: 'openai/coder-model' });
    }
    // Without the switch no routing tool; the default tools when none are named.
    const plain = await start({ agent_settings: { llm: { model: 'openai/planner-model' }, active_meta_profile: 'router' } });
    expect(plain.body.agent.tools.map((x: any) => x.name)).toEqual(['terminal', 'file_editor', 'task_tracker']);
    const bad = await start({ agent_settings: { ...settings, enable_classify_and_switch_llm_tool: 'yes', unknown_field: 1 } });
    expect(bad.status).toBe(422);
    expect(bad.body.detail.map((d: any) => d.loc.join('.')).sort()).toEqual(['body.agent_settings.enable_classify_and_switch_llm_tool', 'body.agent_settings.unknown_field']);
  });

  it("agent_settings.meta_profile_llms (1.58's inline LLMs): classifier and target taken from them before the stored profiles, their keys sealed, masked, never answered, and kept over a restart", async () => {
    const CLS_KEY = 'sk-inline-classifier-key';
    const INLINE_CODER_KEY = 'sk-inline-coder-key';
    // A stored profile of the same name as an inline LLM: the inline one wins (as 1.58).
    await t.s.api('/api/profiles/coder', { method: 'POST', body: { llm: { model: 'openai/stored-coder', base_url: t.llm.url, api_key: CODER_KEY } } });
    const settings = {
      llm: { model: 'openai/planner-model', base_url: t.llm.url, api_key: PLANNER_KEY },
      tools: [{ name: 'terminal' }],
      enable_classify_and_switch_llm_tool: true,
      condenser: { enabled: false },
      meta_profile: { classifier_model: 'cls', classes: [{ description: 'Backend code: services, databases', model: 'coder' }] },
      meta_profile_llms: {
        cls: { model: 'openai/classifier-model', base_url: t.llm.url, api_key: CLS_KEY, unknown_to_the_llm: 1 },
        coder: { model: 'openai/coder-model', base_url: other.llm.url, api_key: INLINE_CODER_KEY, aws_secret_access_key: 'aws-inline-secret' },
      },
    };
    const r = await start({ agent_settings: settings });
    expect(r.status, JSON.stringify(r.body)).toBe(201);
    const route = r.body.agent.tools.find((x: any) => x.name === 'ClassifyAndSwitchLLMTool');
    expect(route.params.meta_profile_llms.cls).toMatchObject({ model: 'openai/classifier-model', api_key: '**********' });
    expect(route.params.meta_profile_llms.cls).not.toHaveProperty('unknown_to_the_llm');
    expect(route.params.meta_profile_llms.coder).toMatchObject({ model: 'openai/coder-model', api_key: '**********', aws_secret_access_key: '**********' });
    const id = r.body.id;
    const shown = async () => JSON.stringify([(await t.s.api(`/api/conversations/${id}`)).body, (await t.s.api('/api/conversations/search')).body, await (await fetch(`${t.s.url}/api/conversations/${id}`, { headers: { 'x-session-api-key': TEST_KEY, 'x-expose-secrets': 'plaintext' } })).json()]);
    for (const key of [CLS_KEY, INLINE_CODER_KEY, 'aws-inline-secret']) expect(JSON.stringify(r.body) + (await shown())).not.toContain(key);

    // Restarted on the same data: the keys come back from the sealed secrets; none is in the database in plain text.
    await t.restart();
    const data = join(t.dir.path, 'data');
    const db = Buffer.concat(readdirSync(data).filter((f) => f.startsWith('agent-server.db')).map((f) => readFileSync(join(data, f))));
    for (const key of [CLS_KEY, INLINE_CODER_KEY, 'aws-inline-secret']) expect(db.includes(key)).toBe(false);

    t.llm.push({ toolCalls: [{ name: 'route_task_to_model', arguments: {} }] });
    t.llm.push((req) => {
      expect([req.model, req.headers['authorization']]).toEqual(['classifier-model', `Bearer ${CLS_KEY}`]);
      return { content: '1' };
    });
    other.llm.push((req) => {
      expect([req.model, req.headers['authorization']]).toEqual(['coder-model', `Bearer ${INLINE_CODER_KEY}`]);
      return { toolCalls: [{ name: 'finish', arguments: { message: 'routed inline' } }] };
    });
    await t.s.api(`/api/conversations/${id}/events`, { method: 'POST', body: { ...text('add an index'), run: true } });
    await finished(id);
    const items = await events(id);
    const obs = items.find((e) => e.kind === 'ObservationEvent' && e.tool_name === 'route_task_to_model');
    expect(obs.observation).toMatchObject({ is_error: false, chosen_class: 'Backend code: services, databases', model: 'coder', active_model: 'openai/coder-model' });
    const info = (await t.s.api(`/api/conversations/${id}`)).body;
    expect(info.agent.llm).toMatchObject({ model: 'openai/coder-model', usage_id: 'profile:coder', api_key: '**********' });
    expect(Object.keys(info.stats.usage_to_metrics).sort()).toEqual(['classifier:cls', 'default', 'profile:coder']);
    for (const key of [CLS_KEY, INLINE_CODER_KEY]) expect(JSON.stringify(items) + (await shown())).not.toContain(key);
  });

  it('meta_profile_llms with a prompt template: the classifier may name an inline LLM; bad entries are refused (422) where they stand, keys not repeated', async () => {
    const settings = {
      llm: { model: 'openai/planner-model', base_url: t.llm.url, api_key: PLANNER_KEY },
      tools: [],
      enable_classify_and_switch_llm_tool: true,
      condenser: { enabled: false },
      meta_profile: { classifier_model: 'cls', prompt_template: 'Pick one of {{ model_table }} for {{instance_text}}', model_table: 'fast, deep' },
      meta_profile_llms: { cls: { model: 'openai/classifier-model', base_url: t.llm.url }, deep: { model: 'openai/deep-model', base_url: other.llm.url, api_key: 'sk-deep' } },
    };
    t.llm.push({ toolCalls: [{ name: 'route_task_to_model', arguments: {} }] }, { content: '{"model": "Deep"}' });
    other.llm.push((req) => {
      expect([req.model, req.headers['authorization']]).toEqual(['deep-model', 'Bearer sk-deep']);
      return { toolCalls: [{ name: 'finish', arguments: { message: 'deep' } }] };
    });
    const r = await start({ agent_settings: settings, initial_message: text('prove the lemma') });
    expect(r.status, JSON.stringify(r.body)).toBe(201);
    await finished(r.body.id);
    const obs = (await events(r.body.id)).find((e) => e.kind === 'ObservationEvent' && e.tool_name === 'route_task_to_model').observation;
    expect(obs).toMatchObject({ is_error: false, chosen_class: 'model: deep', model: 'deep', active_model: 'openai/deep-model' });

    const bad = await start({ agent_settings: { ...settings, meta_profile_llms: { a: { temperature: 'hot', api_key: 'sk-bad-entry' }, b: 5 } } });
    expect(bad.status).toBe(422);
    expect(bad.body.detail.map((d: any) => d.loc.join('.')).sort()).toEqual(['body.agent_settings.meta_profile_llms.a.model', 'body.agent_settings.meta_profile_llms.a.temperature', 'body.agent_settings.meta_profile_llms.b']);
    expect(JSON.stringify(bad.body)).not.toContain('sk-bad-entry');
    // The same in an `agent`'s routing tool params (1.58's tool takes them there too).
    const direct = await start({ agent: { llm: settings.llm, tools: [{ name: 'ClassifyAndSwitchLLMTool', params: { meta_profile_llms: { a: { api_key: 'sk-bad-entry' } } } }] } });
    expect(direct.status).toBe(422);
    expect(direct.body.detail.map((d: any) => d.loc.join('.'))).toEqual(['body.agent.tools.0.params.meta_profile_llms.a.model']);
  });
});
