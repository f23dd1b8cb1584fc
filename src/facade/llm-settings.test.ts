// A user's agent settings over HTTP, as OpenHands' clients call them: LLM profiles (saved, read
// without their keys, renamed, activated, deleted), agent_settings / conversation_settings applied to
// new conversations, the settings forms, and switch_profile against a real agent server.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ConversationKind } from '../api/conversation.ts';
import { SecretKind } from '../api/secret.ts';
import { agentServerStartRequest } from '../controller/conversation/start-request.ts';
import { llmSettingsSecretName } from './llm-settings.ts';
import { NS, startConversationId, startHarness, startWorkspaceHarness, type Harness, type WorkspaceHarness } from './test-support.ts';

const P = '/api/v1/settings/profiles';
const KEY = 'sk-profile-secret-4f2a';

describe('LLM profiles and agent settings', () => {
  let h: Harness;
  beforeEach(async () => (h = await startHarness({ capacity: 4 }, { modelUpstream: { model: 'openai/gpt-4o', baseUrl: 'http://127.0.0.1:9/v1' } })));
  afterEach(() => h.close());
  const responses: string[] = [];
  const call = async (method: string, path: string, body?: unknown, key = h.alice.key) => {
    const r = await h.call(method, path, body === undefined ? { key } : { key, body });
    responses.push(JSON.stringify(r.body));
    return r;
  };

  it('saves, lists, reads, renames, activates and deletes profiles; a key is stored but never shown', async () => {
    expect((await call('GET', P)).body).toEqual({ profiles: [], active_profile: null });
    const saved = await call('POST', `${P}/fast`, { llm: { model: 'openai/gpt-4o-mini', base_url: 'http://llm.internal/v1', api_key: KEY, temperature: 0.2 } });
    expect(saved).toMatchObject({ status: 201, body: { name: 'fast', message: "Profile 'fast' saved" } });
    // No body: the agent's LLM (nothing set yet: an empty configuration).
    expect((await call('POST', `${P}/snap`)).status).toBe(201);
    expect((await call('GET', P)).body).toEqual({
      profiles: [
        { name: 'fast', model: 'openai/gpt-4o-mini', base_url: 'http://llm.internal/v1', api_key_set: true },
        { name: 'snap', model: null, base_url: null, api_key_set: false },
      ],
      active_profile: null,
    });
    const detail = await call('GET', `${P}/fast`);
    expect(detail.body).toMatchObject({ name: 'fast', api_key_set: true, config: { model: 'openai/gpt-4o-mini', api_key: null, temperature: 0.2 } });
    expect(Object.keys(detail.body.unapplied_fields).sort()).toEqual(['api_key', 'base_url', 'temperature']);
    // Saved again without a key: the stored one stays.
    await call('POST', `${P}/fast`, { llm: { model: 'openai/gpt-4o-mini' } });
    expect((await call('GET', `${P}/fast`)).body.api_key_set).toBe(true);
    const secret = await h.store.get(SecretKind, NS, llmSettingsSecretName(h.alice.user.id));
    expect(Object.values(secret!.data!).map((v) => Buffer.from(v, 'base64').toString())).toContain(KEY);

    expect((await call('POST', `${P}/fast/rename`, { new_name: 'snap' })).status).toBe(409);
    expect((await call('POST', `${P}/fast/rename`, { new_name: 'quick' })).body).toEqual({ name: 'quick', message: "Profile 'fast' renamed to 'quick'" });
    expect((await call('POST', `${P}/quick/activate`)).body).toEqual({ name: 'quick', message: "Switched to profile 'quick'", model: 'openai/gpt-4o-mini' });
    const settings = await call('GET', '/api/v1/settings');
    expect(settings.body.agent_settings.llm).toMatchObject({ model: 'openai/gpt-4o-mini', api_key: null, api_key_set: true });
    expect((await call('GET', P)).body.active_profile).toBe('quick');
    expect((await call('POST', `${P}/nope/activate`)).status).toBe(404);
    expect((await call('GET', `${P}/nope`)).status).toBe(404);
    expect((await call('DELETE', `${P}/nope`)).body).toEqual({ name: 'nope', message: "Profile 'nope' deleted" });
    await call('DELETE', `${P}/quick`);
    expect((await call('GET', P)).body).toEqual({ profiles: [{ name: 'snap', model: null, base_url: null, api_key_set: false }], active_profile: null });
    // Bob has none of them.
    expect((await call('GET', P, undefined, h.bob.key)).body).toEqual({ profiles: [], active_profile: null });
    expect(responses.join('\n')).not.toContain(KEY);
  });

  it('refuses bad names, unknown LLM fields and an eleventh profile as OpenHands does', async () => {
    const bad = await call('POST', `${P}/bad%20name`, {});
    expect(bad.status).toBe(422);
    expect(bad.body.detail[0].loc).toEqual(['path', 'name']);
    const extra = await call('POST', `${P}/x`, { llm: { model: 'm', bogus: 1 } });
    expect(extra.status).toBe(422);
    expect(extra.body.detail[0].loc).toEqual(['body', 'llm', 'bogus']);
    for (let i = 0; i < 10; i++) expect((await call('POST', `${P}/p${i}`, { llm: { model: 'm' } })).status).toBe(201);
    expect((await call('POST', `${P}/p10`, { llm: { model: 'm' } })).status).toBe(409);
    expect((await call('POST', `${P}/p3`, { llm: { model: 'n' } })).status).toBe(201); // replacing one is no new one
  });

  it("gives new conversations the caller's model, max_iterations and confirmation mode; the request's llm_model wins", async () => {
    const set = await call('POST', '/api/v1/settings', { agent_settings_diff: { llm: { model: 'openai/gpt-4.1' } }, conversation_settings_diff: { max_iterations: 40, confirmation_mode: true, security_analyzer: 'none' } });
    expect(set.status).toBe(200);
    expect(set.body).toMatchObject({ sandbox_grouping_strategy: 'NO_GROUPING', agent_settings: { llm: { model: 'openai/gpt-4.1' } }, conversation_settings: { max_iterations: 40, confirmation_mode: true, security_analyzer: 'none' } });
    const id = await startConversationId(h, { initial_message: { role: 'user', content: [{ type: 'text', text: 'hi' }] } });
    const conv = (await h.store.get(ConversationKind, NS, id))!;
    expect(conv.spec).toMatchObject({ llmModel: 'openai/gpt-4.1', maxIterations: 40, confirmationMode: 'always' });
    expect(agentServerStartRequest(conv, {}, undefined)).toMatchObject({ max_iterations: 40, confirmation_policy: { kind: 'AlwaysConfirm' }, agent: { llm: { model: 'openai/gpt-4.1' } } });
    // With the LLM analyzer (OpenHands' default), only what the model rates risky waits.
    await call('POST', '/api/v1/settings', { conversation_settings_diff: { security_analyzer: 'llm' } });
    const own = await startConversationId(h, { llm_model: 'openai/o3' });
    const ownConv = (await h.store.get(ConversationKind, NS, own))!;
    expect(ownConv.spec).toMatchObject({ llmModel: 'openai/o3', confirmationMode: 'risky' });
    expect(agentServerStartRequest(ownConv, {}, undefined)).toMatchObject({ confirmation_policy: { kind: 'ConfirmRisky' }, security_analyzer: { kind: 'LLMSecurityAnalyzer' } });
    // Bob's conversations are not touched by Alice's settings.
    const bobs = await startConversationId(h, {}, h.bob.key);
    expect((await h.store.get(ConversationKind, NS, bobs))!.spec).not.toHaveProperty('maxIterations');
    const bad = await call('POST', '/api/v1/settings', { conversation_settings_diff: { max_iterations: 0 } });
    expect(bad.status).toBe(422);
    expect(bad.body.detail[0].loc).toEqual(['body', 'conversation_settings_diff', 'max_iterations']);
  });

  it('describes what can be set in the settings forms OpenHands clients render', async () => {
    const agent = (await call('GET', '/api/v1/settings/agent-schema')).body;
    expect(agent.model_name).toBe('AgentSettings');
    expect(agent.sections[0].fields[0]).toMatchObject({ key: 'llm.model', value_type: 'string', default: 'openai/gpt-4o', section: 'llm', secret: false });
    const conv = (await call('GET', '/api/v1/settings/conversation-schema')).body;
    expect(conv.model_name).toBe('ConversationSettings');
    expect(conv.sections.flatMap((s: { fields: { key: string }[] }) => s.fields.map((f) => f.key))).toEqual(['max_iterations', 'confirmation_mode', 'security_analyzer']);
    // Every key of the forms is one POST /settings takes.
    const ok = await call('POST', '/api/v1/settings', { agent_settings_diff: { llm: { model: 'x/y' } }, conversation_settings_diff: { max_iterations: 3, confirmation_mode: false, security_analyzer: 'none' } });
    expect(ok.status).toBe(200);
  });
});

describe('switch_profile', () => {
  let h: WorkspaceHarness;
  beforeEach(async () => (h = await startWorkspaceHarness()));
  afterEach(() => h.close());

  it("switches a running conversation's model on its agent server and shows it in the record", async () => {
    const id = await h.conversation(h.workspace);
    await h.call('POST', `${P}/fast`, { body: { llm: { model: 'openai/gpt-4o-mini', api_key: KEY } } });
    const r = await h.call('POST', `/api/v1/app-conversations/${id}/switch_profile`, { body: { profile_name: 'fast' } });
    expect(r).toMatchObject({ status: 200, body: { success: true } });
    const info = await fetch(`${h.agent.url}/api/conversations/${id}`, { headers: { 'x-session-api-key': 'sk-1' } });
    const llm = ((await info.json()) as { agent: { llm: Record<string, unknown> } }).agent.llm;
    expect(llm['model']).toBe('openai/gpt-4o-mini');
    expect(JSON.stringify(llm)).not.toContain(KEY); // the profile's key never goes to the sandbox
    expect((await h.call('GET', `/api/v1/app-conversations?ids=${id}`)).body[0].llm_model).toBe('openai/gpt-4o-mini');
    expect((await h.call('POST', `/api/v1/app-conversations/${id}/switch_profile`, { body: { profile_name: 'nope' } })).status).toBe(404);
    expect((await h.call('POST', `/api/v1/app-conversations/${id}/switch_profile`, { key: h.bob.key, body: { profile_name: 'fast' } })).status).toBe(404);
    expect((await h.call('POST', `/api/v1/app-conversations/${id}/switch_profile`, { body: {} })).status).toBe(422);
  });
});
