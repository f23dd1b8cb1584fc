// A start request naming an agent profile (`agent_profile_id`, OpenHands 1.58) made into one with its
// `agent`, the whole profile applied as OpenHands' launch (sdk/launch/resolve.py) applies it:
// - the LLM profile (model, endpoint, key; a provider connection read at use);
// - its tools (none named: OpenHands' default set), persona and system prompt suffix (appended to
//   the system prompt), tool concurrency; `secret_refs` keeps only the secrets it names;
// - the MCP servers of the stored settings (/api/settings), all of them or those `mcp_server_refs` names;
// - the skill catalog (the user's skills over the public ones of the extensions repository, with its
//   default marketplace, as 1.58's discover_profile_skills; none when the repository cannot be
//   fetched) less `disabled_skills`, `public_skills` filtering the public tier only: listed in
//   `agent_context.skills` (so the start answers which skills it loaded; load_public_skills stays
//   false, they are in already), the deny-list carried on the context so project skills loaded
//   later obey it too;
// - the condenser settings, as the agent's condenser (`enabled: false` = none);
// - the critic settings (`verification`), as the agent's critic (OpenHands' APIBasedCritic, its
//   classification service at `critic_server_url`, authenticated with the LLM's key; iterative refinement);
// - the routing tool (`enable_classify_and_switch_llm_tool`): route_task_to_model added to the tools
//   with the meta-profile it routes with (its name, and the meta-profile as resolved now, which serves
//   if the name stops resolving); the meta-profile and the LLM profiles it routes to must be stored.
//   The LLM profiles are read again when the tool runs, so their keys are not carried in the
//   conversation's stored request (OpenHands carries them inline in the tool's params).
// Every dangling reference is reported together (422), as OpenHands' UnresolvedProfileReferences.
// What cannot be applied is refused, never dropped: a critic without a service URL or a key (422).
// What this agent server does not build would be a 501 (`unsupported`; nothing today). The conversation records
// which profile and revision launched it (`launched_agent_profile`).
// The resolution itself (`resolveAgentProfile`) never throws on a dangling reference: the launch
// turns what it finds into errors, the launch preview (launch-preview.ts) into a report, so the two
// cannot disagree.
import { split as shellSplit } from 'shlex';
import type { AcpAgentProfile, AgentProfile, AnyAgentProfile } from '../../api/agent-server/agent-profiles.ts';
import type { StartConversationRequest } from '../../api/agent-server/index.ts';
import type { MetaProfile } from '../../api/agent-server/meta-profiles.ts';
import type { McpServerSettings } from '../../api/agent-server/settings.ts';
import { AgentyardError, Invalid, NotFound, NotImplemented } from '../../api/errors.ts';
import { condenserConfig, CondenserConfigError } from '../../agent/condenser/summarizing.ts';
import { DEFAULT_USAGE_ID } from '../../agent/usage.ts';
import { criticConfig, CriticConfigError } from '../../agent/critic/critic.ts';
import { ROUTE_TOOL_KIND } from '../../agent/tools/route-task.ts';
import { loadUserSkillsSync, skillInfo, type Skill } from '../../agent/skills/index.ts';
import { loadPublicSkills, type ExtensionsConfig } from '../../agent/skills/extensions-repo.ts';
import { readMetaProfile } from '../routes/meta-profiles.ts';
import type { SettingsDocStore } from '../store/settings-store.ts';
import type { AgentProfileStore } from '../store/agent-profile-store.ts';
import type { Db } from '../store/db.ts';
import type { ProfileStore, RunnableProfile } from '../store/profile-store.ts';

/** The tools of OpenHands' default agent settings (finish and think are built in). */
export const DEFAULT_TOOLS = ['terminal', 'file_editor', 'task_tracker'];

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
  /** The skill catalog a profile selects from (OpenHands' discover_profile_skills: user and public skills). */
  skills?: () => Skill[];
  /** Names of the catalog's public tier (`public_skills` filters only those). */
  publicSkillNames?: () => ReadonlySet<string>;
  /** The extensions repository's public skills, fetched before a launch (withPublicSkills) to make the catalog's public tier. */
  publicSkills?: () => Promise<Skill[]>;
  /** A stored meta-profile (/api/meta-profiles). */
  metaProfile?: (name: string) => MetaProfile | undefined;
}

export interface AcpProfileResolution {
  mcpResolved: string[];
  mcpDangling: string[];
  /** The skill catalog the agent gets, by name (an ACP profile has no skill selection: all of it). */
  skills: string[];
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
  /** The skills the agent starts with (the catalog less the profile's deny-list), by name. */
  skills: string[];
  /** The meta-profile the routing tool names, when the tool is on and no such meta-profile is stored. */
  metaDangling: string | null;
  /** The LLM profiles the meta-profile routes to (its classifier, its classes' models) that are not stored. */
  metaLlmDangling: string[];
  /** Settings that cannot be used as given (a condenser the agent refuses): the launch's 422. */
  invalid: string[];
  /** What the profile asks for that this agent server does not build: the launch's 501. */
  unsupported: string[];
  /** The agent a launch starts with; only when every reference resolved and nothing is refused. */
  agent?: LaunchedAgent;
}

/** The stores of this server, read at each launch (the launch and /materialize use the same ones). */
export function serverLaunchStores(o: { agentProfiles: AgentProfileStore; profiles: ProfileStore; settings: SettingsDocStore; db: Db; extensions?: ExtensionsConfig }): LaunchStores {
  return {
    agentProfiles: o.agentProfiles,
    profiles: o.profiles,
    mcpServers: () => o.settings.load().agent_settings.mcp_config,
    skills: () => loadUserSkillsSync(),
    publicSkillNames: () => new Set(),
    // OpenHands' catalog is the user's skills and the public ones (the extensions repository, default marketplace).
    ...(o.extensions ? { publicSkills: ((cfg) => () => loadPublicSkills(cfg))(o.extensions) } : {}),
    metaProfile: (name) => readMetaProfile(o.db, name),
  };
}

/**
 * The stores with the public tier in the catalog (1.58's discover_profile_skills and
 * discover_public_skill_names): public skills under the user's (a user skill of the same name wins
 * and is not public). Fetched once per launch or preview, since the resolution itself is synchronous.
 */
export async function withPublicSkills(stores: LaunchStores): Promise<LaunchStores> {
  if (!stores.publicSkills) return stores;
  const pub = await stores.publicSkills();
  const user = stores.skills?.() ?? [];
  const userNames = new Set(user.map((s) => s.name));
  const catalog = [...pub, ...user];
  const publicNames = new Set(pub.map((s) => s.name).filter((n) => !userNames.has(n)));
  return { ...stores, skills: () => catalog, publicSkillNames: () => publicNames };
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

/**
 * OpenHands' _select_skills: the catalog once per name (the last wins), less the deny-list; a
 * `public_skills` list keeps only the named ones of the public tier. Names absent from the catalog
 * do nothing, so neither list can dangle.
 */
function selectSkills(catalog: readonly Skill[], profile: Pick<AgentProfile, 'disabled_skills' | 'public_skills'>, publicNames: ReadonlySet<string>): Skill[] {
  const byName = new Map(catalog.map((s) => [s.name, s]));
  const denied = new Set(profile.disabled_skills);
  const allowed = profile.public_skills === null ? null : new Set(profile.public_skills);
  return [...byName.values()].filter((s) => !denied.has(s.name) && (allowed === null || allowed.has(s.name) || !publicNames.has(s.name)));
}

/** The profile's condenser settings (OpenHands' CondenserSettingsConfig) as the agent's `condenser`; null: none. */
export function agentCondenser(c: Record<string, unknown>): Record<string, unknown> | null {
  if (c['enabled'] === false) return null;
  if (c['condenser_kind'] === 'no_op') return { kind: 'NoOpCondenser' };
  const pick = ['max_size', 'keep_first', 'minimum_progress', 'max_tokens', 'hard_context_reset_max_retries', 'hard_context_reset_context_scaling'];
  return { kind: 'LLMSummarizingCondenser', ...Object.fromEntries(pick.filter((k) => c[k] != null).map((k) => [k, c[k]])) };
}

/** The profile's verification settings as the agent's critic (OpenHands' build_critic); undefined when it is off. Keyless: the agent uses its LLM's key. */
export function agentCritic(profile: Pick<AgentProfile, 'verification'>): Record<string, unknown> | undefined {
  const v = profile.verification;
  if (v.critic_enabled !== true) return undefined;
  return {
    kind: 'APIBasedCritic',
    server_url: v.critic_server_url ?? null,
    model_name: v.critic_model_name ?? 'critic',
    mode: v.critic_mode ?? 'finish_and_message',
    iterative_refinement: v.enable_iterative_refinement ? { success_threshold: v.critic_threshold ?? 0.6, max_iterations: v.max_refinement_iterations ?? 3 } : null,
  };
}

function readLlm(stores: LaunchStores, ref: string): ProfileResolution['llm'] {
  try {
    return stores.profiles.runnable(ref);
  } catch (err) {
    if (err instanceof AgentyardError) return err;
    throw err;
  }
}

/** OpenHands' _load_meta_profile: only with the routing tool on and a meta-profile named. */
function metaReferences(profile: AgentProfile, stores: LaunchStores): Pick<ProfileResolution, 'metaDangling' | 'metaLlmDangling'> {
  const name = profile.meta_profile_ref;
  if (!profile.enable_classify_and_switch_llm_tool || name === null) return { metaDangling: null, metaLlmDangling: [] };
  const meta = stores.metaProfile?.(name);
  if (!meta) return { metaDangling: name, metaLlmDangling: [] };
  const refs = [...new Set([meta.classifier_model, ...(meta.classes ?? []).map((c) => c.model)])];
  return { metaDangling: null, metaLlmDangling: refs.filter((ref) => readLlm(stores, ref) === undefined) };
}

/** The routing tool's spec (OpenHands' create_agent adds it last, once), when the profile turns it on. */
function routeTool(profile: AgentProfile, stores: LaunchStores): { name: string; params: Record<string, unknown> }[] {
  if (!profile.enable_classify_and_switch_llm_tool) return [];
  const name = profile.meta_profile_ref;
  const meta = name === null ? undefined : stores.metaProfile?.(name);
  return [{ name: ROUTE_TOOL_KIND, params: { ...(name !== null ? { active_meta_profile: name } : {}), ...(meta ? { meta_profile: meta } : {}) } }];
}

/** The sentences OpenHands' UnresolvedProfileReferences says, one per kind of dangling reference. */
export function danglingProblems(profile: AgentProfile, r: ProfileResolution): string[] {
  return [
    ...(r.llm === undefined ? [`LLM profile '${profile.llm_profile_ref}' not found`] : []),
    ...(r.mcpDangling.length ? [`MCP server(s) not configured: ${r.mcpDangling.join(', ')}`] : []),
    ...(r.metaDangling !== null ? [`Meta-profile '${r.metaDangling}' not found`] : []),
    ...(r.metaLlmDangling.length ? [`LLM profile(s) routed to by the meta-profile not found: ${r.metaLlmDangling.join(', ')}`] : []),
  ];
}

/** What launching `profile` builds, with every reference it could not resolve; never throws on a dangling one. */
export function resolveAgentProfile(profile: AgentProfile, stores: LaunchStores): ProfileResolution {
  const llm = readLlm(stores, profile.llm_profile_ref);
  const stored = stores.mcpServers?.() ?? {};
  const { resolved, dangling } = mcpSelection(stored, profile.mcp_server_refs ?? null);
  const skills = selectSkills(stores.skills?.() ?? [], profile, stores.publicSkillNames?.() ?? new Set());
  const condenser = agentCondenser(profile.condenser);
  const invalid: string[] = [];
  try {
    condenserConfig(condenser);
  } catch (err) {
    if (!(err instanceof CondenserConfigError)) throw err;
    invalid.push(err.message.replace(/^agent\.condenser/, 'condenser'));
  }
  const critic = agentCritic(profile);
  if (critic) {
    if (critic['server_url'] == null) invalid.push('verification.critic_server_url: the critic needs the URL of its classification service; there is no default one here (OpenHands\' is All Hands\' proxy, which would receive the LLM key)');
    else {
      try {
        criticConfig(critic);
      } catch (err) {
        if (!(err instanceof CriticConfigError)) throw err;
        invalid.push(err.message.replace(/^agent\.critic\.server_url/, 'verification.critic_server_url'));
      }
    }
    if (llm && !(llm instanceof AgentyardError) && !llm.apiKey) invalid.push(`verification.critic_enabled: the critic authenticates with the LLM profile's key, and '${profile.llm_profile_ref}' has none`);
  }
  const unsupported: string[] = [];
  const out: ProfileResolution = { llm, mcpResolved: resolved, mcpDangling: dangling, skills: skills.map((s) => s.name), ...metaReferences(profile, stores), invalid, unsupported };
  if (!llm || llm instanceof AgentyardError || danglingProblems(profile, out).length || invalid.length || unsupported.length) return out;
  const suffix = [profile.persona, profile.system_message_suffix].filter((t): t is string => Boolean(t)).join('\n\n');
  const mcp = mcpConfig(stored, resolved);
  out.agent = {
    kind: 'Agent',
    // An LLM profile's LLM has OpenHands' default usage id (its calls count under `default`).
    llm: { ...llm.llm, usage_id: DEFAULT_USAGE_ID, ...(llm.apiKey !== undefined ? { api_key: llm.apiKey } : {}) },
    tools: [...(profile.tools ?? DEFAULT_TOOLS.map((name) => ({ name, params: {} }))).filter((t) => !(profile.enable_classify_and_switch_llm_tool && t.name === ROUTE_TOOL_KIND)).map((t) => ({ name: t.name, params: t.params ?? {} })), ...routeTool(profile, stores)],
    // The catalog is resolved here (user skills included), so the agent does not load user skills
    // again; project skills it loads from the workspace, less the deny-list (1.58's resolver sets
    // load_project_skills for that: the workspace is not known here).
    agent_context: {
      skills: skills.map(skillInfo),
      load_user_skills: false,
      load_public_skills: false,
      load_project_skills: true,
      disabled_skills: profile.disabled_skills,
      ...(suffix ? { system_message_suffix: suffix } : {}),
    },
    condenser,
    ...(critic ? { critic } : {}),
    tool_concurrency_limit: profile.tool_concurrency_limit,
    ...(mcp ? { mcp_config: mcp } : {}),
  };
  return out;
}

/**
 * What launching an ACP profile builds (1.58's _build_acp_settings): the ACPAgent with the profile's
 * server, model, mode, timeouts, and its command split as a shell splits it; the selected MCP servers;
 * the whole skill catalog (1.58's _select_skills(available_skills, [])) in agent_context.skills, which
 * the ACP agent renders into the prompt context of its first turn. 1.58 drops them again under its
 * `native` acp_skill_sourcing (an agent server on the user's own machine, where the CLI reads the
 * user's configuration); agentyard's agent server runs in a sandbox without that configuration, as
 * 1.58's container image (`openhands_managed`), so they stay. Project skills stay off: the ACP server
 * reads the repository itself (1.58, #4019).
 */
export function resolveAcpAgentProfile(profile: AcpAgentProfile, stores: LaunchStores): AcpProfileResolution {
  const stored = stores.mcpServers?.() ?? {};
  const { resolved, dangling } = mcpSelection(stored, profile.mcp_server_refs ?? null);
  const skills = selectSkills(stores.skills?.() ?? [], { disabled_skills: [], public_skills: null }, new Set());
  const out: AcpProfileResolution = { mcpResolved: resolved, mcpDangling: dangling, skills: skills.map((s) => s.name) };
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
    agent_context: { skills: skills.map(skillInfo), load_user_skills: false, load_public_skills: false, load_project_skills: false },
    ...(mcp ? { mcp_config: mcp } : {}),
  };
  return out;
}

export async function launchFromProfile(req: StartConversationRequest, stores: LaunchStores): Promise<LaunchedRequest> {
  const id = req.agent_profile_id!;
  const profile = stores.agentProfiles.byId(id);
  if (!profile) throw new NotFound(`Agent profile with id '${id}' not found`);
  if (profile.agent_kind === 'acp') return launchAcp(req, profile, await withPublicSkills(stores));
  const r = resolveAgentProfile(profile, await withPublicSkills(stores));
  if (r.llm instanceof AgentyardError) throw r.llm;
  // Every dangling reference at once, then settings that cannot be used, then what is not built.
  const problems = [...danglingProblems(profile, r), ...r.invalid];
  if (problems.length) {
    throw new Invalid(problems.map((msg) => ({ loc: ['body', 'agent_profile_id'], msg: `Agent profile '${profile.name}': ${msg}`, type: 'value_error' })));
  }
  if (r.unsupported.length) throw new NotImplemented(`Agent profile '${profile.name}' cannot be launched here: ${r.unsupported.join('; ')}`);
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
