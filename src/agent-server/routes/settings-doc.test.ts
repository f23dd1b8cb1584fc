// GET/PATCH /api/settings, /api/settings/mcp/{key} and the settings forms over HTTP with the real
// agent and the scripted model: what is stored and how it is answered (masked, plaintext), the
// refusals, and where the settings take effect as in OpenHands: a client builds the next
// conversation's agent from GET (as the Python SDK's get_llm()/get_mcp_config()), so that model
// request goes to the stored model and endpoint with the stored key and offers the stored MCP
// server's tools; and the gateway's conversations take the stored conversation settings. The active
// meta-profile: checked, kept, and routed with by the `default` agent profile seeded afterwards.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createAgent } from '../../agent/agent.ts';
import { startScriptedLlm, type ScriptedLlm } from '../../testing/scripted-llm/server.ts';
import { startHttpMcpServer, type HttpMcpServer } from '../../testing/mcp/server.ts';
import { eventually, startTestServer, tempDir, TEST_KEY, useRealAgentServer, userText } from '../test-support.ts';

const t = useRealAgentServer({ createAgent, overrides: () => ({ secretKey: 'settings-doc-test-secret-key' }) });
let other: ScriptedLlm;
let mcp: HttpMcpServer;
beforeAll(async () => {
  other = await startScriptedLlm();
  mcp = await startHttpMcpServer();
});
afterAll(async () => {
  await other.close();
  await mcp.close();
});
afterEach(() => {
  expect(other.failures).toEqual([]);
  expect(other.remaining()).toBe(0);
  other.requests.length = 0;
});

const API_KEY = 'sk-stored-settings-secret-4711';
const MCP_TOKEN = 'mcp-header-secret-0815';
/** GET /api/settings with extra headers (X-Expose-Secrets), which the test server's api() does not send. */
async function get(headers: Record<string, string> = {}): Promise<{ status: number; body: any }> {
  const res = await fetch(`${t.s.url}/api/settings`, { headers: { 'x-session-api-key': TEST_KEY, ...headers } });
  return { status: res.status, body: await res.json() };
}
const patch = (body: unknown) => t.s.api('/api/settings', { method: 'PATCH', body });
const mcpRoute = (key: string, method: string, body?: unknown) => t.s.api(`/api/settings/mcp/${key}`, { method, ...(body !== undefined ? { body } : {}) });
const locs = (r: { body: any }) => (r.body.detail as { loc: unknown[] }[]).map((d) => d.loc.join('.'));

describe('stored settings', () => {
  it('starts from the defaults: the server model, no key, OpenHands conversation defaults', async () => {
    const r = await get();
    expect(r.status).toBe(200);
    expect(r.body).toEqual({
      agent_settings: {
        schema_version: 9,
        agent_kind: 'openhands',
        llm: { model: 'openai/scripted' },
        tools: null,
        mcp_config: {},
        enable_classify_and_switch_llm_tool: false,
        meta_profile: null,
        meta_profile_llms: {},
        condenser: { condenser_kind: 'llm_summarizing', enabled: true, max_size: 240, max_tokens: null, keep_first: 2, minimum_progress: 0.1, hard_context_reset_max_retries: 5, hard_context_reset_context_scaling: 0.8 },
        verification: { critic_enabled: false, critic_mode: 'finish_and_message', enable_iterative_refinement: false, critic_threshold: 0.6, max_refinement_iterations: 3, critic_server_url: null, critic_model_name: null, critic_api_key: null },
      },
      conversation_settings: { schema_version: 1, max_iterations: 500, confirmation_mode: false, security_analyzer: 'llm' },
      llm_api_key_is_set: false,
      active_profile: null,
      active_agent_profile_id: null,
      active_meta_profile: null,
      misc_settings: {},
    });
  });

  it('merges diffs, masks secrets except for X-Expose-Secrets: plaintext, keeps a key sent back masked, removes map entries given null', async () => {
    const w = await patch({
      agent_settings_diff: { llm: { model: 'openai/stored', base_url: other.url, api_key: API_KEY }, mcp_config: { web: { url: mcp.url, headers: { Authorization: `Bearer ${MCP_TOKEN}`, 'X-Old': 'old-secret' } } } },
      conversation_settings_diff: { max_iterations: 12 },
      misc_settings_diff: { ui: { theme: 'dark', panes: [1, 2] } },
    });
    expect(w.status).toBe(200);
    expect(JSON.stringify(w.body)).not.toContain(API_KEY);
    expect(w.body.agent_settings.llm).toEqual({ model: 'openai/stored', base_url: other.url, api_key: '**********' });
    expect(w.body.agent_settings.mcp_config.web).toEqual({ url: mcp.url, headers: { Authorization: '**********', 'X-Old': '**********' }, enabled: true });
    expect(w.body).toMatchObject({ llm_api_key_is_set: true, conversation_settings: { max_iterations: 12, confirmation_mode: false }, misc_settings: { ui: { theme: 'dark', panes: [1, 2] } } });
    expect((await get()).body).toEqual(w.body);

    // A GET answer saved back as it is (masked) keeps the secrets; null removes one header; lists are replaced.
    const again = await patch({ agent_settings_diff: { llm: { api_key: '**********' }, mcp_config: { web: { headers: { Authorization: '**********', 'X-Old': null } } } }, misc_settings_diff: { ui: { panes: [3] } } });
    expect(again.status).toBe(200);
    const plain = await get({ 'X-Expose-Secrets': 'plaintext' });
    expect(plain.body.agent_settings.llm.api_key).toBe(API_KEY);
    expect(plain.body.agent_settings.mcp_config.web.headers).toEqual({ Authorization: `Bearer ${MCP_TOKEN}` });
    expect(plain.body.misc_settings).toEqual({ ui: { theme: 'dark', panes: [3] } });

    // Unsetting the key (null inside llm) is how a client removes it.
    expect((await patch({ agent_settings_diff: { llm: { api_key: null } } })).body.llm_api_key_is_set).toBe(false);
  });

  it('keeps the routing, condenser and critic fields as 1.58 does, the critic key a secret; a null key is removed', async () => {
    const w = await patch({ agent_settings_diff: { enable_classify_and_switch_llm_tool: true, condenser: { max_size: 120 }, verification: { critic_enabled: true, critic_api_key: 'sk-critic-kept' } } });
    expect(w.status).toBe(200);
    expect(JSON.stringify(w.body)).not.toContain('sk-critic-kept');
    expect(w.body.agent_settings).toMatchObject({ enable_classify_and_switch_llm_tool: true, condenser: { max_size: 120, keep_first: 2 }, verification: { critic_enabled: true, critic_threshold: 0.6, critic_api_key: '**********' } });
    expect((await get({ 'X-Expose-Secrets': 'plaintext' })).body.agent_settings.verification.critic_api_key).toBe('sk-critic-kept');
    // Sent back masked, the key stays; null removes it.
    expect((await patch({ agent_settings_diff: { verification: { critic_api_key: '**********', critic_threshold: 0.8 } } })).status).toBe(200);
    expect((await get({ 'X-Expose-Secrets': 'plaintext' })).body.agent_settings.verification).toMatchObject({ critic_api_key: 'sk-critic-kept', critic_threshold: 0.8 });
    const reset = await patch({ agent_settings_diff: { enable_classify_and_switch_llm_tool: false, condenser: { max_size: 240 }, verification: { critic_enabled: false, critic_api_key: null } } });
    expect(reset.status).toBe(200);
    expect(reset.body.agent_settings).toMatchObject({ enable_classify_and_switch_llm_tool: false, condenser: { max_size: 240 }, verification: { critic_enabled: false, critic_api_key: null, critic_threshold: 0.8 } });
  });

  it("keeps 1.58's inline routing LLMs (meta_profile_llms): their keys sealed, masked unless X-Expose-Secrets, kept when sent back masked; entries checked where they stand, null removes one", async () => {
    const w = await patch({ agent_settings_diff: { meta_profile_llms: { cls: { model: 'openai/cls', api_key: 'sk-inline-stored', base_url: 'http://127.0.0.1:9/v1' }, deep: { model: 'openai/deep' } } } });
    expect(w.status, JSON.stringify(w.body)).toBe(200);
    // Stored with the LLM's defaults, as 1.58 stores its LLM model.
    const defaults = { auth_type: 'api_key', usage_id: 'default' };
    expect(w.body.agent_settings.meta_profile_llms).toEqual({ cls: { model: 'openai/cls', api_key: '**********', base_url: 'http://127.0.0.1:9/v1', ...defaults }, deep: { model: 'openai/deep', ...defaults } });
    expect((await get({ 'X-Expose-Secrets': 'plaintext' })).body.agent_settings.meta_profile_llms.cls.api_key).toBe('sk-inline-stored');
    const token = (await get({ 'X-Expose-Secrets': 'encrypted' })).body.agent_settings.meta_profile_llms.cls.api_key;
    expect(token).toMatch(/^gAAAAA/);
    // Sent back masked (a form saving what it showed) or as its token: the key stays.
    expect((await patch({ agent_settings_diff: { meta_profile_llms: { cls: { api_key: '**********', temperature: 0.2 } } } })).status).toBe(200);
    expect((await patch({ agent_settings_diff: { meta_profile_llms: { cls: { api_key: token } } } })).status).toBe(200);
    expect((await get({ 'X-Expose-Secrets': 'plaintext' })).body.agent_settings.meta_profile_llms.cls).toMatchObject({ api_key: 'sk-inline-stored', temperature: 0.2 });
    // Sealed at rest: kept over a restart, never in the database in plain text.
    await t.restart();
    const data = join(t.dir.path, 'data');
    const db = Buffer.concat(readdirSync(data).filter((f) => f.startsWith('agent-server.db')).map((f) => readFileSync(join(data, f))));
    expect(db.includes('sk-inline-stored')).toBe(false);
    expect((await get({ 'X-Expose-Secrets': 'plaintext' })).body.agent_settings.meta_profile_llms.cls.api_key).toBe('sk-inline-stored');
    const bad = await patch({ agent_settings_diff: { meta_profile_llms: { worse: { temperature: 'hot', api_key: 'sk-never-echoed' } } } });
    expect(bad.status).toBe(422);
    expect(bad.body.detail.map((d: any) => d.loc.join('.')).sort()).toEqual(['body.agent_settings_diff.meta_profile_llms.worse.model', 'body.agent_settings_diff.meta_profile_llms.worse.temperature']);
    expect(JSON.stringify(bad.body)).not.toContain('sk-never-echoed');
    const removed = await patch({ agent_settings_diff: { meta_profile_llms: { cls: null } } });
    expect(removed.body.agent_settings.meta_profile_llms).toEqual({ deep: { model: 'openai/deep', auth_type: 'api_key', usage_id: 'default' } });
  });

  it('refuses what it cannot store or apply, changing nothing', async () => {
    expect(await patch({})).toMatchObject({ status: 400, body: { detail: expect.stringContaining('At least one of agent_settings_diff') } });
    const bad = await patch({ conversation_settings_diff: { max_iterations: 0, default_runtime: 'docker' }, agent_settings_diff: { acp_server: 'codex', condenser: { max_size: 5 } } });
    expect(bad.status).toBe(422);
    expect(locs(bad)).toEqual(expect.arrayContaining(['body.conversation_settings_diff.max_iterations', 'body.agent_settings_diff.acp_server', 'body.agent_settings_diff.condenser.max_size']));
    const llm = await patch({ agent_settings_diff: { llm: { temperature: 'hot' } } });
    expect(llm.status).toBe(422);
    expect(locs(llm)).toEqual(['body.agent_settings_diff.llm.temperature']);
    expect((await patch({ agent_settings_diff: { mcp_config: { both: { command: 'x', url: 'http://127.0.0.1:1/mcp' } } } })).status).toBe(422);
    expect((await patch({ agent_settings_diff: { llm: { api_key: '**********' } } })).status).toBe(422); // nothing stored to keep
    expect(await patch({ active_profile: 'fast' })).toMatchObject({ status: 404, body: { detail: "Profile 'fast' not found" } });
    expect((await patch({ active_profile: null })).status).toBe(200);
    expect((await get({ 'X-Expose-Secrets': 'bogus' })).status).toBe(400);
    const now = (await get()).body;
    expect(now.conversation_settings.max_iterations).toBe(500);
    expect(now.agent_settings.llm).toEqual({ model: 'openai/scripted' });
  });

  it('adds, changes and removes one MCP server by key', async () => {
    expect((await mcpRoute('svc', 'POST', { command: 'node', args: ['a.js'], env: { TOKEN: 'env-secret-1' } })).status).toBe(201);
    expect(await mcpRoute('svc', 'POST', { command: 'node' })).toMatchObject({ status: 409, body: { detail: "MCP server 'svc' already exists" } });
    expect((await mcpRoute('svc2', 'POST', { command: 'node', bogus: 1 })).status).toBe(422);
    const neither = await mcpRoute('svc3', 'POST', {});
    expect([neither.status, locs(neither)]).toEqual([422, ['body']]);
    const both = await mcpRoute('svc', 'PATCH', { url: 'http://127.0.0.1:1/mcp' });
    expect([both.status, locs(both)]).toEqual([422, ['body']]);
    expect(await mcpRoute('nope', 'PATCH', { args: [] })).toMatchObject({ status: 404, body: { detail: "MCP server 'nope' was not found" } });
    const changed = await mcpRoute('svc', 'PATCH', { args: ['b.js'], env: { EXTRA: 'env-secret-2' } });
    expect(changed.body.agent_settings.mcp_config.svc).toEqual({ command: 'node', args: ['b.js'], env: { TOKEN: '**********', EXTRA: '**********' }, enabled: true });
    expect((await get({ 'X-Expose-Secrets': 'plaintext' })).body.agent_settings.mcp_config.svc.env).toEqual({ TOKEN: 'env-secret-1', EXTRA: 'env-secret-2' });
    expect((await mcpRoute('nope', 'DELETE')).status).toBe(404);
    expect((await mcpRoute('svc', 'DELETE')).body.agent_settings.mcp_config).toEqual({});
  });

  it('serves the two forms, derived from the schemas the diffs are checked with', async () => {
    const conv = (await t.s.api('/api/settings/conversation-schema')).body;
    expect(conv.model_name).toBe('ConversationSettings');
    expect(conv.sections.map((s: any) => [s.key, s.fields.map((f: any) => f.key)])).toEqual([
      ['general', ['max_iterations']],
      ['verification', ['confirmation_mode', 'security_analyzer']],
    ]);
    expect(conv.sections[1].fields[1]).toMatchObject({ value_type: 'string', default: 'llm', depends_on: ['confirmation_mode'], choices: [{ label: 'llm', value: 'llm' }, { label: 'none', value: 'none' }] });
    const agent = (await t.s.api('/api/settings/agent-schema')).body;
    const fields = agent.sections.flatMap((s: any) => s.fields);
    expect(fields.find((f: any) => f.key === 'llm.api_key')).toMatchObject({ secret: true, section: 'llm' });
    expect(fields.find((f: any) => f.key === 'llm.temperature')).toMatchObject({ secret: false, value_type: 'number' });
    expect(fields.map((f: any) => f.key)).toContain('mcp_config');
  });
});

describe('where the stored settings take effect', () => {
  it("a client's next conversation, built from GET as the SDK does, calls the stored model with the stored key and offers the stored MCP server's tools", async () => {
    await patch({ agent_settings_diff: { llm: { model: 'openai/stored', base_url: other.url, api_key: API_KEY } } });
    expect((await mcpRoute('web', 'POST', { url: mcp.url, headers: { Authorization: `Bearer ${MCP_TOKEN}` } })).status).toBe(201);

    // RemoteWorkspace.get_llm() / get_mcp_config(): GET with plaintext secrets, into the agent.
    const settings = (await get({ 'X-Expose-Secrets': 'plaintext' })).body.agent_settings;
    other.push(
      (req) => {
        expect(req.model).toBe('stored');
        expect(req.headers['authorization']).toBe(`Bearer ${API_KEY}`);
        expect(req.tools?.map((x) => x.function.name)).toEqual(expect.arrayContaining(['echo', 'whoami']));
        return { toolCalls: [{ name: 'whoami', arguments: {} }] };
      },
      (req) => {
        expect(JSON.stringify(req.messages)).toContain(MCP_TOKEN);
        return { toolCalls: [{ name: 'finish', arguments: { message: 'done' } }] };
      },
    );
    const body = { workspace: { kind: 'LocalWorkspace', working_dir: join(t.dir.path, 'wd') }, agent: { llm: settings.llm, mcp_config: { mcpServers: settings.mcp_config } } };
    const created = await t.s.api('/api/conversations', { method: 'POST', body });
    expect(created.status).toBe(201);
    const id = created.body.id as string;
    await t.s.api(`/api/conversations/${id}/events`, { method: 'POST', body: userText('who am I?', true) });
    await eventually(async () => (await t.s.api(`/api/conversations/${id}`)).body.execution_status === 'finished', 20_000);
    expect(other.requests).toHaveLength(2);
  });

  it("the gateway's conversations take the stored max_iterations, confirmation policy and analyzer", async () => {
    await patch({ conversation_settings_diff: { max_iterations: 7, confirmation_mode: true, security_analyzer: 'none' } });
    t.llm.push({ toolCalls: [{ name: 'terminal', arguments: { command: 'echo hi' } }] });
    const r = await t.s.api('/v1/chat/completions', { method: 'POST', body: { model: 'openhands_default', messages: [{ role: 'user', content: 'say hi' }] } });
    // confirmation_mode without the LLM analyzer: every action waits (AlwaysConfirm), so the run stops there.
    expect(r.status).toBe(409);
    const [conv] = (await t.s.api('/api/conversations/search')).body.items as any[];
    expect(conv).toMatchObject({ max_iterations: 7, confirmation_policy: { kind: 'AlwaysConfirm' }, execution_status: 'waiting_for_confirmation' });
    expect(conv.security_analyzer ?? null).toBeNull();
  });
});

describe('the profile pointers', () => {
  it('active_profile loads that LLM profile into agent_settings.llm (its key sealed and masked like the rest); an unknown one is a 404; agent profile ids are checked', async () => {
    expect((await t.s.api('/api/profiles/fast', { method: 'POST', body: { llm: { model: 'openai/fast', base_url: other.url, api_key: 'sk-profile-key-31' } } })).status).toBe(201);
    const r = await patch({ active_profile: 'fast' });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ active_profile: 'fast', llm_api_key_is_set: true, agent_settings: { llm: { model: 'openai/fast', base_url: other.url, api_key: '**********' } } });
    expect((await get({ 'X-Expose-Secrets': 'plaintext' })).body.agent_settings.llm.api_key).toBe('sk-profile-key-31');
    // With an llm in the same diff, that one wins (OpenHands' rule); the pointer still moves.
    expect((await patch({ active_profile: 'fast', agent_settings_diff: { llm: { model: 'openai/own' } } })).body.agent_settings.llm.model).toBe('openai/own');
    expect((await patch({ active_profile: null })).body.active_profile).toBeNull();
    const id = (await t.s.api('/api/agent-profiles')).body.active_agent_profile_id as string;
    expect((await get()).body.active_agent_profile_id).toBe(id);
    expect((await patch({ active_agent_profile_id: '00000000-0000-4000-8000-000000000000' })).status).toBe(404);
    expect((await patch({ active_agent_profile_id: id })).status).toBe(200);
  });

  it("a conversation started from an agent profile gets the stored MCP servers (those mcp_server_refs names); a name not stored is a 422", async () => {
    await t.s.api('/api/profiles/p', { method: 'POST', body: { llm: { model: 'openai/prof', base_url: other.url, api_key: 'sk-p' } } });
    await mcpRoute('web', 'POST', { url: mcp.url, headers: { Authorization: `Bearer ${MCP_TOKEN}` } });
    await mcpRoute('off', 'POST', { url: 'http://127.0.0.1:1/mcp', enabled: false });
    await t.s.api('/api/agent-profiles/with-web', { method: 'POST', body: { llm_profile_ref: 'p', mcp_server_refs: ['web'] } });
    await t.s.api('/api/agent-profiles/dangling', { method: 'POST', body: { llm_profile_ref: 'p', mcp_server_refs: ['nowhere'] } });
    const ids = Object.fromEntries(((await t.s.api('/api/agent-profiles')).body.profiles as any[]).map((p) => [p.name, p.id]));
    const start = (id: string) => t.s.api('/api/conversations', { method: 'POST', body: { workspace: { kind: 'LocalWorkspace', working_dir: join(t.dir.path, 'ap') }, agent_profile_id: id } });
    const refused = await start(ids['dangling']);
    expect([refused.status, locs(refused)]).toEqual([422, ['body.agent_profile_id']]);

    other.push((req) => {
      expect(req.headers['authorization']).toBe('Bearer sk-p');
      expect(req.tools?.map((x) => x.function.name)).toEqual(expect.arrayContaining(['echo', 'whoami']));
      return { toolCalls: [{ name: 'finish', arguments: { message: 'done' } }] };
    });
    const created = await start(ids['with-web']);
    expect(created.status).toBe(201);
    await t.s.api(`/api/conversations/${created.body.id}/events`, { method: 'POST', body: userText('go', true) });
    await eventually(async () => (await t.s.api(`/api/conversations/${created.body.id}`)).body.execution_status === 'finished', 20_000);
    expect(other.requests).toHaveLength(1);
  });
});

describe('the active meta-profile', () => {
  it('must name a stored meta-profile (404, nothing changed); is kept across a restart; the `default` agent profile seeded afterwards offers the routing tool with it; null or deleting it clears it', async () => {
    expect(await patch({ active_meta_profile: 'router', conversation_settings_diff: { max_iterations: 7 } })).toMatchObject({ status: 404, body: { detail: "Meta-profile 'router' not found" } });
    expect((await get()).body).toMatchObject({ active_meta_profile: null, conversation_settings: { max_iterations: 500 } });
    await t.s.api('/api/profiles/routed-llm', { method: 'POST', body: { llm: { model: 'openai/routed', base_url: other.url, api_key: 'sk-routed' } } });
    const meta = { classifier_model: 'routed-llm', classes: [{ description: 'all', model: 'routed-llm' }], prompt_template: null, model_table: null };
    expect((await t.s.api('/api/meta-profiles/router', { method: 'POST', body: meta })).status).toBe(201);
    const set = await patch({ active_profile: 'routed-llm', active_meta_profile: 'router' });
    expect([set.status, set.body.active_meta_profile]).toEqual([200, 'router']);
    await t.restart();
    expect((await get()).body.active_meta_profile).toBe('router');
    expect((await t.s.api('/api/meta-profiles')).body.active_meta_profile).toBe('router');

    // `default` (seeded at the first listing, deleted here in case) is seeded from these settings (OpenHands' build_seed_profile).
    await t.s.api('/api/agent-profiles/default', { method: 'DELETE' });
    expect((await t.s.api('/api/agent-profiles')).body.profiles.map((p: any) => p.name)).toEqual(['default']);
    const seeded = (await t.s.api('/api/agent-profiles/default')).body.profile;
    expect(seeded).toMatchObject({ llm_profile_ref: 'routed-llm', enable_classify_and_switch_llm_tool: true, meta_profile_ref: 'router' });
    other.push((req) => {
      expect(req.tools?.map((x) => x.function.name)).toContain('route_task_to_model');
      return { toolCalls: [{ name: 'finish', arguments: { message: 'done' } }] };
    });
    const created = await t.s.api('/api/conversations', { method: 'POST', body: { workspace: { kind: 'LocalWorkspace', working_dir: join(t.dir.path, 'meta') }, agent_profile_id: seeded.id } });
    expect(created.status).toBe(201);
    expect(created.body.agent.tools.at(-1)).toEqual({ name: 'ClassifyAndSwitchLLMTool', params: { active_meta_profile: 'router', meta_profile: meta } });
    await t.s.api(`/api/conversations/${created.body.id}/events`, { method: 'POST', body: userText('go', true) });
    await eventually(async () => (await t.s.api(`/api/conversations/${created.body.id}`)).body.execution_status === 'finished', 20_000);
    expect(other.requests).toHaveLength(1);

    expect((await patch({ active_meta_profile: null })).body.active_meta_profile).toBeNull();
    expect((await t.s.api('/api/meta-profiles/router/activate', { method: 'POST' })).body).toEqual({ name: 'router', message: "Meta-profile 'router' activated", applied: true });
    expect((await get()).body.active_meta_profile).toBe('router');
    await t.s.api('/api/meta-profiles/router', { method: 'DELETE' });
    expect((await get()).body.active_meta_profile).toBeNull();
    expect((await t.s.api('/api/meta-profiles')).body.active_meta_profile).toBeNull();
  });
});

describe('stored settings across a hand-over', () => {
  it('a warm-pool server (no secret key) seals its settings secrets with the key it is handed, so a start with that key opens them', async () => {
    const dir = tempDir();
    const NEW_KEY = 'handed-over-session-key';
    const SEALING = 'sealing-key-of-the-new-session';
    let s = await startTestServer(dir.path, {});
    try {
      await s.api('/api/settings', { method: 'PATCH', body: { agent_settings_diff: { llm: { model: 'openai/pool', api_key: API_KEY } } } });
      expect((await s.api('/api/agentyard/hand-over', { method: 'POST', body: { session_key: NEW_KEY, secret_key: SEALING } })).status).toBe(200);
      await s.close();
      s = await startTestServer(dir.path, { sessionKeys: [NEW_KEY], secretKey: SEALING });
      const res = await fetch(`${s.url}/api/settings`, { headers: { 'x-session-api-key': NEW_KEY, 'X-Expose-Secrets': 'plaintext' } });
      expect(((await res.json()) as any).agent_settings.llm).toEqual({ model: 'openai/pool', api_key: API_KEY });
    } finally {
      await s.close();
      dir.remove();
    }
  });
});
