// A start request naming an agent profile (`agent_profile_id`, OpenHands 1.58) made into one with its
// `agent`: the profile's LLM profile (model, endpoint, key; a provider connection read at use), its
// tools (none named: OpenHands' default set), its persona and system prompt suffix (appended to the
// system prompt), its tool concurrency; `secret_refs` keeps only the secrets it names; the MCP
// servers of the stored settings (/api/settings), all of them or those `mcp_server_refs` names (a
// name not stored is a 422, as OpenHands' unresolved references). What the agent loop here has no
// counterpart for is not applied: the skill lists, the condenser and the critic settings, the
// meta-profile. The conversation records which profile and revision launched
// it (`launched_agent_profile`).
// The resolution itself (`resolveAgentProfile`) never throws on a dangling reference: the launch
// turns what it finds into errors, the launch preview (launch-preview.ts) into a report, so the two
// cannot disagree.
import { split as shellSplit } from 'shlex';
import type { AcpAgentProfile, AgentProfile, AnyAgentProfile } from '../../api/agent-server/agent-profiles.ts';
import type { StartConversationRequest } from '../../api/agent-server/index.ts';
import type { McpServerSettings } from '../../api/agent-server/settings.ts';
import { AgentyardError, BadRequest, Invalid, NotFound } from '../../api/errors.ts';
import type { AgentProfileStore } from '../store/agent-profile-store.ts';
import type { ProfileStore, RunnableProfile } from '../store/profile-store.ts';

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
export type LaunchedAgent = NonNullable<StartConversationRequest['agent']>;

export interface LaunchStores {
  agentProfiles: AgentProfileStore;
  profiles: ProfileStore;
  mcpServers?: () => Record<string, McpServerSettings>;
}

export interface AcpProfileResolution {
  mcpResolved: string[];
  mcpDangling: string[];
  /** Why the profile cannot build an agent (an unbalanced quote in acp_command, custom without a command). */
  error?: string;
  agent?: LaunchedAgent;
}

export interface ProfileResolution {
  /** The LLM profile: undefined when none of that name is stored; an error when it is stored but cannot be used (its provider connection gone, its key unopenable). */
  llm: RunnableProfile | AgentyardError | undefined;
  /** The MCP server names the profile selects that are stored (all stored ones for no refs), in order, once each. */
  mcpResolved: string[];
  /** The names it selects that are not stored. */
  mcpDangling: string[];
  /** The agent a launch starts with; only when every reference resolved. */
  agent?: LaunchedAgent;
}

/** OpenHands' _compute_mcp_filter: no refs selects every stored server; refs split into stored and not, order kept, duplicates once. */
function mcpSelection(stored: Record<string, McpServerSettings>, refs: string[] | null): { resolved: string[]; dangling: string[] } {
  if (refs === null) return { resolved: Object.keys(stored), dangling: [] };
  const names = [...new Set(refs)];
  return { resolved: names.filter((n) => stored[n]), dangling: names.filter((n) => !stored[n]) };
}

/** The selected servers in our agent's `mcp_config` shape; disabled ones are left out. */
function mcpConfig(stored: Record<string, McpServerSettings>, names: string[]): Record<string, unknown> | undefined {
  const servers = Object.fromEntries(names.filter((n) => stored[n]!.enabled !== false).map((n) => {
    const { enabled: _enabled, ...server } = stored[n]!;
    return [n, server];
  }));
  return Object.keys(servers).length ? { mcpServers: servers } : undefined;
}

function readLlm(stores: LaunchStores, ref: string): ProfileResolution['llm'] {
  try {
    return stores.profiles.runnable(ref);
  } catch (err) {
    if (err instanceof AgentyardError) return err;
    throw err;
  }
}

/** What launching `profile` builds, with every reference it could not resolve; never throws on a dangling one. */
export function resolveAgentProfile(profile: AgentProfile, stores: LaunchStores): ProfileResolution {
  const llm = readLlm(stores, profile.llm_profile_ref);
  const stored = stores.mcpServers?.() ?? {};
  const { resolved, dangling } = mcpSelection(stored, profile.mcp_server_refs ?? null);
  const out: ProfileResolution = { llm, mcpResolved: resolved, mcpDangling: dangling };
  if (!llm || llm instanceof AgentyardError || dangling.length) return out;
  const suffix = [profile.persona, profile.system_message_suffix].filter((t): t is string => Boolean(t)).join('\n\n');
  const mcp = mcpConfig(stored, resolved);
  out.agent = {
    kind: 'Agent',
    llm: { ...llm.llm, usage_id: 'agent', ...(llm.apiKey !== undefined ? { api_key: llm.apiKey } : {}) },
    tools: (profile.tools ?? DEFAULT_TOOLS.map((name) => ({ name, params: {} }))).map((t) => ({ name: t.name, params: t.params ?? {} })),
    ...(suffix ? { agent_context: { system_message_suffix: suffix } } : {}),
    tool_concurrency_limit: profile.tool_concurrency_limit,
    ...(mcp ? { mcp_config: mcp } : {}),
  };
  return out;
}

/**
 * What launching an ACP profile builds (1.58's _build_acp_settings): the ACPAgent with the profile's
 * server, model, mode, timeouts, and its command split as a shell splits it; the selected MCP servers.
 */
export function resolveAcpAgentProfile(profile: AcpAgentProfile, stores: LaunchStores): AcpProfileResolution {
  const stored = stores.mcpServers?.() ?? {};
  const { resolved, dangling } = mcpSelection(stored, profile.mcp_server_refs ?? null);
  const out: AcpProfileResolution = { mcpResolved: resolved, mcpDangling: dangling };
  if (dangling.length) return out;
  let command: string[] = [];
  try {
    command = profile.acp_command ? shellSplit(profile.acp_command) : [];
  } catch (err) {
    out.error = `acp_command cannot be split: ${(err as Error).message}`;
    return out;
  }
  if (profile.acp_server === 'custom' && command.length === 0) {
    out.error = "acp_command is required when acp_server='custom' — there is no default launch command to fall back to";
    return out;
  }
  const mcp = mcpConfig(stored, resolved);
  out.agent = {
    kind: 'ACPAgent',
    llm: { model: profile.acp_model ?? 'acp-managed', usage_id: 'acp-managed' },
    acp_server: profile.acp_server,
    acp_command: command,
    acp_args: profile.acp_args ?? [],
    acp_model: profile.acp_model,
    acp_session_mode: profile.acp_session_mode,
    acp_prompt_timeout: profile.acp_prompt_timeout,
    acp_startup_timeout: profile.acp_startup_timeout,
    ...(mcp ? { mcp_config: mcp } : {}),
  };
  return out;
}

export function launchFromProfile(req: StartConversationRequest, stores: LaunchStores): LaunchedRequest {
  const id = req.agent_profile_id!;
  const profile = stores.agentProfiles.byId(id);
  if (!profile) throw new NotFound(`Agent profile with id '${id}' not found`);
  if (profile.agent_kind === 'acp') return launchAcp(req, profile, stores);
  const r = resolveAgentProfile(profile, stores);
  if (r.llm instanceof AgentyardError) throw r.llm;
  if (!r.llm) throw new BadRequest(`Agent profile '${profile.name}' references LLM profile '${profile.llm_profile_ref}', which does not exist`);
  if (r.mcpDangling.length) {
    throw new Invalid([{ loc: ['body', 'agent_profile_id'], msg: `Agent profile '${profile.name}' references MCP servers that are not in the settings: ${r.mcpDangling.join(', ')}`, type: 'value_error' }]);
  }
  return withProfile(req, r.agent!, profile);
}

function launchAcp(req: StartConversationRequest, profile: AcpAgentProfile, stores: LaunchStores): LaunchedRequest {
  const r = resolveAcpAgentProfile(profile, stores);
  if (r.mcpDangling.length) {
    throw new Invalid([{ loc: ['body', 'agent_profile_id'], msg: `Agent profile '${profile.name}' references MCP servers that are not in the settings: ${r.mcpDangling.join(', ')}`, type: 'value_error' }]);
  }
  if (r.error) throw new Invalid([{ loc: ['body', 'agent_profile_id'], msg: `Agent profile '${profile.name}': ${r.error}`, type: 'value_error' }]);
  return withProfile(req, r.agent!, profile);
}

/** The request with the profile's agent, only the secrets the profile allows, and the record of which profile launched it. */
function withProfile(req: StartConversationRequest, agent: LaunchedAgent, profile: AnyAgentProfile): LaunchedRequest {
  const allowed = profile.secret_refs;
  return {
    ...req,
    agent,
    ...(allowed && req.secrets ? { secrets: Object.fromEntries(Object.entries(req.secrets).filter(([name]) => allowed.includes(name))) } : {}),
    launched_agent_profile: { agent_profile_id: profile.id, revision: profile.revision, secret_refs: profile.secret_refs, llm_profile_ref: null },
  };
}
