// A conversation started from an agent profile (`agent_profile_id`) with the real agent: its model
// call goes to the profile's LLM profile (endpoint, model, key), offers the profile's tools, carries
// its persona and suffix in the system prompt, and gets only the secrets it names; the conversation
// records the profile and revision that launched it. The profile's skills (the user's skills less its
// deny-list, which project skills obey too) reach the model and the start names them; its condenser
// condenses the model's view; its critic scores the finish through the classification service and
// asks for another iteration when the score is low. An unknown profile is a 404; dangling references
// are one 422 naming them all. The routing tool runs in route-task.test.ts.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { createAgent } from '../agent/agent.ts';
import { CRITIC_LABELS } from '../agent/critic/critic.ts';
import { eventually, useOtherScriptedLlm, useRealAgentServer } from './test-support.ts';

const t = useRealAgentServer({ createAgent, overrides: () => ({ secretKey: 'agent-profile-launch-key' }) });
const other = useOtherScriptedLlm();
const KEY = 'sk-agent-profile-llm-key';
const home = mkdtempSync(join(tmpdir(), 'agent-profile-home-'));
const oldHome = process.env['HOME'];
// The agent server's HOME holds the user skills (the catalog a profile selects from).
beforeAll(() => void (process.env['HOME'] = home));
afterAll(() => {
  process.env['HOME'] = oldHome;
  rmSync(home, { recursive: true, force: true });
});
function write(root: string, files: Record<string, string>): void {
  for (const [p, text] of Object.entries(files)) {
    mkdirSync(dirname(join(root, p)), { recursive: true });
    writeFileSync(join(root, p), text);
  }
}
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
    const r = await start({ agent_profile_id: profile.id, secrets: { ALLOWED: { kind: 'StaticSecret', value: 'a-value' }, OTHER: { kind: 'StaticSecret', value: 'b-value' } }, initial_message: { role: 'user', content: [{ type: 'text', text: 'review this' }] } });
    expect(r.status).toBe(201);
    expect(r.body.launched_agent_profile).toEqual({ agent_profile_id: profile.id, revision: 1, secret_refs: ['ALLOWED'], llm_profile_ref: null });
    expect(r.body.agent.llm).toMatchObject({ model: 'openai/review-model', base_url: other.llm.url, api_key: '**********', usage_id: 'default' });
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

  it("loads the profile's skills less its deny-list, reports them in the start, and condenses as its condenser says", async () => {
    write(home, {
      '.agents/skills/kept-skill/SKILL.md': '---\nname: kept-skill\ndescription: KEPT-DESCRIPTION for reviews\n---\nKept body.\n',
      '.openhands/microagents/dropped-skill.md': 'DROPPED-CONTENT always on\n',
    });
    const wd = join(t.dir.path, 'wd');
    write(wd, { '.agents/skills/proj-off/SKILL.md': '---\nname: proj-off\ndescription: PROJ-OFF-DESCRIPTION\n---\nx\n', '.openhands/microagents/proj-on.md': 'PROJ-ON-CONTENT always on\n' });
    await t.s.api('/api/profiles/condensing', { method: 'POST', body: { llm: { model: 'openai/condensing-model', base_url: other.llm.url, api_key: KEY } } });
    const body = { llm_profile_ref: 'condensing', tools: [{ name: 'terminal' }], disabled_skills: ['dropped-skill', 'proj-off'], public_skills: [], condenser: { max_size: 100, keep_first: 1, max_tokens: 1000 } };
    await t.s.api('/api/agent-profiles/skilled', { method: 'POST', body });
    const profile = (await t.s.api('/api/agent-profiles/skilled')).body.profile;

    const preview = (await t.s.api('/api/agent-profiles/skilled/materialize', { method: 'POST' })).body;
    expect(preview).toMatchObject({ valid: true, errors: [], disabled_skills: ['dropped-skill', 'proj-off'], public_skills: [], resolved_skills: ['kept-skill'] });
    expect(preview.resolved_settings.condenser).toEqual({ kind: 'LLMSummarizingCondenser', max_size: 100, keep_first: 1, max_tokens: 1000, minimum_progress: 0.1, hard_context_reset_max_retries: 5, hard_context_reset_context_scaling: 0.8 });

    const think = (thought: string, prompt: number) => ({ toolCalls: [{ name: 'think', arguments: { thought } }], usage: { prompt_tokens: prompt } });
    other.llm.push((req) => {
      const system = JSON.stringify(req.messages[0]!.content);
      expect(system).toContain('KEPT-DESCRIPTION');
      expect(system).toContain('PROJ-ON-CONTENT');
      expect(system).not.toContain('DROPPED-CONTENT');
      expect(system).not.toContain('PROJ-OFF-DESCRIPTION');
      expect(req.tools?.map((x) => x.function.name)).toContain('invoke_skill');
      return think('first look', 900);
    }, think('a long look', 5000), (req) => {
      // The condenser's summary request: no tools, the forgotten events to summarize.
      expect(req.tools).toBeUndefined();
      expect(JSON.stringify(req.messages)).toContain('first look');
      return { content: 'PROFILE-SUMMARY' };
    }, (req) => {
      expect(JSON.stringify(req.messages)).toContain('PROFILE-SUMMARY');
      expect(JSON.stringify(req.messages)).not.toContain('first look');
      return { toolCalls: [{ name: 'finish', arguments: { message: 'condensed' } }], usage: { prompt_tokens: 300 } };
    });
    const r = await start({ agent_profile_id: profile.id, initial_message: { role: 'user', content: [{ type: 'text', text: 'look around' }] } });
    expect(r.status).toBe(201);
    // Project skills asked for (1.58's resolver sets load_project_skills: the workspace is not known at launch).
    expect(r.body.agent.agent_context).toMatchObject({ load_user_skills: false, load_project_skills: true, disabled_skills: ['dropped-skill', 'proj-off'] });
    // The start names the skills it loaded, the workspace's included (records carry them with include_skills=true, as OpenHands 1.58).
    const full = (await t.s.api(`/api/conversations/${r.body.id}?include_skills=true`)).body;
    expect(full.agent.agent_context.skills.map((k: any) => k.name)).toEqual(['kept-skill', 'proj-on']);
    expect(r.body.agent.condenser).toMatchObject({ kind: 'LLMSummarizingCondenser', max_size: 100, max_tokens: 1000 });
    await eventually(async () => (await t.s.api(`/api/conversations/${r.body.id}`)).body.execution_status === 'finished', 15_000);
    const events = (await t.s.api(`/api/conversations/${r.body.id}/events/search?limit=100`)).body.items;
    expect(events.filter((e: any) => e.kind === 'Condensation').map((e: any) => e.summary)).toEqual(['PROFILE-SUMMARY']);
    // As OpenHands: the LLM profile's LLM counts under `default`, its condenser's copy under `condenser`.
    const usage = (await t.s.api(`/api/conversations/${r.body.id}`)).body.stats.usage_to_metrics;
    expect(Object.keys(usage).sort()).toEqual(['condenser', 'default']);
    expect(usage.default.accumulated_token_usage.prompt_tokens).toBe(900 + 5000 + 300);
    rmSync(join(home, '.agents'), { recursive: true, force: true });
    rmSync(join(home, '.openhands'), { recursive: true, force: true });
  });

  it('refuses what it cannot apply: a condenser the agent cannot use, a critic without its service, a routing tool without its LLMs (422)', async () => {
    await t.s.api('/api/profiles/plain', { method: 'POST', body: { llm: { model: 'openai/plain', base_url: other.llm.url, api_key: KEY } } });
    const launch = async (name: string, extra: Record<string, unknown>) => {
      await t.s.api(`/api/agent-profiles/${name}`, { method: 'POST', body: { llm_profile_ref: 'plain', ...extra } });
      return start({ agent_profile_id: (await t.s.api(`/api/agent-profiles/${name}`)).body.profile.id });
    };
    const badCondenser = await launch('cramped', { condenser: { max_size: 20, keep_first: 12 } });
    expect(badCondenser.status).toBe(422);
    expect(badCondenser.body.detail[0].msg).toMatch(/^Agent profile 'cramped': condenser: max_size \/\/ 2 - keep_first - 1 must be positive/);
    const critic = await launch('judged', { verification: { critic_enabled: true } });
    expect(critic.status).toBe(422);
    expect(critic.body.detail[0].msg).toMatch(/verification\.critic_server_url: the critic needs the URL of its classification service/);
    // The routing tool with its meta-profile: a meta-profile routing to an LLM profile not stored is a 422; resolved, the tool is added last.
    await t.s.api('/api/meta-profiles/router', { method: 'POST', body: { classifier_model: 'plain', classes: [{ description: 'all', model: 'gone-llm' }] } });
    const dangling = await launch('routed', { enable_classify_and_switch_llm_tool: true, meta_profile_ref: 'router' });
    expect(dangling.status).toBe(422);
    expect(dangling.body.detail.map((d: any) => d.msg)).toEqual(["Agent profile 'routed': LLM profile(s) routed to by the meta-profile not found: gone-llm"]);
    await t.s.api('/api/meta-profiles/router', { method: 'POST', body: { classifier_model: 'plain', classes: [{ description: 'all', model: 'plain' }] } });
    const routed = await start({ agent_profile_id: (await t.s.api('/api/agent-profiles/routed')).body.profile.id });
    expect(routed.status).toBe(201);
    expect(routed.body.agent.tools.at(-1)).toEqual({ name: 'ClassifyAndSwitchLLMTool', params: { active_meta_profile: 'router', meta_profile: { classifier_model: 'plain', classes: [{ description: 'all', model: 'plain' }], prompt_template: null, model_table: null } } });
    await t.s.api(`/api/conversations/${routed.body.id}`, { method: 'DELETE' });
    // A plain start's agent.critic is checked the same, before anything is stored (422 at the field);
    // its key is taken as 1.58 takes it, sealed: never stored in the request nor shown (null, as 1.58 shows it).
    const badMode = await start({ agent: { llm: { model: 'openai/plain' }, critic: { kind: 'APIBasedCritic', server_url: 'http://127.0.0.1:9/vllm', api_key: 'sk-critic-inline-secret', mode: 'sometimes' } } });
    expect(badMode.status).toBe(422);
    expect(badMode.body.detail[0]).toMatchObject({ loc: ['body', 'agent', 'critic', 'mode'] });
    const keyed = await start({ agent: { llm: { model: 'openai/plain' }, critic: { kind: 'APIBasedCritic', server_url: 'http://127.0.0.1:9/vllm', api_key: 'sk-critic-inline-secret' } } });
    expect(keyed.status).toBe(201);
    expect(keyed.body.agent.critic).toMatchObject({ server_url: 'http://127.0.0.1:9/vllm', api_key: null });
    expect(JSON.stringify((await t.s.api('/api/conversations/search')).body)).not.toContain('sk-critic-inline-secret');
    await t.s.api(`/api/conversations/${keyed.body.id}`, { method: 'DELETE' });
    // A meta-profile named without the tool is not used, as OpenHands: the launch starts.
    const idle = await launch('unrouted', { meta_profile_ref: 'no-such-router', condenser: { enabled: false } });
    expect(idle.status).toBe(201);
    expect(idle.body.agent.condenser ?? null).toBeNull();
    await t.s.api(`/api/conversations/${idle.body.id}`, { method: 'DELETE' });
    expect(other.llm.requests).toHaveLength(0);
  });

  it("scores the finish with the profile's critic and refines a low score, up to max_refinement_iterations", async () => {
    await t.s.api('/api/profiles/judged-llm', { method: 'POST', body: { llm: { model: 'openai/judged-model', base_url: other.llm.url, api_key: KEY } } });
    const verification = { critic_enabled: true, critic_server_url: other.llm.url, critic_model_name: 'scripted-critic', enable_iterative_refinement: true, critic_threshold: 0.6, max_refinement_iterations: 1 };
    await t.s.api('/api/agent-profiles/judged', { method: 'POST', body: { llm_profile_ref: 'judged-llm', tools: [{ name: 'terminal' }], verification } });
    const profile = (await t.s.api('/api/agent-profiles/judged')).body.profile;
    const probs = (p: Record<string, number>) => CRITIC_LABELS.map((l) => p[l] ?? 0.01);
    other.llm.pushClassification(probs({ success: 0.3, incomplete_implementation: 0.9 }), probs({ success: 0.2 }));
    other.llm.push({ toolCalls: [{ name: 'finish', arguments: { message: 'first try' } }] }, (req) => {
      // The follow-up of the one refinement allowed, naming what the critic saw.
      const last = JSON.stringify(req.messages.at(-1));
      expect(last).toContain('The task appears incomplete (iteration 1, predicted success likelihood: 30.0%)');
      expect(last).toContain('Potential agent issues: Incomplete Implementation (90%)');
      return { toolCalls: [{ name: 'finish', arguments: { message: 'second try' } }] };
    });
    const r = await start({ agent_profile_id: profile.id, initial_message: { role: 'user', content: [{ type: 'text', text: 'write the parser' }] } });
    expect(r.status).toBe(201);
    // Shown as 1.58 shows it: every field, defaults filled in, no key.
    expect(r.body.agent.critic).toMatchObject({ kind: 'APIBasedCritic', server_url: other.llm.url, api_key: null, model_name: 'scripted-critic', tokenizer_name: 'Qwen/Qwen3-4B-Instruct-2507', mode: 'finish_and_message', iterative_refinement: { success_threshold: 0.6, max_iterations: 1 }, issue_threshold: 0.75 });
    await eventually(async () => (await t.s.api(`/api/conversations/${r.body.id}`)).body.execution_status === 'finished', 15_000);
    // Two finishes scored (the second too low as well, but the one iteration is spent); the service got the model, the key and the trace.
    expect(other.llm.classifications.map((c) => [c.model, c.headers['authorization']])).toEqual([['scripted-critic', `Bearer ${KEY}`], ['scripted-critic', `Bearer ${KEY}`]]);
    const first = other.llm.classifications[0]!.input;
    expect(first).toMatch(/^<\|im_start\|>system\n[\s\S]*# Tools[\s\S]*<tools>\n\{"type": "function", "function": \{"name": "terminal"/);
    expect(first).toContain('<|im_start|>user\nwrite the parser<|im_end|>');
    expect(other.llm.classifications[1]!.input).toContain('The task appears incomplete (iteration 1');
    const events = (await t.s.api(`/api/conversations/${r.body.id}/events/search?limit=100`)).body.items;
    const finishes = events.filter((e: any) => e.kind === 'ActionEvent' && e.tool_name === 'finish');
    expect(finishes.map((e: any) => e.critic_result?.score)).toEqual([0.3, 0.2]);
    expect(finishes[0].critic_result.message).toMatch(/^Success: 0\.30; \{"incomplete_implementation": 0\.9, "success": 0\.3, /);
    expect(finishes[0].critic_result.metadata.categorized_features.agent_behavioral_issues).toEqual([{ name: 'incomplete_implementation', display_name: 'Incomplete Implementation', probability: 0.9 }]);
    expect(events.filter((e: any) => e.kind === 'MessageEvent' && e.source === 'user')).toHaveLength(2);
    // The iteration is counted in agent_state (recorded before the follow-up), as 1.58 counts it.
    expect(events.filter((e: any) => e.kind === 'ConversationStateUpdateEvent' && e.key === 'agent_state').map((e: any) => e.value)).toEqual([{ iterative_refinement_iteration: 1 }]);
    expect((await t.s.api(`/api/conversations/${r.body.id}`)).body.agent_state).toEqual({ iterative_refinement_iteration: 1 });
  });

  it('an ACP profile launches with the whole skill catalog (1.58: user and public skills, no selection), project skills left to the ACP server', async () => {
    write(home, { '.agents/skills/acp-catalog-skill/SKILL.md': '---\nname: acp-catalog-skill\ndescription: ACP-CATALOG-DESCRIPTION\n---\nBody.\n' });
    write(join(t.dir.path, 'wd'), { '.agents/skills/acp-proj-skill/SKILL.md': '---\nname: acp-proj-skill\ndescription: x\n---\nx\n' });
    await t.s.api('/api/agent-profiles/acp-skilled', { method: 'POST', body: { agent_kind: 'acp', acp_server: 'custom', acp_command: 'no-such-acp-server acp' } });
    const profile = (await t.s.api('/api/agent-profiles/acp-skilled')).body.profile;
    const preview = (await t.s.api('/api/agent-profiles/acp-skilled/materialize', { method: 'POST' })).body;
    expect(preview).toMatchObject({ agent_kind: 'acp', valid: true, disabled_skills: [], public_skills: null });
    expect(preview.resolved_skills).toContain('acp-catalog-skill');
    expect(preview.resolved_skills).not.toContain('acp-proj-skill');
    expect(preview.resolved_settings.agent_context).toMatchObject({ load_project_skills: false, skills: expect.arrayContaining([expect.objectContaining({ name: 'acp-catalog-skill', description: 'ACP-CATALOG-DESCRIPTION' })]) });

    const r = await start({ agent_profile_id: profile.id });
    expect(r.status, JSON.stringify(r.body)).toBe(201);
    expect(r.body.agent.kind).toBe('ACPAgent');
    expect(r.body.agent.agent_context.load_project_skills).toBe(false);
    const agent = (await t.s.api(`/api/conversations/${r.body.id}?include_skills=true`)).body.agent;
    expect(agent.agent_context.skills.map((x: any) => x.name)).toEqual(preview.resolved_skills);
  });
});
