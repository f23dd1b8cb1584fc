// Differential flow for the forms of a regular (non-ACP) agent's `mcp_config`: OpenHands 1.58's
// server map (`{name: server}`), the `{"mcpServers": ...}` form of 1.44 and its clients, a disabled
// server, and servers 1.58 refuses (an unknown field, neither command nor url). What is compared:
// the start's status and 422 locations, the tools the model is offered (the MCP server's tools, from
// the stdio test server), and what ConversationInfo shows of the servers (no env value).
import { STDIO_SERVER } from '../../src/testing/mcp/server.ts';
import { until } from '../../src/testing/until.ts';
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
