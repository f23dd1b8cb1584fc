// ConversationInfo as clients see it: the stored request and state, with every secret masked.
import type { ConversationInfo, LLMInfo } from '../../api/agent-server/index.ts';
import type { LlmConfig } from '../../agent/types.ts';
import type { UsageMetrics } from '../../api/conversation.ts';
import type { ConversationRow } from '../store/conversation-store.ts';
import { MASK } from '../secrets.ts';
import { maskedAnalyzer } from '../../agent/confirmation/policy.ts';
import { criticShown } from '../../agent/critic/critic.ts';
import type { AcpInfo } from '../acp/agent.ts';

export interface InfoInputs {
  row: ConversationRow;
  llm: LlmConfig | undefined;
  secretNames: string[];
  persistenceDir: string;
  skills?: { activated: readonly string[]; invoked: readonly string[]; pathRules?: readonly string[] };
  /**
   * Skills the conversation loaded besides its request's (user, project, public skills, and its
   * plugins', in the background from the conversation's creation on; stored, so they are listed
   * across restarts): merged into agent.agent_context.skills as OpenHands does after loading them,
   * over request skills of the same name, so clients (the app's skills route) list them.
   */
  pluginSkills?: readonly Record<string, unknown>[];
  /** Until when the run waits for the model provider's rate limit (ISO), null when it does not. */
  rateLimitedUntil?: string | null;
  /** HEAD of the event tree: the last event that is not a state update. */
  leafEventId?: string | null;
  /** The live conversations started with this one as their parent. */
  subConversationIds?: string[];
  /** HEAD was moved to the empty tree (navigate with event_id null). */
  headIsEmpty?: boolean;
  /** An ACP agent's model state (src/agent-server/acp): the session's, or what the request asked for before one ran. */
  acp?: AcpInfo;
  /** agent_state of an agent that is not an ACP one, as last recorded (the critic's refinement iterations). */
  agentState?: Record<string, unknown>;
}

function withPluginSkills(agent: NonNullable<ConversationRow['request']['agent']>, plugin: readonly Record<string, unknown>[]): typeof agent {
  if (plugin.length === 0) return agent;
  const names = new Set(plugin.map((s) => s['name']));
  const own = (agent.agent_context?.skills ?? []).filter((s) => !names.has(s['name']));
  return { ...agent, agent_context: { ...agent.agent_context, skills: [...own, ...plugin] } };
}

/**
 * `mcp_config` with its secrets masked: each server's `env` and `headers` values (as /api/settings
 * masks them; 1.58 redacts them too), in whichever form the request gave (server map or `mcpServers`).
 */
function maskedMcpConfig(config: Record<string, unknown> | undefined): Record<string, unknown> | undefined {
  if (!config) return config;
  const isMap = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
  const maskServers = (servers: Record<string, unknown>) =>
    Object.fromEntries(
      Object.entries(servers).map(([name, server]) => {
        if (!isMap(server)) return [name, server];
        const out = { ...server };
        for (const f of ['env', 'headers']) if (isMap(out[f])) out[f] = Object.fromEntries(Object.keys(out[f] as object).map((k) => [k, MASK]));
        return [name, out];
      }),
    );
  return isMap(config['mcpServers']) ? { ...config, mcpServers: maskServers(config['mcpServers']) } : maskServers(config);
}

/** The placeholder model (and usage id) of an ACP agent's LLM, as 1.58 names it. */
const ACP_MANAGED = 'acp-managed';

export function conversationInfo({ row, llm, secretNames, persistenceDir, skills, pluginSkills = [], rateLimitedUntil = null, leafEventId = null, subConversationIds = [], acp, agentState = {} }: InfoInputs): ConversationInfo {
  const req = row.request;
  const agent = withPluginSkills(req.agent ?? { llm: {} }, pluginSkills);
  const { api_key: _key, base_url: _url, ...rest } = agent.llm;
  // No model configured anywhere: '' (the run then ends with an error event saying what to set).
  const maskedLlm: LLMInfo = { ...rest, model: llm?.model ?? agent.llm.model ?? '' };
  const baseUrl = llm?.baseUrl ?? agent.llm.base_url;
  if (baseUrl) maskedLlm.base_url = baseUrl;
  if (llm?.apiKey) maskedLlm.api_key = MASK;
  if (acp) {
    // 1.58's ACPAgent carries a placeholder LLM (the ACP server calls the model): the model it was asked for, else "acp-managed".
    for (const k of Object.keys(maskedLlm)) delete (maskedLlm as Record<string, unknown>)[k];
    Object.assign(maskedLlm, { model: agent.acp_model ?? ACP_MANAGED, usage_id: ACP_MANAGED });
  }
  return {
    id: row.id,
    agent: { ...agent, kind: agent.kind ?? 'Agent', llm: maskedLlm, ...(agent.mcp_config ? { mcp_config: maskedMcpConfig(agent.mcp_config) } : {}), ...(agent.critic ? { critic: criticShown(agent.critic) } : {}) },
    workspace: { kind: 'LocalWorkspace', working_dir: req.workspace.working_dir },
    persistence_dir: persistenceDir,
    execution_status: row.executionStatus,
    confirmation_policy: req.confirmation_policy ?? { kind: 'NeverConfirm' },
    activated_knowledge_skills: [...(skills?.activated ?? [])],
    max_iterations: req.max_iterations ?? 500,
    stuck_detection: req.stuck_detection ?? true,
    security_analyzer: maskedAnalyzer(req.security_analyzer),
    invoked_skills: [...(skills?.invoked ?? [])],
    blocked_actions: {},
    blocked_messages: {},
    last_user_message_id: row.lastUserMessageId,
    leaf_event_id: leafEventId,
    stats: row.stats ?? { usage_to_metrics: {} },
    secret_registry: {
      secret_sources: Object.fromEntries(secretNames.map((n) => [n, { kind: 'StaticSecret', value: MASK }])),
    },
    agent_state: acp?.agentState ?? agentState,
    hook_config: req.hook_config ?? null,
    title: row.title,
    metrics: null,
    created_at: row.createdAt,
    updated_at: row.updatedAt,
    forked_from_conversation_id: row.forkedFromConversationId,
    forked_from_event_id: row.forkedFromEventId,
    parent_conversation_id: req.parent_conversation_id ?? null,
    sub_conversation_ids: subConversationIds,
    tags: row.tags,
    current_model_id: acp ? acp.currentModelId : (llm?.model ?? null),
    supports_runtime_model_switch: acp?.supportsModelSwitch ?? false,
    available_models: acp?.availableModels ?? [],
    client_tools: [],
    launched_agent_profile: (req as { launched_agent_profile?: Record<string, unknown> }).launched_agent_profile ?? null,
    runtime_info: null,
    tool_module_qualnames: {},
    // Ours (OpenHands waits silently): only while a wait is on, so that the record has 1.58's fields otherwise.
    ...(rateLimitedUntil !== null ? { rate_limited_until: rateLimitedUntil } : {}),
  };
}

/**
 * The full_state snapshot of the events socket: ConversationInfo plus the ConversationState fields
 * 1.58 sends there and not in REST answers, and our rate_limited_until (null when no wait is on).
 */
export function fullStateValue(info: ConversationInfo, inputs: Pick<InfoInputs, 'skills' | 'rateLimitedUntil' | 'headIsEmpty'>): ConversationInfo {
  return {
    ...info,
    activated_path_rules: [...(inputs.skills?.pathRules ?? [])],
    head_is_empty: inputs.headIsEmpty ?? false,
    rate_limited_until: inputs.rateLimitedUntil ?? null,
  };
}

/** Usage over every LLM of the conversation, in the app's UsageMetrics shape (for the event sink). */
export function usageSummary(stats: ConversationRow['stats']): UsageMetrics | undefined {
  const all = Object.entries(stats?.usage_to_metrics ?? {});
  if (all.length === 0) return undefined;
  const main = all.find(([k]) => k === 'agent' || k === 'default')?.[1] ?? all[0]![1];
  const sum = (f: (m: (typeof all)[number][1]) => number | undefined) => all.reduce((n, [, m]) => n + (f(m) ?? 0), 0);
  return {
    ...(main.model_name ? { model_name: main.model_name } : {}),
    accumulated_cost: sum((m) => m.accumulated_cost),
    accumulated_token_usage: {
      prompt_tokens: sum((m) => m.accumulated_token_usage?.prompt_tokens),
      completion_tokens: sum((m) => m.accumulated_token_usage?.completion_tokens),
      cache_read_tokens: sum((m) => m.accumulated_token_usage?.cache_read_tokens),
      cache_write_tokens: sum((m) => m.accumulated_token_usage?.cache_write_tokens),
      reasoning_tokens: sum((m) => m.accumulated_token_usage?.reasoning_tokens),
    },
  };
}
