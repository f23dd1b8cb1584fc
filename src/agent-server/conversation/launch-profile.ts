// A start request naming an agent profile (`agent_profile_id`, OpenHands 1.58) made into one with its
// `agent`: the profile's LLM profile (model, endpoint, key; a provider connection read at use), its
// tools (none named: OpenHands' default set), its persona and system prompt suffix (appended to the
// system prompt), its tool concurrency; `secret_refs` keeps only the secrets it names; the MCP
// servers of the stored settings (/api/settings), all of them or those `mcp_server_refs` names (a
// name not stored is a 422, as OpenHands' unresolved references). What the agent loop here has no
// counterpart for is not applied: the skill lists, the condenser and the critic settings, the
// meta-profile. The conversation records which profile and revision launched
// it (`launched_agent_profile`).
import type { StartConversationRequest } from '../../api/agent-server/index.ts';
import type { McpServerSettings } from '../../api/agent-server/settings.ts';
import { BadRequest, Invalid, NotFound } from '../../api/errors.ts';
import type { AgentProfileStore } from '../store/agent-profile-store.ts';
import type { ProfileStore } from '../store/profile-store.ts';

/** The tools of OpenHands' default agent settings (finish and think are built in). */
const DEFAULT_TOOLS = ['terminal', 'file_editor', 'task_tracker'];

export interface LaunchedAgentProfile {
  agent_profile_id: string;
  revision: number;
  secret_refs: string[] | null;
  /** A per-launch LLM profile override (OpenHands' agent_launch_additions, not taken here): null, the profile's own was used. */
  llm_profile_ref: string | null;
}

export type LaunchedRequest = StartConversationRequest & { launched_agent_profile?: LaunchedAgentProfile };

/**
 * The stored MCP servers a profile launches with (OpenHands' _compute_mcp_filter): all for no refs,
 * else the named ones, in our agent's `mcp_config` shape. Disabled ones are left out.
 */
function profileMcp(stored: Record<string, McpServerSettings>, refs: string[] | null, profileName: string): Record<string, unknown> | undefined {
  const names = refs ?? Object.keys(stored);
  const dangling = names.filter((n) => !stored[n]);
  if (dangling.length) {
    throw new Invalid([{ loc: ['body', 'agent_profile_id'], msg: `Agent profile '${profileName}' references MCP servers that are not in the settings: ${dangling.join(', ')}`, type: 'value_error' }]);
  }
  const servers = Object.fromEntries(names.filter((n) => stored[n]!.enabled !== false).map((n) => {
    const { enabled: _enabled, ...server } = stored[n]!;
    return [n, server];
  }));
  return Object.keys(servers).length ? { mcpServers: servers } : undefined;
}

export function launchFromProfile(
  req: StartConversationRequest,
  stores: { agentProfiles: AgentProfileStore; profiles: ProfileStore; mcpServers?: () => Record<string, McpServerSettings> },
): LaunchedRequest {
  const id = req.agent_profile_id!;
  const profile = stores.agentProfiles.byId(id);
  if (!profile) throw new NotFound(`Agent profile with id '${id}' not found`);
  const llm = stores.profiles.runnable(profile.llm_profile_ref);
  if (!llm) throw new BadRequest(`Agent profile '${profile.name}' references LLM profile '${profile.llm_profile_ref}', which does not exist`);
  const suffix = [profile.persona, profile.system_message_suffix].filter((t): t is string => Boolean(t)).join('\n\n');
  const allowed = profile.secret_refs;
  const mcp = stores.mcpServers ? profileMcp(stores.mcpServers(), profile.mcp_server_refs ?? null, profile.name) : undefined;
  return {
    ...req,
    agent: {
      kind: 'Agent',
      llm: { ...llm.llm, usage_id: 'agent', ...(llm.apiKey !== undefined ? { api_key: llm.apiKey } : {}) },
      tools: (profile.tools ?? DEFAULT_TOOLS.map((name) => ({ name, params: {} }))).map((t) => ({ name: t.name, params: t.params ?? {} })),
      ...(suffix ? { agent_context: { system_message_suffix: suffix } } : {}),
      tool_concurrency_limit: profile.tool_concurrency_limit,
      ...(mcp ? { mcp_config: mcp } : {}),
    },
    ...(allowed && req.secrets ? { secrets: Object.fromEntries(Object.entries(req.secrets).filter(([name]) => allowed.includes(name))) } : {}),
    launched_agent_profile: { agent_profile_id: profile.id, revision: profile.revision, secret_refs: profile.secret_refs, llm_profile_ref: null },
  };
}
