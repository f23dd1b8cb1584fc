// Differential flows for LLM profiles (/api/profiles, switch_profile) and the LLM listings
// (/api/llm). Profile names carry a `parity-` prefix and every flow deletes what it saved: the
// OpenHands server lives through the whole suite, and its OpenAI-compatible gateway lists one model
// per stored profile (the openai_gateway flow compares that list).
import { createHash } from 'node:crypto';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { until } from '../../src/testing/until.ts';
import type { Flow } from './flows.ts';
import { startBody } from './flows.ts';
import { repositories } from './flows-extensions.ts';
import type { Side } from './servers.ts';
import { startScriptedLlm } from '../../src/testing/scripted-llm/server.ts';

const KEY = 'sk-parity-profile-key';
const locs = (body: any) => (Array.isArray(body?.detail) ? body.detail.map((d: any) => JSON.stringify(d.loc)).sort() : body);
const mine = (body: any) => ({ ...body, profiles: (body?.profiles ?? []).filter((p: any) => String(p.name).startsWith('parity-')) });
const digest = (v: unknown) => createHash('sha256').update(JSON.stringify(v)).digest('hex').slice(0, 16);


async function exposed(s: Side, name: string, mode: string): Promise<number> {
  return (await fetch(`${s.url}/api/profiles/${name}`, { headers: { 'x-session-api-key': 'parity-session-key', 'x-expose-secrets': mode } })).status;
}

export const PROFILE_FLOWS: Record<string, Flow> = {
  /** Saving, listing, reading, renaming, activating and deleting profiles; their answers and errors. */
  async llm_profiles(s) {
    const save = (name: string, body: unknown) => s.api(`/api/profiles/${name}`, { method: 'POST', body });
    const before = mine((await s.api('/api/profiles')).body);
    const saved = await save('parity-fast', { llm: { model: 'openai/fast', base_url: 'http://127.0.0.1:9/v1', api_key: KEY, temperature: 0.2 } });
    const plain = await save('parity-plain', { llm: { model: 'anthropic/claude', api_key: KEY }, include_secrets: false });
    const badName = await save('-bad', { llm: { model: 'x' } });
    const noLlm = await save('parity-x', {});
    const list = mine((await s.api('/api/profiles')).body);
    const detail = await s.api('/api/profiles/parity-fast');
    const byFile = await s.api('/api/profiles/parity-fast.json');
    const missing = await s.api('/api/profiles/parity-missing');
    const renamed = await s.api('/api/profiles/parity-fast/rename', { method: 'POST', body: { new_name: 'parity-quick' } });
    const same = await s.api('/api/profiles/parity-quick/rename', { method: 'POST', body: { new_name: 'parity-quick' } });
    const taken = await s.api('/api/profiles/parity-quick/rename', { method: 'POST', body: { new_name: 'parity-plain' } });
    const renameMissing = await s.api('/api/profiles/parity-missing/rename', { method: 'POST', body: { new_name: 'parity-y' } });
    const badNewName = await s.api('/api/profiles/parity-quick/rename', { method: 'POST', body: { new_name: 'a b' } });
    const activated = await s.api('/api/profiles/parity-quick/activate', { method: 'POST' });
    const activateMissing = await s.api('/api/profiles/parity-missing/activate', { method: 'POST' });
    const active = (await s.api('/api/profiles')).body.active_profile;
    const expose = { bogus: await exposed(s, 'parity-quick', 'bogus'), plaintext: await exposed(s, 'parity-quick', 'plaintext') };
    const deleted = await s.api('/api/profiles/parity-quick', { method: 'DELETE' });
    const deletedAgain = await s.api('/api/profiles/parity-quick', { method: 'DELETE' });
    const after = mine((await s.api('/api/profiles')).body);
    await s.api('/api/profiles/parity-plain', { method: 'DELETE' });
    return {
      before,
      saved: [saved.status, saved.body],
      plain: plain.status,
      bad_name: [badName.status, locs(badName.body)],
      no_llm: [noLlm.status, locs(noLlm.body)],
      list,
      detail: [detail.status, detail.body.name, detail.body.api_key_set, detail.body.config?.model, detail.body.config?.base_url, detail.body.config?.api_key, detail.body.config?.temperature],
      by_file: [byFile.status, byFile.body.config?.model],
      missing: [missing.status, missing.body],
      renamed: [renamed.status, renamed.body],
      same: [same.status, same.body],
      taken: [taken.status, taken.body],
      rename_missing: [renameMissing.status, renameMissing.body],
      bad_new_name: [badNewName.status, locs(badNewName.body)],
      activated_status: activated.status,
      activated: activated.body,
      activate_missing: [activateMissing.status, activateMissing.body],
      active,
      expose_bogus: expose.bogus,
      expose_plaintext: expose.plaintext,
      deleted: [deleted.status, deleted.body],
      deleted_again: deletedAgain.status,
      after,
    };
  },

  /** switch_profile: the conversation's next model call goes to the profile's model and key. */
  async switch_profile(s) {
    await s.api('/api/profiles/parity-switch', { method: 'POST', body: { llm: { model: 'openai/profile-model', base_url: s.llm.url, api_key: KEY } } });
    const created = await s.api('/api/conversations', { method: 'POST', body: startBody(s) });
    const id = created.body.id;
    const unknownConversation = await s.api('/api/conversations/00000000-0000-4000-8000-000000000000/switch_profile', { method: 'POST', body: { profile_name: 'parity-switch' } });
    const unknownProfile = await s.api(`/api/conversations/${id}/switch_profile`, { method: 'POST', body: { profile_name: 'parity-nope' } });
    const badName = await s.api(`/api/conversations/${id}/switch_profile`, { method: 'POST', body: { profile_name: '../x' } });
    const noBody = await s.api(`/api/conversations/${id}/switch_profile`, { method: 'POST', body: {} });
    const switched = await s.api(`/api/conversations/${id}/switch_profile`, { method: 'POST', body: { profile_name: 'parity-switch' } });
    const llm = (await s.api(`/api/conversations/${id}`)).body.agent?.llm ?? {};
    s.llm.push({ toolCalls: [{ name: 'finish', arguments: { message: 'done on the profile model' } }] });
    await s.api(`/api/conversations/${id}/events`, { method: 'POST', body: { role: 'user', content: [{ type: 'text', text: 'hello' }], run: true } });
    const end = await until('the run to end', async () => {
      const st = (await s.api(`/api/conversations/${id}`)).body.execution_status;
      return ['finished', 'error', 'stuck', 'paused'].includes(st) ? st : undefined;
    });
    const call = s.llm.requests[0];
    await s.api(`/api/conversations/${id}`, { method: 'DELETE' });
    await s.api('/api/profiles/parity-switch', { method: 'DELETE' });
    return {
      unknown_conversation: unknownConversation.status,
      unknown_profile: [unknownProfile.status, unknownProfile.body],
      bad_name: badName.status,
      no_body: [noBody.status, locs(noBody.body)],
      switched: [switched.status, switched.body],
      llm: [llm.model, llm.base_url === s.llm.url, llm.api_key, llm.usage_id],
      end,
      model_call: [call?.model, call?.headers['authorization'] === `Bearer ${KEY}`],
      model_calls: s.llm.requests.length,
    };
  },

  /** The pre-flight of a draft: one short call to the draft's model; its verdict for an answer, a refused key and a rate limit. */
  async validate_profile(s) {
    const check = (llm: unknown) => s.api('/api/profiles/parity-draft/validate', { method: 'POST', body: { llm } });
    const draft = { model: 'openai/draft-model', base_url: s.llm.url, api_key: KEY };
    s.llm.push({ content: 'pong' });
    const ok = await check(draft);
    const call = s.llm.requests[0];
    s.llm.push({ status: 401, errorMessage: `Incorrect API key provided: ${KEY}` });
    const refused = await check(draft);
    s.llm.push({ status: 429, errorMessage: 'Rate limit reached', retryAfterMs: 1 });
    const limited = await check(draft);
    const noLlm = await s.api('/api/profiles/parity-draft/validate', { method: 'POST', body: {} });
    return {
      ok: [ok.status, ok.body],
      call: [call?.model, call?.headers['authorization'] === `Bearer ${KEY}`, call?.body['max_tokens']],
      refused: [refused.status, refused.body.valid, refused.body.error?.type, JSON.stringify(refused.body).includes(KEY)],
      limited: [limited.status, limited.body],
      model_calls: s.llm.requests.length,
      no_llm: [noLlm.status, locs(noLlm.body)],
      saved: (await s.api('/api/profiles/parity-draft')).status,
    };
  },

  /**
   * A profile linked to a shared provider connection: the connection's key and base URL used, the
   * delete of a used connection refused (the connections' own CRUD is the provider_connections flow).
   */
  async linked_profile(s) {
    const P = '/api/llm/provider-connections';
    const created = await s.api(P, { method: 'POST', body: { display_name: 'Parity team', api_key: KEY, base_url: s.llm.url } });
    const id = created.body.id;
    const shape = (c: any) => c && [typeof c.id, c.display_name, c.provider, c.base_url === s.llm.url ? 'llm-url' : c.base_url, typeof c.created_at, c.api_key_set];
    const listed = ((await s.api(P)).body as any[]).filter((c) => c.id === id).map(shape);
    await s.api('/api/profiles/parity-linked', { method: 'POST', body: { llm: { model: 'openai/linked-model', api_key: 'sk-inline', provider_connection_id: id } } });
    const profile = mine((await s.api('/api/profiles')).body).profiles.map((p: any) => [p.name, p.base_url, p.provider_connection_id === id, p.provider_connection_broken, p.api_key_set]);
    const detail = (await s.api('/api/profiles/parity-linked')).body.config;
    const conv = (await s.api('/api/conversations', { method: 'POST', body: startBody(s) })).body.id;
    const switched = (await s.api(`/api/conversations/${conv}/switch_profile`, { method: 'POST', body: { profile_name: 'parity-linked' } })).status;
    s.llm.push({ toolCalls: [{ name: 'finish', arguments: { message: 'linked' } }] });
    await s.api(`/api/conversations/${conv}/events`, { method: 'POST', body: { role: 'user', content: [{ type: 'text', text: 'hello' }], run: true } });
    await until('the run to end', async () => ['finished', 'error', 'stuck', 'paused'].includes((await s.api(`/api/conversations/${conv}`)).body.execution_status));
    const call = s.llm.requests[0];
    const rotated = shape((await s.api(`${P}/${id}`, { method: 'PATCH', body: { api_key: 'sk-rotated-parity-key', display_name: 'Renamed' } })).body);
    const guarded = await s.api(`${P}/${id}`, { method: 'DELETE' });
    await s.api('/api/profiles/parity-linked', { method: 'DELETE' });
    const deleted = await s.api(`${P}/${id}`, { method: 'DELETE' });
    const again = await s.api(`${P}/${id}`, { method: 'DELETE' });
    await s.api(`/api/conversations/${conv}`, { method: 'DELETE' });
    return {
      created: [created.status, shape(created.body)],
      listed,
      profile,
      detail: [detail?.provider_connection_id === id, detail?.api_key, detail?.base_url],
      switched,
      call: [call?.model, call?.headers['authorization'] === `Bearer ${KEY}`],
      rotated,
      guarded: [guarded.status, guarded.body],
      deleted: [deleted.status, shape(deleted.body)],
      again: [again.status, String(again.body?.detail).replace(id, '<id>')],
    };
  },

  /**
   * Agent profiles: the seeded default, save (id kept, revision bumped), read, rename, activate,
   * the LLM-profile guard, and a conversation launched from one (its model, key and launch record).
   */
  async agent_profiles(s) {
    const A = '/api/agent-profiles';
    const first = await s.api(A);
    const seeded = (first.body.profiles ?? []).find((p: any) => p.name === 'default');
    await s.api('/api/profiles/parity-agent-llm', { method: 'POST', body: { llm: { model: 'openai/agent-model', base_url: s.llm.url, api_key: KEY } } });
    const saved = await s.api(`${A}/parity-agent`, { method: 'POST', body: { llm_profile_ref: 'parity-agent-llm', system_message_suffix: 'Be brief.', tools: [{ name: 'terminal', params: {} }] } });
    const resaved = await s.api(`${A}/parity-agent`, { method: 'POST', body: { llm_profile_ref: 'parity-agent-llm', system_message_suffix: 'Be brief.', tools: [{ name: 'terminal', params: {} }] } });
    const detail = await s.api(`${A}/parity-agent`);
    const profile = detail.body.profile ?? {};
    const missing = await s.api(`${A}/parity-missing`);
    const noRef = await s.api(`${A}/parity-x`, { method: 'POST', body: {} });
    const extra = await s.api(`${A}/parity-x`, { method: 'POST', body: { llm_profile_ref: 'a', surprise: 1 } });
    const guarded = await s.api('/api/profiles/parity-agent-llm', { method: 'DELETE' });
    const activated = await s.api(`${A}/${profile.id}/activate`, { method: 'POST' });
    const activateMissing = await s.api(`${A}/not-an-id/activate`, { method: 'POST' });
    const active = (await s.api(A)).body.active_agent_profile_id === profile.id;
    const renamed = await s.api(`${A}/parity-agent/rename`, { method: 'POST', body: { new_name: 'parity-agent2' } });
    const afterRename = (await s.api(A)).body.active_agent_profile_id === profile.id;
    s.llm.push({ toolCalls: [{ name: 'finish', arguments: { message: 'from the agent profile' } }] });
    const conv = await s.api('/api/conversations', { method: 'POST', body: { agent_profile_id: profile.id, workspace: { kind: 'LocalWorkspace', working_dir: s.workDir }, autotitle: false, initial_message: { role: 'user', content: [{ type: 'text', text: 'hi' }] } } });
    const end = conv.status === 201 ? await until('the run to end', async () => {
      const st = (await s.api(`/api/conversations/${conv.body.id}`)).body.execution_status;
      return ['finished', 'error', 'stuck', 'paused'].includes(st) ? st : undefined;
    }) : null;
    const call = s.llm.requests[0];
    const unknownLaunch = await s.api('/api/conversations', { method: 'POST', body: { agent_profile_id: '00000000-0000-4000-8000-000000000000', workspace: { kind: 'LocalWorkspace', working_dir: s.workDir } } });
    if (conv.status === 201) await s.api(`/api/conversations/${conv.body.id}`, { method: 'DELETE' });
    if (seeded) await s.api(`${A}/${seeded.id}/activate`, { method: 'POST' });
    const deleted = await s.api(`${A}/parity-agent2`, { method: 'DELETE' });
    await s.api('/api/profiles/parity-agent-llm', { method: 'DELETE' });
    return {
      first: [first.status, Boolean(seeded), seeded && [seeded.agent_kind, seeded.revision, seeded.mcp_server_refs], first.body.active_agent_profile_id === seeded?.id],
      saved: [saved.status, saved.body],
      resaved: resaved.status,
      detail_fields: Object.keys(profile).sort(),
      detail: [detail.status, detail.body.name, profile.revision, profile.llm_profile_ref, profile.agent, profile.tools, profile.system_message_suffix, profile.condenser, profile.verification, profile.tool_concurrency_limit],
      missing: [missing.status, missing.body],
      no_ref: [noRef.status, locs(noRef.body)],
      extra: [extra.status, locs(extra.body)],
      guarded: [guarded.status, guarded.body],
      activated: [activated.status, activated.body?.message === `Agent profile '${profile.id}' activated`, activated.body?.agent_settings_applied],
      activate_missing: [activateMissing.status, activateMissing.body],
      active,
      renamed: [renamed.status, renamed.body, afterRename],
      launch: [conv.status, end, conv.body?.launched_agent_profile && { ...conv.body.launched_agent_profile, agent_profile_id: conv.body.launched_agent_profile.agent_profile_id === profile.id }],
      launch_llm: [conv.body?.agent?.llm?.model, conv.body?.agent?.llm?.base_url === s.llm.url],
      model_call: [call?.model, call?.headers['authorization'] === `Bearer ${KEY}`, JSON.stringify(call?.messages?.[0]?.content ?? '').includes('Be brief.'), (call?.tools ?? []).map((x: any) => x.function.name).includes('file_editor')],
      unknown_launch: unknownLaunch.status,
      deleted: [deleted.status, deleted.body],
    };
  },

  /**
   * The launch preview (materialize) of a stored agent profile and of drafts: dangling LLM and MCP
   * references and unusable tools reported in the body (200), the resolved settings with their
   * secrets masked, and the 404 and 422 answers.
   */
  async agent_profile_materialize(s) {
    const A = '/api/agent-profiles';
    const M = (name: string, body?: unknown) => s.api(`${A}/${name}/materialize`, { method: 'POST', ...(body !== undefined ? { body } : {}) });
    const MCP_TOKEN = 'Bearer parity-mcp-token';
    const view = (r: { status: number; body: any }) => {
      const { resolved_settings: settings, ...rest } = r.body ?? {};
      return [r.status, rest, settings === null ? null : typeof settings];
    };
    const terminal = [{ name: 'terminal', params: {} }];
    await s.api(`${A}/parity-mat`, { method: 'POST', body: { llm_profile_ref: 'parity-mat-llm', mcp_server_refs: ['parity-web', 'parity-nope'], secret_refs: ['PARITY_A'], tools: [...terminal, { name: 'parity_no_such_tool', params: {} }], persona: 'You review.' } });
    const danglingAll = await M('parity-mat');
    await s.api('/api/profiles/parity-mat-llm', { method: 'POST', body: { llm: { model: 'openai/mat-model', base_url: s.llm.url, api_key: KEY } } });
    await s.api('/api/settings', { method: 'PATCH', body: { agent_settings_diff: { mcp_config: { 'parity-web': { url: 'http://127.0.0.1:9/mcp', headers: { Authorization: MCP_TOKEN } } } } } });
    const danglingMcp = await M('parity-mat');
    const noBody = await M('parity-mat', {});
    const nullDraft = await M('parity-mat', { profile: null });
    const draft = await M('parity-mat', { profile: { name: 'parity-other', llm_profile_ref: 'parity-mat-llm', mcp_server_refs: ['parity-web', 'parity-web'], tools: terminal, system_message_suffix: 'Be brief.' } });
    const settings = draft.body?.resolved_settings ?? {};
    const llmMissing = await M('parity-unsaved', { profile: { llm_profile_ref: 'parity-no-llm', mcp_server_refs: ['parity-web'], tools: terminal } });
    const defaultTools = await M('parity-unsaved', { profile: { llm_profile_ref: 'parity-mat-llm', mcp_server_refs: [] } });
    const unsaved = await s.api(`${A}/parity-unsaved`);
    const missing = await M('parity-missing');
    const badDraft = await M('parity-mat', { profile: { surprise: 1 } });
    const notObject = await M('parity-mat', { profile: 3 });
    const extra = await M('parity-mat', { x: 1 });
    const badName = await M('-bad');
    await s.api(`${A}/parity-mat`, { method: 'DELETE' });
    await s.api('/api/settings/mcp/parity-web', { method: 'DELETE' });
    await s.api('/api/profiles/parity-mat-llm', { method: 'DELETE' });
    return {
      diagnostics_fields: Object.keys(danglingAll.body ?? {}).sort(),
      dangling_all: view(danglingAll),
      dangling_mcp: view(danglingMcp),
      no_body: JSON.stringify(view(noBody)) === JSON.stringify(view(danglingMcp)),
      null_draft: JSON.stringify(view(nullDraft)) === JSON.stringify(view(danglingMcp)),
      draft: view(draft),
      draft_settings: [settings.llm?.model, settings.llm?.base_url === s.llm.url, settings.llm?.api_key, settings.tools],
      resolved_settings_fields: Object.keys(settings).sort(),
      no_secret: !JSON.stringify(draft.body).includes(KEY) && !JSON.stringify(draft.body).includes('parity-mcp-token'),
      llm_missing: view(llmMissing),
      default_tools: [defaultTools.status, defaultTools.body?.valid, defaultTools.body?.errors, defaultTools.body?.unusable_tools],
      unsaved: unsaved.status,
      missing: [missing.status, missing.body],
      bad_draft: [badDraft.status, locs(badDraft.body)],
      not_object: [notObject.status, locs(notObject.body)],
      extra: [extra.status, locs(extra.body)],
      bad_name: [badName.status, locs(badName.body)],
    };
  },

  /**
   * A launch from an agent profile applies the whole profile: the user's skills less `disabled_skills`
   * (materialize's resolved_skills, the start's agent_context, the system prompt), the condenser (its
   * summary request and the summary in the next call), the meta-profile references of the routing
   * tool (dangling: reported and refused alike), the critic and the routing tool (previewed; the
   * critic's calls themselves are compared by the flows of flows-critic.ts).
   */
  async agent_profile_launch_applied(s) {
    const A = '/api/agent-profiles';
    // The user's skills are read from HOME: OpenHands' is the directory above its work dir; ours (in
    // this process) is pointed there for the flow, so both read the same kind of tree.
    const home = dirname(s.workDir);
    const oldHome = process.env['HOME'];
    if (s.name === 'agentyard') process.env['HOME'] = home;
    const skillsDir = join(home, '.agents', 'skills');
    for (const [name, text] of [['parity-kept', 'PARITY-KEPT-DESCRIPTION'], ['parity-off', 'PARITY-OFF-DESCRIPTION']]) {
      mkdirSync(join(skillsDir, name!), { recursive: true });
      writeFileSync(join(skillsDir, name!, 'SKILL.md'), `---\nname: ${name}\ndescription: ${text}\n---\nBody of ${name}.\n`);
    }
    try {
      await s.api('/api/profiles/parity-launch-llm', { method: 'POST', body: { llm: { model: 'openai/launch-model', base_url: s.llm.url, api_key: KEY } } });
      const profile = { llm_profile_ref: 'parity-launch-llm', tools: [{ name: 'terminal', params: {} }], disabled_skills: ['parity-off'], public_skills: [], condenser: { max_size: 20, keep_first: 1 } };
      await s.api(`${A}/parity-launch`, { method: 'POST', body: profile });
      const id = (await s.api(`${A}/parity-launch`)).body.profile?.id;
      const preview = (await s.api(`${A}/parity-launch/materialize`, { method: 'POST' })).body ?? {};
      const M = async (extra: Record<string, unknown>) => {
        const r = await s.api(`${A}/parity-draft/materialize`, { method: 'POST', body: { profile: { llm_profile_ref: 'parity-launch-llm', ...extra } } });
        return [r.status, r.body?.valid, r.body?.errors, r.body?.meta_profile_ref, r.body?.dangling_meta_profile_ref, r.body?.dangling_meta_profile_llm_refs];
      };
      // Enough steps to outgrow max_size (20 events), then the summary, then the end.
      for (let i = 1; i <= 10; i++) s.llm.push({ toolCalls: [{ name: 'think', arguments: { thought: `step ${i}` } }] });
      s.llm.push({ content: 'PARITY-SUMMARY' });
      for (let i = 1; i <= 3; i++) s.llm.push({ toolCalls: [{ name: 'think', arguments: { thought: `after ${i}` } }] });
      s.llm.push({ toolCalls: [{ name: 'finish', arguments: { message: 'done' } }] });
      const conv = await s.api('/api/conversations', { method: 'POST', body: { agent_profile_id: id, workspace: { kind: 'LocalWorkspace', working_dir: s.workDir }, autotitle: false, initial_message: { role: 'user', content: [{ type: 'text', text: 'think a lot' }] } } });
      const end = conv.status === 201 ? await until('the run to end', async () => {
        const st = (await s.api(`/api/conversations/${conv.body.id}`)).body.execution_status;
        return ['finished', 'error', 'stuck', 'paused'].includes(st) ? st : undefined;
      }) : null;
      const full = conv.status === 201 ? (await s.api(`/api/conversations/${conv.body.id}?include_skills=true`)).body : {};
      const context = full.agent?.agent_context ?? {};
      const calls = s.llm.requests;
      const system = JSON.stringify(calls[0]?.messages?.[0]?.content ?? '');
      const summaryAt = calls.findIndex((c) => !c.tools?.length);
      const afterSummary = JSON.stringify(calls[summaryAt + 1]?.messages ?? []);
      if (conv.status === 201) await s.api(`/api/conversations/${conv.body.id}`, { method: 'DELETE' });

      // Dangling meta-profile references: the preview reports them, the launch refuses them.
      const noMeta = await M({ enable_classify_and_switch_llm_tool: true, meta_profile_ref: 'parity-no-router' });
      await s.api('/api/meta-profiles/parity-router', { method: 'POST', body: { classifier_model: 'parity-launch-llm', classes: [{ description: 'ui', model: 'parity-no-vision' }, { description: 'rest', model: 'parity-launch-llm' }] } });
      const noLlm = await M({ enable_classify_and_switch_llm_tool: true, meta_profile_ref: 'parity-router' });
      await s.api(`${A}/parity-routed`, { method: 'POST', body: { llm_profile_ref: 'parity-launch-llm', enable_classify_and_switch_llm_tool: true, meta_profile_ref: 'parity-router', mcp_server_refs: ['parity-no-server'] } });
      const routedId = (await s.api(`${A}/parity-routed`)).body.profile?.id;
      const refused = await s.api('/api/conversations', { method: 'POST', body: { agent_profile_id: routedId, workspace: { kind: 'LocalWorkspace', working_dir: s.workDir } } });
      const unrouted = await M({ meta_profile_ref: 'parity-no-router' });
      await s.api('/api/profiles/parity-no-vision', { method: 'POST', body: { llm: { model: 'openai/vision', base_url: s.llm.url, api_key: KEY } } });
      const routed = await M({ enable_classify_and_switch_llm_tool: true, meta_profile_ref: 'parity-router' });
      const critic = await M({ verification: { critic_enabled: true } });
      const criticWithService = await M({ verification: { critic_enabled: true, critic_server_url: 'http://127.0.0.1:9/vllm', enable_iterative_refinement: true } });
      const condensers = [await M({ condenser: { condenser_kind: 'no_op' } }), await M({ condenser: { enabled: false } })];

      for (const name of ['parity-launch', 'parity-routed']) await s.api(`${A}/${name}`, { method: 'DELETE' });
      await s.api('/api/meta-profiles/parity-router', { method: 'DELETE' });
      for (const name of ['parity-launch-llm', 'parity-no-vision']) await s.api(`/api/profiles/${name}`, { method: 'DELETE' });
      return {
        preview: [preview.valid, preview.errors, preview.disabled_skills, preview.public_skills, preview.resolved_skills],
        launch: [conv.status, end],
        start_context: [(context.skills ?? []).map((k: any) => k.name), context.disabled_skills, context.load_user_skills],
        system_prompt: [system.includes('PARITY-KEPT-DESCRIPTION'), system.includes('PARITY-OFF-DESCRIPTION')],
        offered: (calls[0]?.tools ?? []).map((x: any) => x.function.name).sort(),
        condensed: [calls.length, summaryAt, afterSummary.includes('PARITY-SUMMARY'), afterSummary.includes('step 1"')],
        no_meta: noMeta,
        no_meta_llm: noLlm,
        refused: [refused.status],
        unrouted,
        routed,
        critic,
        critic_with_service: criticWithService,
        condensers,
      };
    } finally {
      if (s.name === 'agentyard') process.env['HOME'] = oldHome;
      rmSync(join(home, '.agents'), { recursive: true, force: true });
    }
  },

  /**
   * The public tier of a profile's skill catalog (the extensions repository both servers read, its
   * default marketplace): `public_skills` keeps the named ones, null keeps all less `disabled_skills`;
   * the preview's resolved_skills and the launched conversation's skills.
   */
  async agent_profile_public_skills(s) {
    const A = '/api/agent-profiles';
    repositories();
    const oldHome = process.env['HOME'];
    if (s.name === 'agentyard') process.env['HOME'] = dirname(s.workDir);
    try {
      await s.api('/api/profiles/parity-pub-llm', { method: 'POST', body: { llm: { model: 'openai/pub-model', base_url: s.llm.url, api_key: KEY } } });
      const out: Record<string, unknown> = {};
      for (const [name, extra] of [['parity-pub-some', { public_skills: ['alpha'] }], ['parity-pub-all', { disabled_skills: ['alpha'] }]] as const) {
        await s.api(`${A}/${name}`, { method: 'POST', body: { llm_profile_ref: 'parity-pub-llm', tools: [], ...extra } });
        const preview = (await s.api(`${A}/${name}/materialize`, { method: 'POST' })).body ?? {};
        s.llm.push({ toolCalls: [{ name: 'finish', arguments: { message: 'done' } }] });
        const id = (await s.api(`${A}/${name}`)).body.profile?.id;
        const conv = await s.api('/api/conversations', { method: 'POST', body: { agent_profile_id: id, workspace: { kind: 'LocalWorkspace', working_dir: s.workDir }, autotitle: false } });
        const full = conv.status === 201 ? (await s.api(`/api/conversations/${conv.body.id}?include_skills=true`)).body : {};
        const context = full.agent?.agent_context ?? {};
        out[name] = { preview: [preview.valid, preview.resolved_skills], launch: conv.status, skills: (context.skills ?? []).map((k: any) => k.name), load_public_skills: context.load_public_skills };
        if (conv.status === 201) await s.api(`/api/conversations/${conv.body.id}`, { method: 'DELETE' });
        await s.api(`${A}/${name}`, { method: 'DELETE' });
      }
      await s.api('/api/profiles/parity-pub-llm', { method: 'DELETE' });
      return out;
    } finally {
      if (s.name === 'agentyard') process.env['HOME'] = oldHome;
    }
  },

  /**
   * A launch with the model-routing tool on: the model calls route_task_to_model, the classifier (the
   * meta-profile's classifier_model, an LLM profile on the scripted model) answers a class number, and
   * the next step goes to that class's LLM profile on a second scripted model, with its key. Then a
   * classifier answer that numbers no class: an error observation, no switch.
   */
  async agent_profile_routed_run(s) {
    const A = '/api/agent-profiles';
    const KEY2 = 'sk-parity-coder-key';
    const second = await startScriptedLlm();
    const ended = (id: string) => until('the run to end', async () => {
      const st = (await s.api(`/api/conversations/${id}`)).body.execution_status;
      return ['finished', 'error', 'stuck', 'paused'].includes(st) ? st : undefined;
    });
    try {
      await s.api('/api/profiles/parity-route-planner', { method: 'POST', body: { llm: { model: 'openai/planner-model', base_url: s.llm.url, api_key: KEY } } });
      await s.api('/api/profiles/parity-route-coder', { method: 'POST', body: { llm: { model: 'openai/coder-model', base_url: second.url, api_key: KEY2 } } });
      await s.api('/api/meta-profiles/parity-route-meta', { method: 'POST', body: { classifier_model: 'parity-route-planner', classes: [{ description: 'UI work', model: 'parity-route-planner' }, { description: 'Backend code', model: 'parity-route-coder' }] } });
      await s.api(`${A}/parity-route`, { method: 'POST', body: { llm_profile_ref: 'parity-route-planner', tools: [{ name: 'terminal', params: {} }], enable_classify_and_switch_llm_tool: true, meta_profile_ref: 'parity-route-meta' } });
      const id = (await s.api(`${A}/parity-route`)).body.profile?.id;
      const launch = (text: string) => s.api('/api/conversations', { method: 'POST', body: { agent_profile_id: id, workspace: { kind: 'LocalWorkspace', working_dir: s.workDir }, autotitle: false, initial_message: { role: 'user', content: [{ type: 'text', text }] } } });

      s.llm.push({ toolCalls: [{ name: 'route_task_to_model', arguments: {} }] });
      s.llm.push({ content: '2' });
      second.push({ toolCalls: [{ name: 'finish', arguments: { message: 'indexed' } }] });
      const conv = await launch('add an index to the orders table');
      const end = conv.status === 201 ? await ended(conv.body.id) : null;
      const info = conv.status === 201 ? (await s.api(`/api/conversations/${conv.body.id}`)).body : {};
      const events = conv.status === 201 ? ((await s.api(`/api/conversations/${conv.body.id}/events/search?limit=100`)).body.items as any[]) : [];
      const [first, classifier] = s.llm.requests;
      const next = second.requests[0];
      const route: any = first?.tools?.find((x: any) => x.function.name === 'route_task_to_model');
      const obs = events.find((e) => e.kind === 'ObservationEvent' && e.tool_name === 'route_task_to_model')?.observation ?? {};
      const actionAt = events.findIndex((e) => e.kind === 'ActionEvent' && e.tool_name === 'route_task_to_model');
      const obsAt = events.findIndex((e) => e.kind === 'ObservationEvent' && e.tool_name === 'route_task_to_model');
      const between = events.slice(actionAt + 1, obsAt).map((e) => (e.kind === 'ConversationStateUpdateEvent' ? `${e.kind}:${e.key}` : e.kind));
      if (conv.status === 201) await s.api(`/api/conversations/${conv.body.id}`, { method: 'DELETE' });

      // A classifier answer that numbers no class: the tool says so, nothing switches.
      const plannerCalls = s.llm.requests.length;
      s.llm.push({ toolCalls: [{ name: 'route_task_to_model', arguments: {} }] });
      s.llm.push({ content: 'none of them' });
      s.llm.push({ toolCalls: [{ name: 'finish', arguments: { message: 'stayed' } }] });
      const missed = await launch('tidy up');
      const missedEnd = missed.status === 201 ? await ended(missed.body.id) : null;
      const missedEvents = missed.status === 201 ? ((await s.api(`/api/conversations/${missed.body.id}/events/search?limit=100`)).body.items as any[]) : [];
      const missedObs = missedEvents.find((e) => e.kind === 'ObservationEvent' && e.tool_name === 'route_task_to_model')?.observation ?? {};
      const missedModel = missed.status === 201 ? (await s.api(`/api/conversations/${missed.body.id}`)).body.agent?.llm?.model : null;
      if (missed.status === 201) await s.api(`/api/conversations/${missed.body.id}`, { method: 'DELETE' });

      await s.api(`${A}/parity-route`, { method: 'DELETE' });
      await s.api('/api/meta-profiles/parity-route-meta', { method: 'DELETE' });
      for (const name of ['parity-route-planner', 'parity-route-coder']) await s.api(`/api/profiles/${name}`, { method: 'DELETE' });
      return {
        launch: [conv.status, end],
        offered: Boolean(route),
        tool_parameters: Object.keys(route?.function?.parameters?.properties ?? {}).sort(),
        tool_required: route?.function?.parameters?.required ?? [],
        action: events[actionAt]?.action,
        classifier_call: [classifier?.model, classifier?.headers['authorization'] === `Bearer ${KEY}`, (classifier?.tools ?? []).length, classifier?.messages?.map((m: any) => m.role)],
        classifier_prompt: [JSON.stringify(classifier?.messages ?? []).includes('1. UI work'), JSON.stringify(classifier?.messages ?? []).includes('add an index to the orders table')],
        next_call: [next?.model, next?.headers['authorization'] === `Bearer ${KEY2}`, JSON.stringify(next?.messages ?? []).includes('parity-route-coder')],
        observation: [obs.kind, obs.is_error, obs.chosen_class, obs.model, obs.active_model],
        between,
        llm_after: [info.agent?.llm?.model, info.agent?.llm?.base_url === second.url, info.agent?.llm?.usage_id],
        // The routing's buckets (classifier, profile switched to), then the rest (the launched LLM's, the condenser's).
        usage_ids: Object.keys(info.stats?.usage_to_metrics ?? {}).filter((k) => /^(classifier|profile):/.test(k)).sort(),
        other_usage_ids: Object.keys(info.stats?.usage_to_metrics ?? {}).filter((k) => !/^(classifier|profile):/.test(k)).sort(),
        missed: [missed.status, missedEnd, s.llm.requests.length - plannerCalls, missedObs.kind, missedObs.is_error, missedObs.model ?? null, missedModel],
      };
    } finally {
      await second.close();
    }
  },

  /** Meta-profiles: saved, listed, read, refused when they cannot route, activated, deleted. */
  async meta_profiles(s) {
    const M = '/api/meta-profiles';
    const classes = [{ description: 'UI work', model: 'parity-vision' }, { description: 'everything else', model: 'parity-fast' }];
    const saved = await s.api(`${M}/parity-router`, { method: 'POST', body: { classifier_model: 'parity-fast', classes } });
    const direct = await s.api(`${M}/parity-direct`, { method: 'POST', body: { classifier_model: 'parity-fast', prompt_template: 'Pick for: {{ instance_text }}' } });
    const list = (await s.api(M)).body;
    const detail = await s.api(`${M}/parity-router`);
    const noRoute = await s.api(`${M}/parity-x`, { method: 'POST', body: { classifier_model: 'parity-fast' } });
    const noPlaceholder = await s.api(`${M}/parity-x`, { method: 'POST', body: { classifier_model: 'parity-fast', prompt_template: 'nothing to fill' } });
    const noClassifier = await s.api(`${M}/parity-x`, { method: 'POST', body: { classes } });
    const missing = await s.api(`${M}/parity-missing`);
    const activated = await s.api(`${M}/parity-router/activate`, { method: 'POST' });
    const active = (await s.api(M)).body.active_meta_profile;
    const deleted = await s.api(`${M}/parity-router`, { method: 'DELETE' });
    await s.api(`${M}/parity-direct`, { method: 'DELETE' });
    const after = (await s.api(M)).body;
    return {
      saved: [saved.status, saved.body],
      direct: direct.status,
      list: (list.meta_profiles ?? []).filter((m: any) => m.name.startsWith('parity-')),
      detail: [detail.status, detail.body],
      no_route: [noRoute.status, locs(noRoute.body)],
      no_placeholder: [noPlaceholder.status, locs(noPlaceholder.body)],
      no_classifier: [noClassifier.status, locs(noClassifier.body)],
      missing: [missing.status, missing.body],
      activated: [activated.status, activated.body],
      active,
      deleted: [deleted.status, deleted.body],
      after: [(after.meta_profiles ?? []).filter((m: any) => m.name.startsWith('parity-')), after.active_meta_profile],
    };
  },

  /**
   * The settings' active_meta_profile: an unknown name refused (404) with nothing changed, a stored one
   * recorded (PATCH and /activate), shown by /api/meta-profiles, cleared by null and by deleting it.
   */
  async settings_active_meta_profile(s) {
    const M = '/api/meta-profiles';
    const patch = (body: unknown) => s.api('/api/settings', { method: 'PATCH', body });
    const unknown = await patch({ active_meta_profile: 'parity-no-meta' });
    const before = (await s.api('/api/settings')).body.active_meta_profile;
    await s.api(`${M}/parity-meta`, { method: 'POST', body: { classifier_model: 'parity-fast', classes: [{ description: 'all', model: 'parity-fast' }] } });
    const set = await patch({ active_meta_profile: 'parity-meta' });
    const listed = (await s.api(M)).body.active_meta_profile;
    const cleared = await patch({ active_meta_profile: null });
    const activated = await s.api(`${M}/parity-meta/activate`, { method: 'POST' });
    const read = (await s.api('/api/settings')).body.active_meta_profile;
    await s.api(`${M}/parity-meta`, { method: 'DELETE' });
    const after = [(await s.api('/api/settings')).body.active_meta_profile, (await s.api(M)).body.active_meta_profile];
    return {
      unknown: [unknown.status, unknown.body],
      before,
      set: [set.status, set.body?.active_meta_profile],
      listed,
      cleared: [cleared.status, cleared.body?.active_meta_profile],
      activated: [activated.status, activated.body],
      read,
      after,
    };
  },

  /**
   * The ChatGPT subscription routes that need no sign-in (a sign-in needs auth.openai.com, which
   * OpenHands cannot be pointed away from: ours is tested against a stand-in, subscription.test.ts).
   */
  async llm_subscription_signed_out(s) {
    const P = '/api/llm/subscription/openai';
    const logout = await s.api(`${P}/logout`, { method: 'POST' });
    const unknown = await s.api(`${P}/device/poll`, { method: 'POST', body: { device_code: 'parity-never-started' } });
    const missing = await s.api(`${P}/device/poll`, { method: 'POST', body: {} });
    const wrongType = await s.api(`${P}/device/poll`, { method: 'POST', body: { device_code: 5 } });
    return {
      status: (await s.api(`${P}/status`)).body,
      logout: [logout.status, logout.body],
      after_logout: (await s.api(`${P}/status`)).body,
      poll_unknown: [unknown.status, unknown.body],
      poll_missing: [missing.status, locs(missing.body)],
      poll_wrong_type: [wrongType.status, locs(wrongType.body)],
    };
  },

  /** The LLM listings, compared whole (by digest: thousands of model names). */
  async llm_listings(s) {
    const get = async (path: string) => {
      const r = await s.api(path);
      return [r.status, r.status === 200 ? digest(r.body) : r.body];
    };
    const providers = (await s.api('/api/llm/providers')).body.providers ?? [];
    return {
      providers: await get('/api/llm/providers'),
      provider_count: providers.length,
      models: await get('/api/llm/models'),
      models_anthropic: await get('/api/llm/models?provider=anthropic'),
      models_openrouter: await get('/api/llm/models?provider=openrouter'),
      models_unknown: (await s.api('/api/llm/models?provider=no-such-provider')).body,
      verified: await get('/api/llm/models/verified'),
      subscription_models: await get('/api/llm/subscription/openai/models'),
      subscription_status: (await s.api('/api/llm/subscription/openai/status')).body,
    };
  },
};
