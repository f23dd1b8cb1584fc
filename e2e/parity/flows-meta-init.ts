// Differential flows for 1.58's inline routing LLMs (`meta_profile_llms`: a start request's
// agent_settings, and the stored settings) on the shared servers, and for the deferred start
// (OH_DEFERRED_INIT, POST /api/init with previous_secret_keys), which needs a server of its own:
// one start on each side (deferredServer in servers.ts).
import { until } from '../../src/testing/until.ts';
import { startScriptedLlm } from '../../src/testing/scripted-llm/server.ts';
import WebSocket from 'ws';
import type { Flow } from './flows.ts';
import { deferredServer, type Side } from './servers.ts';

const locs = (body: any) => (Array.isArray(body?.detail) ? body.detail.map((d: any) => JSON.stringify(d.loc)).sort() : body);
/** How a key is shown: the value itself, the mask, a token, or nothing. */
const shown = (value: unknown, key: string) => (value === key ? 'plaintext' : value === '**********' ? 'masked' : typeof value === 'string' && value.startsWith('gAAAAA') ? 'token' : value ?? null);

async function settingsWith(s: Side, expose?: string): Promise<any> {
  return (await s.api('/api/settings', expose ? { headers: { 'x-expose-secrets': expose } } : {})).body?.agent_settings;
}

/** The status a WebSocket upgrade is answered with (101 when it opens). */
function upgradeStatus(url: string): Promise<number> {
  return new Promise((resolve) => {
    const ws = new WebSocket(url);
    ws.on('unexpected-response', (_req, res) => {
      resolve(res.statusCode ?? 0);
      ws.terminate();
    });
    ws.on('open', () => {
      resolve(101);
      ws.close();
    });
    ws.on('error', () => resolve(0));
  });
}

export const META_INIT_FLOWS: Record<string, Flow> = {
  /**
   * A start whose agent_settings carry the routing LLMs inline (no stored profile of those names):
   * the classifier is the inline `parity-inline-cls` (the side's scripted model, its own key), the
   * class's target the inline `parity-inline-coder` (a second scripted model); how the keys are
   * shown; bad entries refused; the stored settings' copy masked unless X-Expose-Secrets.
   */
  async meta_profile_llms_inline(s) {
    const CLS_KEY = 'sk-parity-inline-cls';
    const CODER_KEY = 'sk-parity-inline-coder';
    const second = await startScriptedLlm();
    const view: Record<string, unknown> = {};
    try {
      const settings = {
        agent_kind: 'openhands',
        llm: { model: 'openai/planner-model', base_url: s.llm.url, api_key: 'sk-parity' },
        tools: [{ name: 'terminal', params: {} }],
        enable_classify_and_switch_llm_tool: true,
        condenser: { enabled: false },
        meta_profile: { classifier_model: 'parity-inline-cls', classes: [{ description: 'UI work', model: 'parity-inline-cls' }, { description: 'Backend code', model: 'parity-inline-coder' }] },
        meta_profile_llms: {
          'parity-inline-cls': { model: 'openai/classifier-model', base_url: s.llm.url, api_key: CLS_KEY },
          'parity-inline-coder': { model: 'openai/coder-model', base_url: second.url, api_key: CODER_KEY },
        },
      };
      s.llm.push({ toolCalls: [{ name: 'route_task_to_model', arguments: {} }] }, { content: '2' });
      second.push({ toolCalls: [{ name: 'finish', arguments: { message: 'indexed' } }] });
      const body = { agent_settings: settings, workspace: { kind: 'LocalWorkspace', working_dir: s.workDir }, autotitle: false, initial_message: { role: 'user', content: [{ type: 'text', text: 'add an index' }] } };
      const conv = await s.api('/api/conversations', { method: 'POST', body });
      view['start'] = conv.status;
      if (conv.status === 201) {
        const id = conv.body.id;
        view['end'] = await until('the run to end', async () => {
          const st = (await s.api(`/api/conversations/${id}`)).body.execution_status;
          return ['finished', 'error', 'stuck', 'paused'].includes(st) ? st : undefined;
        });
        const route = (conv.body.agent?.tools ?? []).find((t: any) => t.name === 'ClassifyAndSwitchLLMTool');
        view['tools'] = (conv.body.agent?.tools ?? []).map((t: any) => t.name);
        view['inline_models'] = Object.fromEntries(Object.entries<any>(route?.params?.meta_profile_llms ?? {}).map(([n, l]) => [n, l.model]));
        const info = (await s.api(`/api/conversations/${id}`)).body;
        const inline = info.agent?.tools?.find((t: any) => t.name === 'ClassifyAndSwitchLLMTool')?.params?.meta_profile_llms ?? {};
        view['inline_keys_shown'] = [shown(inline['parity-inline-cls']?.api_key, CLS_KEY), shown(inline['parity-inline-coder']?.api_key, CODER_KEY)];
        const classifier = s.llm.requests[1];
        view['classifier_call'] = [classifier?.model, classifier?.headers['authorization'] === `Bearer ${CLS_KEY}`];
        const next = second.requests[0];
        view['next_call'] = [next?.model, next?.headers['authorization'] === `Bearer ${CODER_KEY}`];
        const events = (await s.api(`/api/conversations/${id}/events/search?limit=100`)).body.items as any[];
        const obs = events.find((e) => e.kind === 'ObservationEvent' && e.tool_name === 'route_task_to_model')?.observation ?? {};
        view['observation'] = [obs.is_error, obs.chosen_class, obs.model, obs.active_model];
        view['llm_after'] = [info.agent?.llm?.model, info.agent?.llm?.usage_id];
        view['routing_usage_ids'] = Object.keys(info.stats?.usage_to_metrics ?? {}).filter((k) => /^(classifier|profile):/.test(k)).sort();
        await s.api(`/api/conversations/${id}`, { method: 'DELETE' });
      }
      // Entries that are no LLM: both refuse the start.
      const bad = await s.api('/api/conversations', { method: 'POST', body: { ...body, initial_message: null, agent_settings: { ...settings, meta_profile_llms: { a: { temperature: 'hot', api_key: 'sk-parity-bad' }, b: 5 } } } });
      view['bad_entries'] = [bad.status, JSON.stringify(bad.body).includes('sk-parity-bad')];
      view['bad_entries_locs'] = locs(bad.body);

      // The stored settings' copy (PATCH /api/settings), masked unless asked for.
      const patched = await s.api('/api/settings', { method: 'PATCH', body: { agent_settings_diff: { meta_profile_llms: { 'parity-stored': { model: 'openai/stored', api_key: 'sk-parity-stored' } } } } });
      view['stored_patch'] = patched.status;
      view['stored_shown'] = await Promise.all([undefined, 'plaintext', 'encrypted'].map(async (e) => shown((await settingsWith(s, e))?.meta_profile_llms?.['parity-stored']?.api_key, 'sk-parity-stored')));
      view['stored_model'] = (await settingsWith(s))?.meta_profile_llms?.['parity-stored']?.model ?? null;
      await s.api('/api/settings', { method: 'PATCH', body: { agent_settings_diff: { meta_profile_llms: { 'parity-stored': null } } } });
      view['stored_removed'] = Object.keys((await settingsWith(s))?.meta_profile_llms ?? {});
    } finally {
      await second.close();
    }
    return view;
  },

  /**
   * A deferred start, one start on each side: a secret stored earlier with key A lies in the server's
   * store; the server boots dormant with another key; before POST /api/init it answers only its
   * health and init routes; POST /api/init gives it a session key, key B and key A as a previous
   * key; then the secret is read with the new session key, and is found sealed again with key B.
   */
  async deferred_init(s) {
    const server = deferredServer(s.name);
    const view: Record<string, unknown> = {};
    try {
      await server.seed({ key: 'parity-key-a', name: 'PARITY_DEFERRED', value: 'parity-deferred-secret' });
      const on = await server.start({ dormantKey: 'parity-dormant-key' });
      try {
        view['ready'] = (await on.api('/ready', { key: null })).status;
        view['init_before'] = await on.api('/api/init', { key: null });
        view['dormant'] = await Promise.all(['/api/settings', '/api/conversations/search', '/v1/models', '/api/profiles'].map(async (p) => (await on.api(p, { key: null })).status));
        view['dormant_with_key'] = (await on.api('/api/conversations/search')).status;
        view['dormant_socket'] = await upgradeStatus(`${on.url.replace('http', 'ws')}/sockets/events/0b6d9c1e-2f4a-4c1b-9a51-1b7f4c9d2e10?session_api_key=x`);
        const init = (body: unknown, key: string | null) => on.api('/api/init', { method: 'POST', body, key: null, headers: key ? { 'x-init-api-key': key } : {} });
        view['no_init_key'] = (await init({}, null)).status;
        const bad = await init({ bogus: 1, max_concurrent_runs: 0 }, 'parity-dormant-key');
        view['bad_body'] = [bad.status, locs(bad.body)];
        view['empty_session_key'] = (await init({ session_api_keys: [''] }, 'parity-dormant-key')).status;
        const done = await init({ session_api_keys: ['parity-user-key'], secret_key: 'parity-key-b', previous_secret_keys: ['parity-key-a'] }, 'parity-dormant-key');
        view['init'] = [done.status, done.body];
        view['init_after'] = await on.api('/api/init', { key: null });
        view['init_again'] = await init({}, 'parity-key-b');
        view['init_old_key'] = (await init({}, 'parity-dormant-key')).status;
        view['old_session_key'] = (await on.api('/api/settings/secrets')).status;
        const secret = await on.api('/api/settings/secrets/PARITY_DEFERRED', { key: 'parity-user-key' });
        view['secret'] = [secret.status, secret.body];
      } finally {
        await on.close();
      }
      view['resealed_with_key_b'] = await server.opensWith({ key: 'parity-key-b', name: 'PARITY_DEFERRED' });
    } finally {
      server.remove();
    }
    return view;
  },
};
