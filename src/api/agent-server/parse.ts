// Parsing agent-server request bodies the way OpenHands does: defaults applied, unknown
// top-level fields dropped, 422 issues located under `body`.
import type { Static, TSchema } from 'typebox';
import { Invalid } from '../errors.ts';
import { parseValue } from '../events/validate.ts';
import { StartConversationRequest } from './conversation.ts';
import { AcpAgentSettings, type Agent } from './index.ts';

/** Any request body: defaults applied, undeclared fields of lenient objects dropped, loc under `body`. */
export function parseBody<T extends TSchema>(schema: T, value: unknown): Static<T> {
  return parseValue(schema, value ?? {}, { prefix: ['body'], clean: true });
}

/** StartConversationRequest plus its cross-field rule: exactly one of agent, agent_settings, agent_profile_id. */
export function parseStartConversationRequest(value: unknown): StartConversationRequest {
  const req = parseBody(StartConversationRequest, withAcpPlaceholderLlm(value));
  const given = (['agent', 'agent_settings', 'agent_profile_id'] as const).filter((k) => req[k] != null);
  if (given.length !== 1) {
    throw new Invalid([
      {
        loc: ['body'],
        msg: 'Exactly one of agent, agent_settings or agent_profile_id must be given',
        type: 'value_error',
      },
    ]);
  }
  return req;
}

/** 1.58's ACPAgent has a placeholder LLM (its server calls the model), so a client may leave `llm` out. */
function withAcpPlaceholderLlm(value: unknown): unknown {
  const agent = (value as { agent?: unknown } | null)?.agent as Record<string, unknown> | null | undefined;
  if (!agent || typeof agent !== 'object' || agent['kind'] !== 'ACPAgent' || agent['llm'] != null) return value;
  return { ...(value as object), agent: { ...agent, llm: { model: 'acp-managed', usage_id: 'acp-managed' } } };
}

/**
 * `agent_settings` of kind `acp` (1.58 ACPAgentSettings) as the `agent` (kind ACPAgent) it creates;
 * undefined for settings of another kind. 422 issues located under `loc`.
 */
export function acpAgentFromSettings(value: unknown, loc: (string | number)[] = ['body', 'agent_settings']): Agent | undefined {
  if ((value as { agent_kind?: unknown } | null)?.agent_kind !== 'acp') return undefined;
  const s = parseValue(AcpAgentSettings, value, { prefix: loc, clean: true });
  return {
    kind: 'ACPAgent',
    llm: { model: s.acp_model ?? 'acp-managed', usage_id: 'acp-managed' },
    acp_server: s.acp_server ?? 'claude-code',
    acp_command: s.acp_command ?? [],
    acp_args: s.acp_args ?? [],
    acp_model: s.acp_model ?? null,
    acp_session_mode: s.acp_session_mode ?? null,
    ...(s.acp_prompt_timeout !== undefined ? { acp_prompt_timeout: s.acp_prompt_timeout } : {}),
    ...(s.acp_startup_timeout !== undefined ? { acp_startup_timeout: s.acp_startup_timeout } : {}),
    acp_isolate_data_dir: s.acp_isolate_data_dir ?? false,
    ...(s.mcp_config ? { mcp_config: s.mcp_config } : {}),
    ...(s.agent_context ? { agent_context: s.agent_context } : {}),
  };
}
