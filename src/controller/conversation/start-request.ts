// The agent server's StartConversationRequest for a Conversation resource.
import type { Conversation, PluginSpec } from '../../api/conversation.ts';
import { LABEL_OWNER } from '../../api/meta.ts';
import { SecretKind, userSecretsName } from '../../api/secret.ts';
import type { LlmConfig } from '../../agent/types.ts';
import type { ResourceStore } from '../../store/types.ts';
import { repositoryDirectory } from './repository.ts';

/** `0123abcd…` (32 hex, the resource name) → the dashed UUID form the agent server also accepts. */
export function dashedUuid(hex: string): string {
  if (!/^[0-9a-f]{32}$/.test(hex)) return hex;
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/**
 * The id the agent server knows the conversation by: its name when that is a 32-hex UUID (API
 * starts), else its uid (resources applied with kubectl carry free names).
 */
export function agentConversationId(conv: Conversation): string {
  if (/^[0-9a-f]{32}$/.test(conv.metadata.name)) return conv.metadata.name;
  return (conv.metadata.uid ?? '').replaceAll('-', '');
}

/**
 * The conversation's secrets: its owner's stored secrets, then the per-conversation ones from the
 * Secret named by spec.secretsRef, which win on a shared name (spec part 2, rule 2). Values never
 * leave this call's result.
 */
export async function readConversationSecrets(store: ResourceStore, conv: Conversation): Promise<Record<string, string>> {
  const namespace = conv.metadata.namespace ?? 'default';
  const out: Record<string, string> = {};
  const decode = (data: Record<string, string> | undefined) => {
    for (const [name, encoded] of Object.entries(data ?? {})) out[name] = Buffer.from(encoded, 'base64').toString('utf8');
  };
  const owner = conv.spec.owner;
  if (owner) {
    const stored = await store.get(SecretKind, namespace, userSecretsName(owner));
    if (stored?.metadata.labels?.[LABEL_OWNER] === owner) decode(stored.data);
  }
  if (conv.spec.secretsRef) decode((await store.get(SecretKind, namespace, conv.spec.secretsRef))?.data);
  return out;
}

/**
 * Relative to the agent server's workspace, which every conversation of a sandbox shares; with a
 * selected repository the conversation works in its clone (project skills, hooks, git changes).
 */
export function conversationWorkingDir(conv: Conversation): string {
  return conv.spec.selectedRepository ? repositoryDirectory(conv.spec.selectedRepository) : '.';
}

/** What the controller adds at start: organization skills, Auto-Load marketplace plugins. */
export interface StartExtras {
  skills?: Record<string, unknown>[];
  plugins?: PluginSpec[];
}

/**
 * What agent_type `plan` means here: an instruction, not a different tool set. OpenHands gives its
 * planning agent planning tools and a PLAN.md under .agents_tmp/; agentyard's agent keeps its tools
 * and is told to plan only, in PLAN.md in its working directory.
 */
export const PLAN_INSTRUCTION =
  'You are in planning mode. Investigate the task and the workspace, then write a step-by-step plan to PLAN.md in the working directory. Do not change any other file, commit or push: the plan is the result of this conversation.';

/** The system prompt suffix: the planning instruction (agent_type plan), then the caller's suffix. */
export function systemMessageSuffixOf(conv: Conversation): string | undefined {
  const parts = [conv.spec.agentType === 'plan' ? PLAN_INSTRUCTION : undefined, conv.spec.systemMessageSuffix].filter((p): p is string => Boolean(p?.trim()));
  return parts.length > 0 ? parts.join('\n\n') : undefined;
}

export function agentServerStartRequest(conv: Conversation, secrets: Record<string, string>, llm: LlmConfig | undefined, extras: StartExtras = {}): Record<string, unknown> {
  const { spec } = conv;
  const plugins = [...(spec.plugins ?? []), ...(extras.plugins ?? [])];
  // llm_model changes the model only: the endpoint and key stay the deployment's (its gateway).
  const model = spec.llmModel ?? llm?.model;
  const suffix = systemMessageSuffixOf(conv);
  // The skills OpenHands' app server gives a conversation (it reads every source with the sandbox's
  // POST /api/skills and sends them all in `skills`): here the configuration repositories' skills
  // are sent, and the user's and the working directory's are asked for with 1.58's flags (both
  // default to false). The agent server loads those with their directories (a skill's scripts and
  // references stay reachable) and with the same precedence: user < configuration repositories < project.
  const context = {
    ...(extras.skills?.length ? { skills: extras.skills } : {}),
    load_user_skills: true,
    load_project_skills: true,
    ...(suffix ? { system_message_suffix: suffix } : {}),
  };
  return {
    conversation_id: dashedUuid(agentConversationId(conv)),
    workspace: { kind: 'LocalWorkspace', working_dir: conversationWorkingDir(conv) },
    agent: {
      kind: 'Agent',
      // Streamed, as OpenHands' app asks for its agents: clients of the conversation socket see the
      // answer as it is written (StreamingDeltaEvent), not only when it is whole.
      llm: { ...(model ? { model } : {}), ...(llm?.baseUrl ? { base_url: llm.baseUrl } : {}), ...(llm?.apiKey ? { api_key: llm.apiKey } : {}), stream: true },
      agent_context: context,
    },
    ...(spec.maxIterations ? { max_iterations: spec.maxIterations } : {}),
    ...(spec.confirmationMode === 'always' ? { confirmation_policy: { kind: 'AlwaysConfirm' } } : {}),
    ...(spec.confirmationMode === 'risky' ? { confirmation_policy: { kind: 'ConfirmRisky' }, security_analyzer: { kind: 'LLMSecurityAnalyzer' } } : {}),
    ...(spec.initialMessage ? { initial_message: { ...spec.initialMessage, run: spec.initialMessage.run ?? true } } : {}),
    ...(Object.keys(secrets).length ? { secrets } : {}),
    ...(plugins.length ? { plugins } : {}),
    ...(spec.title ? { tags: { title: spec.title } } : {}),
    ...(spec.observability?.spanName ? { observability_span_name: spec.observability.spanName } : {}),
    ...(spec.observability?.tags ? { observability_tags: spec.observability.tags } : {}),
    ...(spec.observability?.metadata ? { observability_metadata: spec.observability.metadata } : {}),
  };
}
