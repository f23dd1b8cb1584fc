// Differential flow for the forms of a regular (non-ACP) agent's `mcp_config`: OpenHands 1.58's
// server map (`{name: server}`), the `{"mcpServers": ...}` form of 1.44 and its clients, a disabled
// server, and servers 1.58 refuses (an unknown field, neither command nor url). What is compared:
// the start's status and 422 locations, the tools the model is offered (the MCP server's tools, from
// the stdio test server), and what ConversationInfo shows of the servers (no env value).
import { STDIO_SERVER } from '../../src/testing/mcp/server.ts';
import { until } from '../../src/testing/until.ts';
import { startScriptedLlm } from '../../src/testing/scripted-llm/server.ts';
import { agent, startBody, type Flow } from './flows.ts';
import type { Side } from './servers.ts';

const ENV_SECRET = 'parity-mcp-env-secret';
const server = { command: process.execPath, args: [STDIO_SERVER], env: { API_TOKEN: ENV_SECRET } };
const locs = (body: any) => (Array.isArray(body?.detail) ? body.detail.map((d: any) => JSON.stringify(d.loc)).sort() : typeof body?.detail);

async function startWith(s: Side, mcpConfig: unknown): Promise<Record<string, unknown>> {
  const created = await s.api('/api/conversations', { method: 'POST', body: startBody(s, { agent: { ...agent(s, ['terminal']), mcp_config: mcpConfig } }) });
  if (created.status !== 201) return { status: created.status, locs: locs(created.body) };
  const id = created.body.id;
  let offered: string[] | undefined;
  s.llm.push((req) => {
    offered = (req.tools ?? []).map((t) => t.function.name).sort();
    return { toolCalls: [{ name: 'finish', arguments: { message: 'done' } }] };
  });
  await s.api(`/api/conversations/${id}/events`, { method: 'POST', body: { role: 'user', content: [{ type: 'text', text: 'Which tools?' }], run: true } });
  const end = await until('the run to end', async () => {
    const st = (await s.api(`/api/conversations/${id}`)).body.execution_status;
    return ['finished', 'error', 'stuck'].includes(st) ? st : undefined;
  });
  const info = (await s.api(`/api/conversations/${id}`)).body;
  const shown = JSON.stringify(info.agent?.mcp_config ?? null);
  await s.api(`/api/conversations/${id}`, { method: 'DELETE' });
  return { status: created.status, end, offered, env_value_shown: shown.includes(ENV_SECRET) };
}

export const MCP_FORM_FLOWS: Record<string, Flow> = {
  async mcp_config_forms(s) {
    return {
      server_map: await startWith(s, { testmcp: server }),
      mcp_servers_wrapper: await startWith(s, { mcpServers: { testmcp: server } }),
      disabled_left_out: await startWith(s, { testmcp: server, off: { ...server, enabled: false } }),
      type_field: await startWith(s, { testmcp: { ...server, type: 'stdio' } }),
      unknown_field: await startWith(s, { testmcp: { ...server, bogus: 1 } }),
      neither_command_nor_url: await startWith(s, { testmcp: { args: ['x'] } }),
    };
  },
};

/**
 * `agent_settings` of kind openhands with the routing fields (enable_classify_and_switch_llm_tool,
 * active_meta_profile, or the inline meta_profile), started on both servers: the classifier runs,
 * the next step goes to the routed LLM profile. Stored profiles carry a `parity-` prefix and are removed.
 */
export const AGENT_SETTINGS_FLOWS: Record<string, Flow> = {
  async agent_settings_routing(s) {
    const second = await startScriptedLlm();
    const view: Record<string, unknown> = {};
    try {
      await s.api('/api/profiles/parity-as-planner', { method: 'POST', body: { llm: { model: 'openai/planner-model', base_url: s.llm.url, api_key: 'sk-parity-as' } } });
      await s.api('/api/profiles/parity-as-coder', { method: 'POST', body: { llm: { model: 'openai/coder-model', base_url: second.url, api_key: 'sk-parity-as-2' } } });
      const meta = { classifier_model: 'parity-as-planner', classes: [{ description: 'UI work', model: 'parity-as-planner' }, { description: 'Backend code', model: 'parity-as-coder' }] };
      await s.api('/api/meta-profiles/parity-as-meta', { method: 'POST', body: meta });
      const settings = { agent_kind: 'openhands', llm: { model: 'openai/planner-model', base_url: s.llm.url, api_key: 'sk-parity-as' }, tools: [{ name: 'terminal', params: {} }], enable_classify_and_switch_llm_tool: true, condenser: { enabled: false } };
      for (const [name, routing] of [['named', { active_meta_profile: 'parity-as-meta' }], ['inline', { active_meta_profile: 'parity-as-missing', meta_profile: meta }]] as const) {
        s.llm.push({ toolCalls: [{ name: 'route_task_to_model', arguments: {} }] }, { content: '2' });
        second.push({ toolCalls: [{ name: 'finish', arguments: { message: 'indexed' } }] });
        const conv = await s.api('/api/conversations', { method: 'POST', body: { agent_settings: { ...settings, ...routing }, workspace: { kind: 'LocalWorkspace', working_dir: s.workDir }, autotitle: false, initial_message: { role: 'user', content: [{ type: 'text', text: 'add an index' }] } } });
        if (conv.status !== 201) {
          view[name] = { status: conv.status, locs: locs(conv.body) };
          continue;
        }
        const end = await until('the run to end', async () => {
          const st = (await s.api(`/api/conversations/${conv.body.id}`)).body.execution_status;
          return ['finished', 'error', 'stuck', 'paused'].includes(st) ? st : undefined;
        });
        const events = (await s.api(`/api/conversations/${conv.body.id}/events/search?limit=100`)).body.items as any[];
        const obs = events.find((e) => e.kind === 'ObservationEvent' && e.tool_name === 'route_task_to_model')?.observation ?? {};
        view[name] = { status: conv.status, end, tools: (conv.body.agent?.tools ?? []).map((t: any) => t.name), routed: { is_error: obs.is_error, model: obs.model, active_model: obs.active_model }, next_model: second.requests.at(-1)?.model };
        await s.api(`/api/conversations/${conv.body.id}`, { method: 'DELETE' });
      }
      await s.api('/api/meta-profiles/parity-as-meta', { method: 'DELETE' });
      for (const p of ['parity-as-planner', 'parity-as-coder']) await s.api(`/api/profiles/${p}`, { method: 'DELETE' });
    } finally {
      await second.close();
    }
    return view;
  },
};
