// The launch preview of an agent profile (OpenHands 1.58's preview_launch, served by
// POST /api/agent-profiles/{name}/materialize): the same resolution a launch runs
// (resolveAgentProfile), reported instead of raised, so the report cannot disagree with a launch.
// As OpenHands: the dangling references all reported (LLM, MCP, meta-profile and its LLMs), and then
// the skills are still reported when the LLM profile resolved; what a launch here refuses (the
// critic, the routing tool: 501) is an error too, so `valid` says whether the launch would start.
import type { AcpAgentProfile, AgentProfile, AgentProfileDiagnostics, AnyAgentProfile } from '../../api/agent-server/agent-profiles.ts';
import { ACP_PROVIDERS } from '../acp/providers.ts';
import { AgentyardError } from '../../api/errors.ts';
import { ROUTE_TOOL_KIND } from '../../agent/tools/route-task.ts';
import { MASK } from '../secrets.ts';
import { LLM_SECRET_FIELDS } from '../settings-doc.ts';
import { danglingProblems, resolveAcpAgentProfile, resolveAgentProfile, type LaunchedAgent, type LaunchStores } from './launch-profile.ts';

/** OpenHands' name for the browser: when it cannot run, the launch still works (its calls say so). */
const BROWSER = 'browser_tool_set';

export function previewLaunch(profile: AnyAgentProfile, stores: LaunchStores, usableTools: readonly string[]): AgentProfileDiagnostics {
  return profile.agent_kind === 'acp' ? previewAcpLaunch(profile, stores) : previewOpenHandsLaunch(profile, stores, usableTools);
}

/** An ACP profile: no LLM profile; the credential channels are the environment variables its server reads (1.58). */
function previewAcpLaunch(profile: AcpAgentProfile, stores: LaunchStores): AgentProfileDiagnostics {
  const r = resolveAcpAgentProfile(profile, stores);
  const provider = ACP_PROVIDERS[profile.acp_server];
  const report: AgentProfileDiagnostics = {
    agent_kind: 'acp',
    valid: false,
    errors: [],
    unusable_tools: [],
    llm_profile_ref: null,
    llm_profile_resolved: false,
    llm_api_key_set: false,
    mcp_server_refs: profile.mcp_server_refs,
    resolved_mcp_config_keys: r.mcpResolved,
    dangling_mcp_server_refs: r.mcpDangling,
    disabled_skills: [],
    public_skills: null,
    resolved_skills: r.skills,
    secret_refs: profile.secret_refs,
    acp_api_key_secret_name: provider?.apiKeyEnv ?? null,
    acp_base_url_secret_name: provider?.baseUrlEnv ?? null,
    acp_file_secret_names: provider?.fileSecrets ?? [],
    meta_profile_ref: null,
    dangling_meta_profile_ref: null,
    dangling_meta_profile_llm_refs: [],
    resolved_settings: null,
  };
  if (r.mcpDangling.length) report.errors.push(`MCP server(s) not configured: ${r.mcpDangling.join(', ')}`);
  if (r.error) report.errors.push(`Failed to build agent settings: ${r.error}`);
  if (report.errors.length || !r.agent) return report;
  report.resolved_settings = redacted(r.agent);
  report.valid = true;
  return report;
}

function previewOpenHandsLaunch(profile: AgentProfile, stores: LaunchStores, usableTools: readonly string[]): AgentProfileDiagnostics {
  const r = resolveAgentProfile(profile, stores);
  // The routing tool is a built-in (not offered for selection), always runnable here.
  const unusable = (profile.tools ?? []).map((t) => t.name).filter((n) => !usableTools.includes(n) && n !== ROUTE_TOOL_KIND);
  const report: AgentProfileDiagnostics = {
    agent_kind: profile.agent_kind,
    valid: false,
    errors: [],
    unusable_tools: unusable,
    llm_profile_ref: profile.llm_profile_ref,
    llm_profile_resolved: false,
    llm_api_key_set: false,
    mcp_server_refs: profile.mcp_server_refs,
    resolved_mcp_config_keys: r.mcpResolved,
    dangling_mcp_server_refs: [],
    disabled_skills: profile.disabled_skills,
    public_skills: profile.public_skills,
    resolved_skills: [],
    secret_refs: profile.secret_refs,
    acp_api_key_secret_name: null,
    acp_base_url_secret_name: null,
    acp_file_secret_names: [],
    meta_profile_ref: profile.meta_profile_ref,
    dangling_meta_profile_ref: null,
    dangling_meta_profile_llm_refs: [],
    resolved_settings: null,
  };
  const failing = unusable.filter((n) => n !== BROWSER);
  if (failing.length) report.errors.push(`Tool(s) this server cannot run: ${failing.join(', ')}`);
  // As OpenHands: an LLM profile that is stored but cannot be read ends the report there.
  if (r.llm instanceof AgentyardError) {
    report.errors.push(`Failed to build agent settings: ${r.llm.message}`);
    return report;
  }
  const dangling = danglingProblems(profile, r);
  report.errors.push(...dangling);
  report.dangling_mcp_server_refs = r.mcpDangling;
  report.dangling_meta_profile_ref = r.metaDangling;
  report.dangling_meta_profile_llm_refs = r.metaLlmDangling;
  if (r.llm) {
    report.llm_profile_resolved = true;
    report.llm_api_key_set = Boolean(r.llm.apiKey?.trim());
    report.resolved_skills = r.skills;
  }
  // A launch refuses dangling references first (422): what it would refuse after them is not reached.
  if (!dangling.length) report.errors.push(...r.invalid.map((m) => `Failed to build agent settings: ${m}`), ...r.unsupported.map((m) => `Not built here: ${m}`));
  if (report.errors.length || !r.agent) return report;
  report.resolved_settings = redacted(r.agent);
  report.valid = true;
  return report;
}

const masked = (map: unknown) => (map && typeof map === 'object' ? Object.fromEntries(Object.keys(map).map((k) => [k, MASK])) : map);

/** The agent with every secret it carries masked, as /api/settings masks them: the LLM's keys, the MCP servers' env and header values. */
function redacted(agent: LaunchedAgent): Record<string, unknown> {
  const llm: Record<string, unknown> = { ...agent.llm };
  for (const f of LLM_SECRET_FIELDS) if (llm[f] != null) llm[f] = MASK;
  const out: Record<string, unknown> = { ...agent, llm };
  const servers = (agent.mcp_config as { mcpServers?: Record<string, Record<string, unknown>> } | undefined)?.mcpServers;
  if (servers) {
    out['mcp_config'] = { ...agent.mcp_config, mcpServers: Object.fromEntries(Object.entries(servers).map(([n, s]) => [n, { ...s, ...('env' in s ? { env: masked(s['env']) } : {}), ...('headers' in s ? { headers: masked(s['headers']) } : {}) }])) };
  }
  return out;
}
