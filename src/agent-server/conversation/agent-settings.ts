// A start request's `agent_settings` of kind `openhands` made into its `agent`, as OpenHands 1.58's
// OpenHandsAgentSettings.create_agent builds it, with what the agent-profile launch here already
// does for the same settings (launch-profile.ts: condenser, critic, persona):
// - `llm` as given (a key in it is the conversation's, sealed like any start's);
// - `tools` (none: the default set), and the routing fields: `enable_classify_and_switch_llm_tool`
//   adds route_task_to_model (ClassifyAndSwitchLLMTool) once, last, with `active_meta_profile`, the
//   inline `meta_profile` and the inline `meta_profile_llms` as its params (1.58 does not check the
//   names at start: the tool reads the meta-profile by name at each call, the inline copy serving
//   when the name does not resolve, and with neither the first stored one; an LLM it routes to, or
//   classifies with, is the inline one of that name, else this server's stored LLM profile);
// - `mcp_config`, `agent_context`, `tool_concurrency_limit` as given; `persona` appended to the
//   system prompt suffix (as the profile launch; 1.58 replaces its built-in persona with it);
// - `condenser` (default: the summarizing condenser on the conversation's LLM) and `verification`
//   (the critic; its URL and key checked by the start as any agent's critic).
// The inline LLMs' keys are the conversation's secrets (route-llms.ts): the start seals them.
import { OpenHandsAgentSettings } from '../../api/agent-server/settings.ts';
import type { StartConversationRequest } from '../../api/agent-server/index.ts';
import { DEFAULT_CONDENSER, DEFAULT_VERIFICATION } from '../../api/agent-server/agent-profiles.ts';
import { parseValue } from '../../api/events/validate.ts';
import { ROUTE_TOOL_KIND } from '../../agent/tools/route-task.ts';
import { agentCondenser, agentCritic, DEFAULT_TOOLS } from './launch-profile.ts';

type Agent = NonNullable<StartConversationRequest['agent']>;

export function agentFromSettings(value: unknown, loc: (string | number)[] = ['body', 'agent_settings']): Agent {
  const s = parseValue(OpenHandsAgentSettings, value, { prefix: loc, clean: true });
  const routing = s.enable_classify_and_switch_llm_tool === true;
  const tools = (s.tools ?? DEFAULT_TOOLS.map((name) => ({ name, params: {} })))
    .filter((t) => !(routing && t.name === ROUTE_TOOL_KIND))
    .map((t) => ({ name: t.name, params: t.params ?? {} }));
  const inline = s.meta_profile_llms && Object.keys(s.meta_profile_llms).length > 0 ? { meta_profile_llms: s.meta_profile_llms } : {};
  if (routing) tools.push({ name: ROUTE_TOOL_KIND, params: { ...(s.active_meta_profile ? { active_meta_profile: s.active_meta_profile } : {}), ...(s.meta_profile ? { meta_profile: s.meta_profile } : {}), ...inline } });
  const suffix = [s.agent_context?.system_message_suffix, s.persona].filter((t): t is string => Boolean(t)).join('\n\n');
  const context = s.agent_context || suffix ? { ...(s.agent_context ?? {}), ...(suffix ? { system_message_suffix: suffix } : {}) } : undefined;
  const { critic_api_key: criticKey, ...verification } = s.verification ?? {};
  const critic = agentCritic({ verification: { ...DEFAULT_VERIFICATION, ...verification } });
  return {
    kind: 'Agent',
    llm: s.llm,
    tools,
    ...(context ? { agent_context: context } : {}),
    condenser: agentCondenser({ ...DEFAULT_CONDENSER, ...s.condenser }),
    ...(critic ? { critic: { ...critic, ...(criticKey ? { api_key: criticKey } : {}) } } : {}),
    ...(s.tool_concurrency_limit !== undefined ? { tool_concurrency_limit: s.tool_concurrency_limit } : {}),
    ...(s.mcp_config ? { mcp_config: s.mcp_config } : {}),
  };
}
