// Resources as the /api/v1 wire records (OpenHands V1 field names): AppConversationStartTask,
// AppConversation, SandboxInfo. Pure functions: the caller fetches what they show.
import type { Conversation } from '../api/conversation.ts';
import { createdAtOf, GROUP, LABEL_OWNER, LABEL_START_TASK } from '../api/meta.ts';
import type { Sandbox } from '../api/sandbox.ts';
import type { ConversationMeta } from './db/app-db.ts';
import { isoOf } from './paging.ts';
import { conversationSandboxStatus, sandboxNameOf, sandboxPhase, shownSandboxStatus } from './resources.ts';

export const ANNOTATION_SECRET_NAMES = `${GROUP}/secret-names`;
export const MASK = '**********';
/** On a sub-conversation: its parent's name (sub_conversation_ids are read by this label). */
export const LABEL_PARENT = `${GROUP}/parent-conversation`;
const DEFAULT_SANDBOX_SPEC = 'default';

export function secretNamesOf(conv: Conversation): string[] {
  const v = conv.metadata.annotations?.[ANNOTATION_SECRET_NAMES];
  return v ? v.split(',') : [];
}

function ownerOf(obj: Conversation | Sandbox): string | null {
  return obj.spec.owner ?? obj.metadata.labels?.[LABEL_OWNER] ?? null;
}

/** The start request as the caller sent it, rebuilt from the spec; secret values masked. */
export function startRequestOf(conv: Conversation): Record<string, unknown> {
  const s = conv.spec;
  const names = secretNamesOf(conv);
  return {
    initial_message: s.initialMessage ?? null,
    selected_repository: s.selectedRepository ?? null,
    selected_branch: s.selectedBranch ?? null,
    git_provider: s.gitProvider ?? null,
    git_user_name: s.gitUserName ?? null,
    git_user_email: s.gitUserEmail ?? null,
    sandbox_id: s.sandboxName ?? null,
    secrets: names.length > 0 ? Object.fromEntries(names.map((n) => [n, MASK])) : null,
    plugins: s.plugins ?? null,
    observability_span_name: s.observability?.spanName ?? null,
    observability_tags: s.observability?.tags ?? null,
    observability_metadata: s.observability?.metadata ?? null,
    title: s.title ?? null,
    conversation_id: conv.metadata.name,
    parent_conversation_id: s.parentConversation ?? null,
    llm_model: s.llmModel ?? null,
    agent_type: s.agentType ?? 'default',
    system_message_suffix: s.systemMessageSuffix ?? null,
    trigger: s.clientFields?.trigger ?? null,
    pr_number: s.clientFields?.prNumbers ?? [],
    public: s.clientFields?.public ?? null,
    suggested_task: s.clientFields?.suggestedTask ?? null,
    processors: s.clientFields?.processors ?? null,
    agent_profile_id: s.clientFields?.agentProfileId ?? null,
  };
}

/**
 * Start-request fields this conversation was given that change nothing here, each with the reason:
 * accepted so that an OpenHands client works unchanged, and said instead of silently dropped.
 */
export function unappliedFieldsOf(conv: Conversation): Record<string, string> {
  const f = conv.spec.clientFields;
  const out: Record<string, string> = {};
  if (f?.processors?.length) out['processors'] = 'Stored only: agentyard runs no server-side event callbacks (titles are set without one; webhooks deliver events)';
  if (f?.agentProfileId) out['agent_profile_id'] = 'Stored only: agentyard has no agent profiles; the deployment model (or llm_model) is used';
  if (f?.public === true) out['public'] = 'Stored only: agentyard has no public sharing; only the owner can read the conversation';
  return out;
}

export function startTaskUpdatedAt(conv: Conversation): string {
  return conv.status?.startTask?.updatedAt ?? createdAtOf(conv) ?? '';
}

const AGENT_SERVER_KNOWN = new Set(['STARTING_CONVERSATION', 'READY']);

export function startTaskRecord(conv: Conversation, sb: Sandbox | undefined): Record<string, unknown> {
  const status = conv.status?.startTask?.status ?? 'WORKING';
  const sandboxId = sandboxNameOf(conv) ?? null;
  const url = sb && AGENT_SERVER_KNOWN.has(status) ? sb.status?.url : undefined;
  return {
    id: conv.metadata.labels?.[LABEL_START_TASK] ?? null,
    created_by_user_id: ownerOf(conv),
    status,
    detail: conv.status?.startTask?.detail ?? null,
    app_conversation_id: status === 'READY' ? conv.metadata.name : null,
    sandbox_id: sandboxId,
    agent_server_url: url ?? null,
    request: startRequestOf(conv),
    unapplied_fields: unappliedFieldsOf(conv),
    created_at: createdAtOf(conv) ?? null,
    updated_at: startTaskUpdatedAt(conv),
  };
}

export interface ConversationView {
  conv: Conversation;
  sandbox: Sandbox | undefined;
  meta: ConversationMeta;
  /** Newest stored event timestamp. */
  lastEventAt: string | undefined;
  sessionKey: string | undefined;
  /** Names of the conversations started with this one as parent. */
  subConversationIds?: string[];
}

/** The newest of creation, start-task progress, the agent server's update and the newest event. */
export function conversationUpdatedAt(v: Omit<ConversationView, 'sessionKey' | 'sandbox' | 'subConversationIds'>): string {
  const times = [createdAtOf(v.conv), v.conv.status?.startTask?.updatedAt, v.meta.updatedAt ?? undefined, v.lastEventAt];
  // Normalised to UTC ISO with milliseconds, so string order is time order.
  return times.map((t) => isoOf(t)).reduce((a, b) => (b > a ? b : a), '');
}

const TITLE_LENGTH = 50;

/**
 * The title a conversation shows: the one given (start request or PATCH), else the first line of
 * its initial message, else `Conversation <id prefix>` as OpenHands names untitled conversations.
 */
export function conversationTitle(conv: Conversation, metaTitle: string | null | undefined): string {
  const given = conv.spec.title ?? metaTitle;
  if (given) return given;
  const text = conv.spec.initialMessage?.content.map((c) => c.text).join(' ') ?? '';
  const line = text.split('\n').map((l) => l.replace(/\s+/g, ' ').trim()).find(Boolean);
  if (!line) return `Conversation ${conv.metadata.name.slice(0, 5)}`;
  return line.length > TITLE_LENGTH ? `${line.slice(0, TITLE_LENGTH - 1).trimEnd()}…` : line;
}

export function appConversationRecord(v: ConversationView): Record<string, unknown> {
  const { conv, sandbox } = v;
  const sandboxStatus = conversationSandboxStatus(conv, sandbox);
  const running = sandboxStatus === 'RUNNING' && sandbox?.status?.url !== undefined;
  const base = running ? sandbox!.status!.url!.replace(/\/+$/, '') : undefined;
  return {
    id: conv.metadata.name,
    app_conversation_id: conv.metadata.name,
    created_by_user_id: ownerOf(conv),
    sandbox_id: sandboxNameOf(conv) ?? null,
    selected_repository: conv.spec.selectedRepository ?? null,
    selected_branch: conv.spec.selectedBranch ?? null,
    git_provider: conv.spec.gitProvider ?? (conv.spec.selectedRepository ? 'github' : null),
    title: conversationTitle(conv, v.meta.title),
    trigger: conv.spec.clientFields?.trigger ?? null,
    pr_number: conv.spec.clientFields?.prNumbers ?? [],
    llm_model: conv.spec.llmModel ?? conv.status?.metrics?.model_name ?? null,
    // OpenHands' agent_kind is openhands|acp (the agent implementation); agent_type is the mode.
    agent_kind: 'openhands',
    agent_type: conv.spec.agentType ?? 'default',
    metrics: conv.status?.metrics ?? null,
    parent_conversation_id: conv.spec.parentConversation ?? null,
    sub_conversation_ids: v.subConversationIds ?? [],
    public: conv.spec.clientFields?.public ?? null,
    unapplied_fields: unappliedFieldsOf(conv),
    tags: {},
    created_at: createdAtOf(conv) ?? null,
    updated_at: conversationUpdatedAt(v),
    sandbox_status: shownSandboxStatus(conv, sandbox),
    execution_status: conv.status?.executionStatus ?? null,
    conversation_url: base ? `${base}/api/conversations/${conv.metadata.name}` : null,
    session_api_key: running ? (v.sessionKey ?? null) : null,
    // OpenHands fields for what is not built here (ACP agents, agent profiles): present, null, so a
    // client generated from its document reads them as "none" (the side-by-side suite found them missing).
    acp_server: null,
    launched_agent_profile: null,
  };
}

function portOf(url: string): number | null {
  try {
    const u = new URL(url);
    return u.port ? Number(u.port) : u.protocol === 'https:' ? 443 : 80;
  } catch {
    return null;
  }
}

/** SandboxInfo. `sessionKey` is shown to the owner only, and only while RUNNING. */
export function sandboxInfoRecord(sb: Sandbox, sessionKey: string | undefined): Record<string, unknown> {
  const status = sandboxPhase(sb);
  const url = status === 'RUNNING' ? sb.status?.url : undefined;
  return {
    id: sb.metadata.name,
    created_by_user_id: ownerOf(sb),
    sandbox_spec_id: sb.spec.image ?? DEFAULT_SANDBOX_SPEC,
    status,
    status_detail: sb.status?.message ?? null,
    session_api_key: status === 'RUNNING' ? (sessionKey ?? null) : null,
    exposed_urls: url ? [{ name: 'AGENT_SERVER', url, port: portOf(url) }] : null,
    created_at: createdAtOf(sb) ?? null,
  };
}
