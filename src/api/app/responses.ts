// Response records of the /api/v1 routes, in the OpenHands V1 app-server shape.
import Type, { type Static, type TSchema } from 'typebox';
import { ExecutionStatus, StartTaskStatus, UsageMetrics } from '../conversation.ts';
import { SandboxPhase } from '../sandbox.ts';
import { AppConversationStartRequest } from './requests.ts';

const Nullable = <T extends TSchema>(s: T) => Type.Union([s, Type.Null()]);
const Time = Type.String({ description: 'ISO 8601, UTC' });

export const AppConversationStartTask = Type.Object({
  id: Type.String({ description: '32-character hex UUID' }),
  created_by_user_id: Nullable(Type.String()),
  status: StartTaskStatus,
  detail: Nullable(Type.String()),
  app_conversation_id: Nullable(Type.String({ description: 'Set once the task is READY' })),
  sandbox_id: Nullable(Type.String()),
  agent_server_url: Nullable(Type.String()),
  request: Type.Partial(AppConversationStartRequest, { description: 'The start request, secret values masked; conversation_id is the id taken' }),
  unapplied_fields: Type.Record(Type.String(), Type.String(), { description: 'Start-request fields accepted and stored that change nothing in agentyard, each with the reason' }),
  created_at: Nullable(Time),
  updated_at: Time,
});
export type AppConversationStartTask = Static<typeof AppConversationStartTask>;

export const AppConversation = Type.Object({
  id: Type.String({ description: 'Conversation id, 32-character hex UUID' }),
  app_conversation_id: Type.String({ description: 'The same id under the name the start task and spec part 2 use' }),
  created_by_user_id: Nullable(Type.String()),
  sandbox_id: Nullable(Type.String()),
  selected_repository: Nullable(Type.String()),
  selected_branch: Nullable(Type.String()),
  git_provider: Nullable(Type.String()),
  title: Nullable(Type.String()),
  trigger: Nullable(Type.String()),
  pr_number: Type.Array(Type.Integer()),
  llm_model: Nullable(Type.String()),
  agent_kind: Type.String({ description: 'openhands (the built-in agent loop)' }),
  agent_type: Type.Union([Type.Literal('default'), Type.Literal('plan')], { description: 'plan: the agent was told to write its plan to PLAN.md and change nothing else' }),
  metrics: Nullable(UsageMetrics),
  parent_conversation_id: Nullable(Type.String()),
  sub_conversation_ids: Type.Array(Type.String()),
  public: Nullable(Type.Boolean()),
  unapplied_fields: Type.Record(Type.String(), Type.String(), { description: 'Start-request fields accepted and stored that change nothing in agentyard, each with the reason' }),
  tags: Type.Record(Type.String(), Type.String()),
  created_at: Nullable(Time),
  updated_at: Time,
  sandbox_status: SandboxPhase,
  execution_status: Nullable(ExecutionStatus),
  conversation_url: Nullable(Type.String()),
  session_api_key: Nullable(Type.String({ description: "The sandbox's agent-server key; only while RUNNING" })),
  acp_server: Nullable(Type.String({ description: 'The ACP agent server a conversation runs on (OpenHands); always null: no ACP agents here' })),
  launched_agent_profile: Nullable(
    Type.Object({ agent_profile_id: Type.String(), revision: Type.Integer() }, { description: 'The agent profile it started from (OpenHands); always null: agent profiles are not applied here (see unapplied_fields)' }),
  ),
});
export type AppConversation = Static<typeof AppConversation>;

export const ExposedUrl = Type.Object({ name: Type.String(), url: Type.String(), port: Nullable(Type.Integer()) });

export const SandboxInfo = Type.Object({
  id: Type.String(),
  created_by_user_id: Nullable(Type.String()),
  sandbox_spec_id: Type.String(),
  status: SandboxPhase,
  status_detail: Nullable(Type.String()),
  session_api_key: Nullable(Type.String({ description: 'Only to the owner, only while RUNNING' })),
  exposed_urls: Nullable(Type.Array(ExposedUrl)),
  created_at: Nullable(Time),
});
export type SandboxInfo = Static<typeof SandboxInfo>;

export function Page<T extends TSchema>(item: T) {
  return Type.Object({ items: Type.Array(item), next_page_id: Nullable(Type.String({ description: 'Opaque cursor of the next page' })) });
}

export const Success = Type.Object({ success: Type.Boolean() });

export const AppSendMessageResponse = Type.Object({
  success: Type.Boolean(),
  sandbox_status: SandboxPhase,
  message: Nullable(Type.String()),
});

export const ValidationError = Type.Object({
  loc: Type.Array(Type.Union([Type.String(), Type.Integer()])),
  msg: Type.String(),
  type: Type.String(),
});
export const HTTPValidationError = Type.Object({ detail: Type.Array(ValidationError) });
export const ErrorDetail = Type.Object({ detail: Type.Unknown() });

/** A registered marketplace (Settings > Skills). */
export const MarketplaceRegistration = Type.Object({
  name: Type.String(),
  url: Type.String(),
  ref: Type.Union([Type.String(), Type.Null()]),
  path: Type.Union([Type.String(), Type.Null()]),
  scope: Type.Union([Type.Literal('personal'), Type.Literal('organization')]),
  organization: Type.Union([Type.String(), Type.Null()]),
  auto_load: Type.Boolean(),
});
export type MarketplaceRegistration = Static<typeof MarketplaceRegistration>;
