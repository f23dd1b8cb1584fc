// /api/agent-profiles over HTTP: `default` seeded and active at the first list (its LLM the active
// LLM profile), saved (id kept and revision bumped on overwrite), read with OpenHands' defaults,
// renamed (the id, so the active pointer, stays), activated by id, deleted (the active one falls
// back to a reseeded default); kept across a restart; an LLM profile an agent profile names is not
// deleted and its rename follows; ACP profiles (agent_kind acp) are saved, listed and previewed; the launch preview (materialize) of a
// stored profile or a draft reports dangling references in its body, secrets masked; the meta-profile
// of the routing tool, the condenser and the critic as a launch applies or refuses them.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startTestServer, tempDir, type TestServer } from '../test-support.ts';

let dir: ReturnType<typeof tempDir>;
let s: TestServer;
const start = () => startTestServer(dir.path, { secretKey: 'agent-profiles-test-key' });
beforeEach(async () => {
  dir = tempDir();
  s = await start();
});
afterEach(async () => {
  await s.close();
  dir.remove();
});
const A = '/api/agent-profiles';

describe('/api/agent-profiles', () => {
  it('seeds and activates default, saves, reads, renames, activates and deletes; survives a restart', async () => {
    await s.api('/api/profiles/fast', { method: 'POST', body: { llm: { model: 'openai/fast' } } });
    await s.api('/api/profiles/fast/activate', { method: 'POST' });
    const first = await s.api(A);
    expect(first.status).toBe(200);
    const seeded = first.body.profiles[0];
    expect(first.body).toEqual({ profiles: [{ id: expect.stringMatching(/^[0-9a-f-]{36}$/), name: 'default', agent_kind: 'openhands', revision: 0, llm_profile_ref: 'fast', mcp_server_refs: null }], active_agent_profile_id: seeded.id });
    expect((await s.api(`${A}/default`)).body.profile).toMatchObject({ schema_version: 4, agent: 'CodeActAgent', tools: null, disabled_skills: [], condenser: { condenser_kind: 'llm_summarizing', max_size: 240 }, tool_concurrency_limit: 1 });

    const saved = await s.api(`${A}/reviewer`, { method: 'POST', body: { llm_profile_ref: 'fast', persona: 'You review.', tools: [{ name: 'terminal', params: {} }], id: 'ignored', name: 'ignored' } });
    expect(saved).toEqual({ status: 201, body: { name: 'reviewer', message: "Agent profile 'reviewer' saved" } });
    const reviewer = (await s.api(`${A}/reviewer`)).body.profile;
    expect(reviewer).toMatchObject({ name: 'reviewer', revision: 0, persona: 'You review.', tools: [{ name: 'terminal', params: {} }] });
    expect(reviewer.id).not.toBe('ignored');
    await s.api(`${A}/reviewer`, { method: 'POST', body: { llm_profile_ref: 'fast', persona: 'You review carefully.' } });
    expect((await s.api(`${A}/reviewer`)).body.profile).toMatchObject({ id: reviewer.id, revision: 1, persona: 'You review carefully.' });

    expect(await s.api(`${A}/${reviewer.id}/activate`, { method: 'POST' })).toEqual({ status: 200, body: { id: reviewer.id, message: `Agent profile '${reviewer.id}' activated`, agent_settings_applied: false } });
    expect((await s.api(`${A}/reviewer/rename`, { method: 'POST', body: { new_name: 'critic' } })).body).toEqual({ name: 'critic', message: "Agent profile 'reviewer' renamed to 'critic'" });
    expect((await s.api(A)).body.active_agent_profile_id).toBe(reviewer.id);

    await s.close();
    s = await start();
    expect((await s.api(A)).body).toMatchObject({ active_agent_profile_id: reviewer.id, profiles: [{ name: 'critic' }, { name: 'default' }] });

    // The active one deleted: default is active again.
    expect((await s.api(`${A}/critic`, { method: 'DELETE' })).body).toEqual({ name: 'critic', message: "Agent profile 'critic' deleted" });
    expect((await s.api(A)).body.active_agent_profile_id).toBe(seeded.id);
    expect((await s.api(`${A}/critic`, { method: 'DELETE' })).status).toBe(200);
  });

  it("limits GET /api/settings/secrets?agent_profile_id= to the profile's secret_refs (404 for an unknown id)", async () => {
    for (const name of ['ALLOWED', 'OTHER']) await s.api('/api/settings/secrets', { method: 'PUT', body: { name, value: `v-${name}` } });
    await s.api(`${A}/scoped`, { method: 'POST', body: { llm_profile_ref: 'x', secret_refs: ['ALLOWED'] } });
    await s.api(`${A}/open`, { method: 'POST', body: { llm_profile_ref: 'x' } });
    const id = async (name: string) => (await s.api(`${A}/${name}`)).body.profile.id;
    expect((await s.api(`/api/settings/secrets?agent_profile_id=${await id('scoped')}`)).body.secrets.map((x: any) => x.name)).toEqual(['ALLOWED']);
    expect((await s.api(`/api/settings/secrets?agent_profile_id=${await id('open')}`)).body.secrets.map((x: any) => x.name).sort()).toEqual(['ALLOWED', 'OTHER']);
    expect((await s.api('/api/settings/secrets?agent_profile_id=nope')).status).toBe(404);
  });

  it('guards the LLM profiles they name: no delete (409), a rename follows', async () => {
    await s.api('/api/profiles/fast', { method: 'POST', body: { llm: { model: 'openai/fast' } } });
    await s.api(`${A}/coder`, { method: 'POST', body: { llm_profile_ref: 'fast' } });
    expect(await s.api('/api/profiles/fast', { method: 'DELETE' })).toEqual({ status: 409, body: { detail: 'LLM profile is referenced by 1 agent profile(s): coder' } });
    await s.api('/api/profiles/fast/rename', { method: 'POST', body: { new_name: 'quick' } });
    expect((await s.api(`${A}/coder`)).body.profile.llm_profile_ref).toBe('quick');
    await s.api(`${A}/coder`, { method: 'DELETE' });
    expect((await s.api('/api/profiles/quick', { method: 'DELETE' })).status).toBe(200);
  });

  it('answers 404, 409 and 422 where OpenHands refuses', async () => {
    expect(await s.api(`${A}/nope`)).toEqual({ status: 404, body: { detail: "Agent profile 'nope' not found" } });
    expect((await s.api(`${A}/nope/rename`, { method: 'POST', body: { new_name: 'x' } })).status).toBe(404);
    expect(await s.api(`${A}/not-an-id/activate`, { method: 'POST' })).toEqual({ status: 404, body: { detail: "Agent profile with id 'not-an-id' not found" } });
    const missing = await s.api(`${A}/x`, { method: 'POST', body: {} });
    expect(missing.status).toBe(422);
    expect(missing.body.detail[0].loc).toEqual(['openhands', 'llm_profile_ref']);
    expect((await s.api(`${A}/x`, { method: 'POST', body: { llm_profile_ref: 'a', surprise: 1 } })).status).toBe(422);
    // The condenser and critic settings are checked as OpenHands checks them.
    const bad = await s.api(`${A}/x`, { method: 'POST', body: { llm_profile_ref: 'a', condenser: { condenser_kind: 'llm_summarizing', max_size: 5 }, verification: { critic_threshold: 2, critic_mode: 'sometimes' } } });
    expect(bad.status).toBe(422);
    expect(bad.body.detail.map((d: any) => d.loc)).toEqual(expect.arrayContaining([['openhands', 'condenser', 'max_size'], ['openhands', 'verification', 'critic_threshold'], ['openhands', 'verification', 'critic_mode']]));
    expect((await s.api(`${A}/-x`, { method: 'POST', body: { llm_profile_ref: 'a' } })).body.detail[0].loc).toEqual(['path', 'name']);
    await s.api(`${A}/a`, { method: 'POST', body: { llm_profile_ref: 'a' } });
    await s.api(`${A}/b`, { method: 'POST', body: { llm_profile_ref: 'a' } });
    expect((await s.api(`${A}/a/rename`, { method: 'POST', body: { new_name: 'b' } })).body).toEqual({ detail: "Agent profile 'b' already exists" });
    // An ACP profile takes no LLM profile reference (1.58 forbids foreign fields), located under "acp".
    const mongrel = await s.api(`${A}/acp`, { method: 'POST', body: { agent_kind: 'acp', llm_profile_ref: 'a' } });
    expect(mongrel.status).toBe(422);
    expect(mongrel.body.detail[0].loc).toEqual(['acp', 'llm_profile_ref']);
    expect((await s.api(`${A}/acp`, { method: 'POST', body: { agent_kind: 'acp', acp_server: 'nope' } })).body.detail[0].loc).toEqual(['acp', 'acp_server']);
  });

  it('keeps ACP profiles: saved with 1.58 defaults, listed without an LLM profile, previewed with their credential channels', async () => {
    expect(await s.api(`${A}/coder`, { method: 'POST', body: { agent_kind: 'acp', acp_server: 'codex', acp_model: 'gpt-5.5', acp_command: "codex-acp --flag 'two words'", secret_refs: ['OPENAI_API_KEY'] } })).toEqual({ status: 201, body: { name: 'coder', message: "Agent profile 'coder' saved" } });
    const stored = (await s.api(`${A}/coder`)).body.profile;
    expect(stored).toMatchObject({ agent_kind: 'acp', acp_server: 'codex', acp_model: 'gpt-5.5', acp_session_mode: null, acp_prompt_timeout: 1800, acp_startup_timeout: 90, acp_args: null, mcp_server_refs: null, revision: 0 });
    expect(stored).not.toHaveProperty('llm_profile_ref');
    const listed = (await s.api(A)).body.profiles.find((p: any) => p.name === 'coder');
    expect(listed).toEqual({ id: stored.id, name: 'coder', agent_kind: 'acp', revision: 0, llm_profile_ref: null, mcp_server_refs: null });

    const preview = (await s.api(`${A}/coder/materialize`, { method: 'POST' })).body;
    expect(preview).toMatchObject({ agent_kind: 'acp', valid: true, errors: [], llm_profile_ref: null, acp_api_key_secret_name: 'OPENAI_API_KEY', acp_base_url_secret_name: 'OPENAI_BASE_URL', acp_file_secret_names: ['CODEX_AUTH_JSON'], secret_refs: ['OPENAI_API_KEY'] });
    expect(preview.resolved_settings).toMatchObject({ kind: 'ACPAgent', acp_server: 'codex', acp_model: 'gpt-5.5', acp_command: ['codex-acp', '--flag', 'two words'], acp_args: [] });

    const bad = (await s.api(`${A}/coder/materialize`, { method: 'POST', body: { profile: { agent_kind: 'acp', acp_server: 'custom', acp_command: 'run "unclosed' } } })).body;
    expect(bad).toMatchObject({ valid: false, resolved_settings: null });
    expect(bad.errors).toEqual([expect.stringMatching(/^Failed to build agent settings: acp_command cannot be split/)]);
    const custom = (await s.api(`${A}/coder/materialize`, { method: 'POST', body: { profile: { agent_kind: 'acp', acp_server: 'custom' } } })).body;
    expect(custom.errors).toEqual([expect.stringMatching(/acp_command is required when acp_server='custom'/)]);
  });

  it('previews a launch (materialize): dangling references reported, a draft under the path name, secrets masked', async () => {
    const M = (name: string, body?: unknown) => s.api(`${A}/${name}/materialize`, { method: 'POST', ...(body !== undefined ? { body } : {}) });
    await s.api(`${A}/coder`, { method: 'POST', body: { llm_profile_ref: 'fast', mcp_server_refs: ['web', 'nope'], secret_refs: ['A'], tools: [{ name: 'terminal', params: {} }, { name: 'no_such_tool', params: {} }] } });
    const dangling = await M('coder');
    expect(dangling.status).toBe(200);
    expect(dangling.body).toMatchObject({
      agent_kind: 'openhands', valid: false, unusable_tools: ['no_such_tool'], llm_profile_ref: 'fast', llm_profile_resolved: false, llm_api_key_set: false,
      mcp_server_refs: ['web', 'nope'], resolved_mcp_config_keys: [], dangling_mcp_server_refs: ['web', 'nope'], secret_refs: ['A'], resolved_settings: null,
    });
    expect(dangling.body.errors).toEqual(['Tool(s) this server cannot run: no_such_tool', "LLM profile 'fast' not found", 'MCP server(s) not configured: web, nope']);

    await s.api('/api/profiles/fast', { method: 'POST', body: { llm: { model: 'openai/fast', api_key: 'sk-materialize-secret' } } });
    await s.api('/api/settings', { method: 'PATCH', body: { agent_settings_diff: { mcp_config: { web: { url: 'http://127.0.0.1:9/mcp', headers: { Authorization: 'Bearer mcp-materialize-secret' } } } } } });
    const oneLeft = (await M('coder')).body;
    expect(oneLeft).toMatchObject({ valid: false, llm_profile_resolved: true, llm_api_key_set: true, resolved_mcp_config_keys: ['web'], dangling_mcp_server_refs: ['nope'] });
    // The launch agrees: the same dangling server refuses the start.
    const id = (await s.api(`${A}/coder`)).body.profile.id;
    expect((await s.api('/api/conversations', { method: 'POST', body: { agent_profile_id: id, workspace: { kind: 'LocalWorkspace', working_dir: dir.path } } })).status).toBe(422);

    // A draft is previewed under the path's name, whatever it says; the stored profile is untouched.
    const draft = await M('coder', { profile: { name: 'other', llm_profile_ref: 'fast', mcp_server_refs: ['web'], tools: [{ name: 'terminal', params: {} }], persona: 'You code.' } });
    expect(draft.body).toMatchObject({ valid: true, errors: [], unusable_tools: [], llm_profile_resolved: true, llm_api_key_set: true, resolved_mcp_config_keys: ['web'], dangling_mcp_server_refs: [], secret_refs: null });
    expect(draft.body.resolved_settings).toMatchObject({
      llm: { model: 'openai/fast', api_key: '**********' }, tools: [{ name: 'terminal', params: {} }], agent_context: { system_message_suffix: 'You code.' },
      mcp_config: { mcpServers: { web: { url: 'http://127.0.0.1:9/mcp', headers: { Authorization: '**********' } } } },
    });
    expect(JSON.stringify(draft.body)).not.toMatch(/materialize-secret/);
    expect((await M('coder')).body.valid).toBe(false);
    expect((await M('unsaved', { profile: { llm_profile_ref: 'fast' } })).body).toMatchObject({ valid: true, mcp_server_refs: null, resolved_mcp_config_keys: ['web'] });
    expect((await s.api(`${A}/unsaved`)).status).toBe(404);

    expect(await M('missing')).toEqual({ status: 404, body: { detail: "Agent profile 'missing' not found" } });
    expect(await M('missing', { profile: null })).toEqual({ status: 404, body: { detail: "Agent profile 'missing' not found" } });
    const locs = async (body: unknown) => (await M('coder', body)).body.detail.map((d: any) => d.loc);
    expect(await locs({ profile: { surprise: 1 } })).toEqual(expect.arrayContaining([['openhands', 'llm_profile_ref'], ['openhands', 'surprise']]));
    expect(await locs({ profile: 3 })).toEqual([['body', 'profile']]);
    expect(await locs({ x: 1 })).toEqual([['body', 'x']]);
    expect((await M('coder', { profile: { agent_kind: 'acp', acp_server: 'claude-code' } })).body).toMatchObject({ agent_kind: 'acp', valid: true, acp_api_key_secret_name: 'ANTHROPIC_API_KEY' });

    // An LLM profile that is stored but cannot be used (its provider connection is gone): reported, as the launch refuses it.
    await s.api('/api/profiles/broken', { method: 'POST', body: { llm: { model: 'openai/x', provider_connection_id: 'feedfacefeedfacefeedfacefeedface' } } });
    const broken = await M('coder', { profile: { llm_profile_ref: 'broken' } });
    expect(broken.body).toMatchObject({ valid: false, llm_profile_resolved: false, resolved_settings: null });
    expect(broken.body.errors).toEqual([expect.stringMatching(/^Failed to build agent settings: Profile 'broken' references provider connection 'feedface/)]);
  });

  it('previews the meta-profile, the condenser and the critic as a launch applies or refuses them', async () => {
    const M = (profile: Record<string, unknown>) => s.api(`${A}/draft/materialize`, { method: 'POST', body: { profile: { llm_profile_ref: 'fast', ...profile } } }).then((r) => r.body);
    await s.api('/api/profiles/fast', { method: 'POST', body: { llm: { model: 'openai/fast' } } });
    // The meta-profile counts only with the routing tool on (as OpenHands).
    expect(await M({ meta_profile_ref: 'router' })).toMatchObject({ valid: true, meta_profile_ref: 'router', dangling_meta_profile_ref: null });
    const noMeta = await M({ enable_classify_and_switch_llm_tool: true, meta_profile_ref: 'router', mcp_server_refs: ['nope'] });
    expect(noMeta).toMatchObject({ valid: false, dangling_meta_profile_ref: 'router', dangling_meta_profile_llm_refs: [], llm_profile_resolved: true });
    expect(noMeta.errors).toEqual(['MCP server(s) not configured: nope', "Meta-profile 'router' not found"]);
    await s.api('/api/meta-profiles/router', { method: 'POST', body: { classifier_model: 'fast', classes: [{ description: 'ui', model: 'vision' }, { description: 'rest', model: 'fast' }] } });
    const noLlm = await M({ enable_classify_and_switch_llm_tool: true, meta_profile_ref: 'router' });
    expect(noLlm).toMatchObject({ valid: false, dangling_meta_profile_ref: null, dangling_meta_profile_llm_refs: ['vision'], errors: ['LLM profile(s) routed to by the meta-profile not found: vision'] });
    await s.api('/api/profiles/vision', { method: 'POST', body: { llm: { model: 'openai/vision' } } });
    const routed = await M({ enable_classify_and_switch_llm_tool: true, meta_profile_ref: 'router' });
    // Resolved, the launch adds the routing tool last, with the meta-profile it routes with.
    expect(routed).toMatchObject({ valid: true, errors: [], dangling_meta_profile_llm_refs: [] });
    expect(routed.resolved_settings.tools.at(-1)).toEqual({ name: 'ClassifyAndSwitchLLMTool', params: { active_meta_profile: 'router', meta_profile: { classifier_model: 'fast', classes: [{ description: 'ui', model: 'vision' }, { description: 'rest', model: 'fast' }], prompt_template: null, model_table: null } } });

    // The critic needs its service's URL (no default one) and the LLM profile's key (it authenticates with it).
    expect((await M({ verification: { critic_enabled: true } })).errors).toEqual([
      expect.stringMatching(/^Failed to build agent settings: verification\.critic_server_url: the critic needs the URL/),
      "Failed to build agent settings: verification.critic_enabled: the critic authenticates with the LLM profile's key, and 'fast' has none",
    ]);
    await s.api('/api/profiles/keyed', { method: 'POST', body: { llm: { model: 'openai/keyed', api_key: 'sk-critic-test-key' } } });
    const judged = await M({ llm_profile_ref: 'keyed', verification: { critic_enabled: true, critic_server_url: 'http://127.0.0.1:9/vllm', enable_iterative_refinement: true, critic_threshold: 0.7 } });
    expect(judged).toMatchObject({ valid: true, errors: [] });
    expect((await M({ llm_profile_ref: 'keyed', verification: { critic_enabled: true, critic_server_url: 'ftp://c.example' } })).errors).toEqual([
      'Failed to build agent settings: verification.critic_server_url must be the http(s) URL of the critic service (there is no default one)',
    ]);
    expect(judged.resolved_settings.critic).toEqual({ kind: 'APIBasedCritic', server_url: 'http://127.0.0.1:9/vllm', model_name: 'critic', mode: 'finish_and_message', iterative_refinement: { success_threshold: 0.7, max_iterations: 3 } });
    expect((await M({ verification: { critic_enabled: false, enable_iterative_refinement: true } })).valid).toBe(true);
    expect((await M({ condenser: { condenser_kind: 'no_op' } })).resolved_settings.condenser).toEqual({ kind: 'NoOpCondenser' });
    expect((await M({ condenser: { enabled: false } })).resolved_settings.condenser).toBeNull();
    expect((await M({})).resolved_settings.condenser).toMatchObject({ kind: 'LLMSummarizingCondenser', max_size: 240, keep_first: 2 });
    expect(await M({ condenser: { max_size: 20, keep_first: 9 } })).toMatchObject({ valid: false, errors: ['Failed to build agent settings: condenser: max_size // 2 - keep_first - 1 must be positive'] });
  });
});
