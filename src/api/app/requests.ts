// Request bodies and query parameters of the /api/v1 routes (OpenHands V1 names). Responses
// are in responses.ts; the facade validates with these and the OpenAPI document shows them.
import Type, { type Static } from 'typebox';
import { GitAuthorEmail, GitAuthorName, GitProvider, InitialMessage, ObservabilityMetadata, PluginSpec, SandboxGrouping, SpanName } from '../conversation.ts';
import { ImageContent, TextContent } from '../events/index.ts';
import { ConfirmationPolicy } from '../agent-server/policy.ts';
import { AgentSettingsDiff, ConversationSettingsDiff } from './llm-settings.ts';

const Nullable = <T extends Parameters<typeof Type.Optional>[0]>(s: T) => Type.Optional(Type.Union([s, Type.Null()]));
const STRICT = { additionalProperties: false } as const;

export const MAX_BATCH_IDS = 100;
export const MAX_SECRETS = 50;
export const MAX_SECRET_VALUE_BYTES = 64 * 1024;
/**
 * A user message (initial_message, send-message), JSON-encoded. One limit for the whole path: the
 * initial message is kept in the Conversation resource (etcd takes objects up to 1.5 MiB) and both
 * go on to the agent server (10 MB bodies), so a message past it is refused here, with a 422 naming
 * the field, instead of failing later where nobody sees it.
 */
export const MAX_MESSAGE_BYTES = 1024 * 1024;
/** Bodies of the routes that carry a message: the message plus secrets and settings around it. */
export const START_BODY_LIMIT_BYTES = MAX_MESSAGE_BYTES + MAX_SECRETS * MAX_SECRET_VALUE_BYTES + 1024 * 1024;
export const SEND_MESSAGE_BODY_LIMIT_BYTES = MAX_MESSAGE_BYTES + 64 * 1024;

/** A 422 issue when `message` is over MAX_MESSAGE_BYTES, located at `loc`. */
export function messageSizeIssue(message: unknown, loc: (string | number)[]): { loc: (string | number)[]; msg: string; type: string } | undefined {
  if (message === undefined || message === null) return undefined;
  const bytes = Buffer.byteLength(JSON.stringify(message), 'utf8');
  if (bytes <= MAX_MESSAGE_BYTES) return undefined;
  return { loc, msg: `A message is limited to ${MAX_MESSAGE_BYTES / 1024 / 1024} MiB (JSON-encoded); this one has ${bytes} bytes`, type: 'too_long' };
}

/** A UUID, dashed or 32-char hex (OpenHands accepts both; records show the hex form). */
export const UuidString = Type.String({ pattern: '^[0-9a-fA-F]{8}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{12}$', description: 'UUID, dashed or 32-character hex' });
/** What started a conversation (OpenHands' ConversationTrigger); stored and shown. */
export const ConversationTrigger = Type.Union(
  ['resolver', 'gui', 'suggested_task', 'openhands_api', 'slack', 'microagent_management', 'jira', 'jira_dc', 'linear', 'bitbucket', 'automation'].map((t) => Type.Literal(t)),
);
/** OpenHands' agent_type: `plan` adds a planning instruction to the system prompt (see AgentType in api/conversation.ts). */
export const AgentType = Type.Union([Type.Literal('default'), Type.Literal('plan')]);
export const SUGGESTED_TASK_TYPES = ['MERGE_CONFLICTS', 'FAILING_CHECKS', 'UNRESOLVED_COMMENTS', 'OPEN_ISSUE', 'OPEN_PR', 'CREATE_MICROAGENT'] as const;
/** OpenHands' SuggestedTask: the initial message is written from it (exclusive with initial_message). */
export const SuggestedTask = Type.Object(
  {
    git_provider: GitProvider,
    task_type: Type.Union(SUGGESTED_TASK_TYPES.map((t) => Type.Literal(t))),
    repo: Type.String({ pattern: '^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$' }),
    issue_number: Type.Integer({ minimum: 1 }),
    title: Type.String({ maxLength: 1000 }),
  },
  STRICT,
);
export type SuggestedTask = Static<typeof SuggestedTask>;
/** OpenHands' EventCallbackProcessor (discriminated by `kind`): stored and shown, not run here. */
export const EventCallbackProcessor = Type.Object({ kind: Type.String({ minLength: 1, maxLength: 200 }) }, { additionalProperties: true });
export const MAX_SYSTEM_MESSAGE_SUFFIX_BYTES = 64 * 1024;

/** Spec part 2, plus the rest of OpenHands' AppConversationStartRequest. Unknown fields are refused (422). */
export const AppConversationStartRequest = Type.Object(
  {
    /** Caller-chosen conversation id; 409 when taken. */
    conversation_id: Nullable(UuidString),
    /** A conversation of the caller's own; the new one inherits its repository, branch, model and (when RUNNING) sandbox. */
    parent_conversation_id: Nullable(UuidString),
    /** Model for this conversation's agent instead of the deployment default (same endpoint and key). */
    llm_model: Nullable(Type.String({ minLength: 1, maxLength: 255 })),
    agent_type: Type.Optional(Type.Union(AgentType.anyOf, { default: 'default' })),
    /** Appended to the agent's system prompt (agent_context.system_message_suffix on the agent server). */
    system_message_suffix: Nullable(Type.String({ maxLength: MAX_SYSTEM_MESSAGE_SUFFIX_BYTES })),
    trigger: Nullable(ConversationTrigger),
    pr_number: Type.Optional(Type.Array(Type.Integer({ minimum: 1 }), { maxItems: 100 })),
    /** Stored and shown; agentyard has no public sharing, so it grants nothing (unapplied_fields says so). */
    public: Nullable(Type.Boolean()),
    suggested_task: Nullable(SuggestedTask),
    processors: Nullable(Type.Array(EventCallbackProcessor, { maxItems: 20 })),
    /** Stored and shown; agentyard has no agent profiles yet (unapplied_fields says so). */
    agent_profile_id: Nullable(Type.String({ minLength: 1, maxLength: 255 })),
    initial_message: Nullable(InitialMessage),
    selected_repository: Nullable(Type.String({ pattern: '^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$' })),
    selected_branch: Nullable(Type.String({ minLength: 1, maxLength: 255, pattern: '^(?!-)[^\\s~^:?*\\[\\\\]+$' })),
    /** Host of selected_repository (default github); the clone uses the secret `<PROVIDER>_TOKEN`. */
    git_provider: Nullable(GitProvider),
    /** Commit author set in the cloned repository (agentyard addition; the push credential does not set authorship). */
    git_user_name: Nullable(GitAuthorName),
    git_user_email: Nullable(GitAuthorEmail),
    sandbox_id: Nullable(Type.String({ minLength: 1 })),
    secrets: Nullable(Type.Record(Type.String(), Type.String())),
    plugins: Nullable(Type.Array(PluginSpec)),
    observability_span_name: Nullable(SpanName),
    observability_tags: Nullable(Type.Array(Type.String({ minLength: 1 }))),
    observability_metadata: Nullable(ObservabilityMetadata),
    title: Nullable(Type.String({ maxLength: 200 })),
  },
  STRICT,
);
export type AppConversationStartRequest = Static<typeof AppConversationStartRequest>;

export const AppSendMessageRequest = Type.Object(
  {
    role: Type.Optional(Type.Literal('user', { default: 'user' })),
    content: Type.Array(Type.Union([TextContent, ImageContent]), { minItems: 1 }),
    run: Type.Optional(Type.Boolean({ default: true })),
  },
  STRICT,
);
export type AppSendMessageRequest = Static<typeof AppSendMessageRequest>;

/** PATCH /api/v1/app-conversations/{id}: only the fields present are applied; null clears. */
export const AppConversationUpdateRequest = Type.Object(
  {
    title: Nullable(Type.String({ minLength: 1, maxLength: 200 })),
    /** Stored and shown (OpenHands' sharing flag); agentyard shares nothing, so true lands in unapplied_fields. */
    public: Nullable(Type.Boolean()),
  },
  STRICT,
);
export type AppConversationUpdateRequest = Static<typeof AppConversationUpdateRequest>;

/** A user's login on a Git host: its configuration repository `<login>/.agents` (or `/service-config`) gives user skills. */
export const GitLogin = Type.String({ pattern: '^[A-Za-z0-9][A-Za-z0-9_.-]{0,99}$', description: "The user's login on the Git host" });
export const SettingsUpdate = Type.Object(
  {
    sandbox_grouping_strategy: Type.Optional(SandboxGrouping),
    /** null clears it: no user skills. */
    git_login: Nullable(GitLogin),
    /** The Git host of git_login (github when never set). */
    git_login_provider: Type.Optional(GitProvider),
    /** OpenHands' nested form: the agent's LLM (src/api/app/llm-settings.ts). */
    agent_settings_diff: Type.Optional(AgentSettingsDiff),
    /** OpenHands' nested form: defaults for new conversations. */
    conversation_settings_diff: Type.Optional(ConversationSettingsDiff),
  },
  STRICT,
);
export type SettingsUpdate = Static<typeof SettingsUpdate>;

const Limit = Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 100 }));
const PageId = Type.Optional(Type.String());
const Ids = Type.Array(Type.String(), { maxItems: MAX_BATCH_IDS });

/**
 * Conversation and start-task ids are UUIDs: a malformed one is a 422 at ['query', 'ids', i], as a
 * generated client expects (OpenHands: 400/422), not a null that reads like "not found".
 */
export const IdsQuery = Type.Object({ ids: Type.Array(UuidString, { maxItems: MAX_BATCH_IDS }) });
export type IdsQuery = Static<typeof IdsQuery>;
/** GET /app-conversations/{id}/files: a directory in the sandbox; default the conversation's working dir. */
export const WorkspaceFilesQuery = Type.Object({
  path: Type.Optional(Type.String({ minLength: 1, description: 'Directory to list (absolute, or relative to the sandbox workspace); default: the conversation working directory' })),
});
export type WorkspaceFilesQuery = Static<typeof WorkspaceFilesQuery>;
export const WorkspaceFileQuery = Type.Object({
  file_path: Type.String({ minLength: 1, description: 'The file to read: an absolute path in the sandbox, or one relative to the working directory (as the file listing gives them)' }),
});
export type WorkspaceFileQuery = Static<typeof WorkspaceFileQuery>;
export const WorkspaceGitQuery = Type.Object({
  path: Type.String({ minLength: 1, description: 'The repository (changes) or the file (diff): an absolute path in the sandbox, or one relative to the working directory' }),
  ref: Type.Optional(Type.String({ minLength: 1, description: 'Compare against this ref instead of HEAD' })),
});
export type WorkspaceGitQuery = Static<typeof WorkspaceGitQuery>;
export const IdQuery = Type.Object({ id: Ids });
export type IdQuery = Static<typeof IdQuery>;
/** Sandbox ids are resource names (lowercase letters, digits, '-' and '.'): anything else is a 422 at ['query', 'id', i]. */
export const SandboxIdsQuery = Type.Object({
  id: Type.Array(Type.String({ pattern: '^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$', description: 'Sandbox id' }), { maxItems: MAX_BATCH_IDS }),
});
export type SandboxIdsQuery = Static<typeof SandboxIdsQuery>;

const ConversationFilters = {
  /** One conversation (a transcript page follows its own record through the change stream). */
  id__eq: Type.Optional(Type.String({ maxLength: 64 })),
  title__contains: Type.Optional(Type.String()),
  created_at__gte: Type.Optional(Type.String()),
  created_at__lt: Type.Optional(Type.String()),
  updated_at__gte: Type.Optional(Type.String()),
  updated_at__lt: Type.Optional(Type.String()),
  sandbox_id__eq: Type.Optional(Type.String()),
  /** Sub-conversations (started with a parent_conversation_id) are left out unless true, as in OpenHands. */
  include_sub_conversations: Type.Optional(Type.Boolean()),
};
export const ConversationCountQuery = Type.Object(ConversationFilters);
export type ConversationCountQuery = Static<typeof ConversationCountQuery>;
export const ConversationSearchQuery = Type.Object({ ...ConversationFilters, page_id: PageId, limit: Limit });
export type ConversationSearchQuery = Static<typeof ConversationSearchQuery>;
/**
 * The change stream of the caller's conversations: the search's filters, `limit` for its first
 * snapshot, and where to resume (`after`: a previous event's id, as the Last-Event-ID header carries it).
 */
export const ConversationChangesQuery = Type.Object({
  ...ConversationFilters,
  limit: Limit,
  after: Type.Optional(Type.String({ maxLength: 512, description: 'Resume after this event id (the Last-Event-ID header wins)' })),
});
export type ConversationChangesQuery = Static<typeof ConversationChangesQuery>;

export const START_TASK_SORTS = ['CREATED_AT', 'CREATED_AT_DESC', 'UPDATED_AT', 'UPDATED_AT_DESC'] as const;
const StartTaskFilters = {
  conversation_id__eq: Type.Optional(Type.String()),
  created_at__gte: Type.Optional(Type.String()),
};
export const StartTaskCountQuery = Type.Object(StartTaskFilters);
export type StartTaskCountQuery = Static<typeof StartTaskCountQuery>;
export const StartTaskSearchQuery = Type.Object({
  ...StartTaskFilters,
  sort_order: Type.Optional(Type.Union(START_TASK_SORTS.map((s) => Type.Literal(s)), { default: 'CREATED_AT_DESC' })),
  page_id: PageId,
  limit: Limit,
});
export type StartTaskSearchQuery = Static<typeof StartTaskSearchQuery>;

const EventFilters = {
  kind__eq: Type.Optional(Type.String()),
  timestamp__gte: Type.Optional(Type.String()),
  timestamp__lt: Type.Optional(Type.String()),
};
export const EventCountQuery = Type.Object(EventFilters);
export type EventCountQuery = Static<typeof EventCountQuery>;
export const EventSearchQuery = Type.Object({
  ...EventFilters,
  sort_order: Type.Optional(Type.Union([Type.Literal('TIMESTAMP'), Type.Literal('TIMESTAMP_DESC')], { default: 'TIMESTAMP' })),
  page_id: PageId,
  limit: Limit,
});
export type EventSearchQuery = Static<typeof EventSearchQuery>;

export const PageQuery = Type.Object({ page_id: PageId, limit: Limit });
export type PageQuery = Static<typeof PageQuery>;

export const SandboxCreateQuery = Type.Object({ sandbox_spec_id: Type.Optional(Type.String()) });
export type SandboxCreateQuery = Static<typeof SandboxCreateQuery>;

export const SandboxDeleteQuery = Type.Object({ sandbox_id: Type.Optional(Type.String()) });
export type SandboxDeleteQuery = Static<typeof SandboxDeleteQuery>;

/** Stored secrets (Settings > Secrets). Values are write-only: no response ever carries one. */
export const MAX_STORED_SECRETS = 50;
export const MAX_STORED_SECRETS_BYTES = 512 * 1024;
const SecretName = Type.String({ minLength: 1, maxLength: 253, pattern: '^[-._a-zA-Z0-9]+$' });
const SecretDescription = Type.String({ maxLength: 1000 });
export const StoredSecretCreate = Type.Object(
  { name: SecretName, value: Type.String({ maxLength: MAX_SECRET_VALUE_BYTES }), description: Nullable(SecretDescription) },
  STRICT,
);
export type StoredSecretCreate = Static<typeof StoredSecretCreate>;
export const StoredSecretUpdate = Type.Object({ value: Type.Optional(Type.String({ maxLength: MAX_SECRET_VALUE_BYTES })), description: Nullable(SecretDescription) }, STRICT);
export type StoredSecretUpdate = Static<typeof StoredSecretUpdate>;
export const StoredSecretParams = Type.Object({ name: SecretName });
export type StoredSecretParams = Static<typeof StoredSecretParams>;

/** Registered skill marketplaces (Settings > Skills, spec part 4). */
export const MAX_MARKETPLACES = 20;
const MarketplaceUrl = Type.String({ pattern: '^https?://[^/@\\s]+/\\S+$', maxLength: 2048, description: 'Repository URL, without credentials' });
const MarketplaceRef = Type.String({ minLength: 1, maxLength: 255, pattern: '^(?!-)[^\\s~^:?*\\[\\\\]+$', description: 'Branch, tag or commit' });
const MarketplacePath = Type.String({ maxLength: 1024, pattern: '^(?!/)(?!.*(?:^|/)\\.\\.(?:/|$))[^\\0]*$', description: 'Directory of the marketplace inside the repository' });
export const MarketplaceScope = Type.Union([Type.Literal('personal'), Type.Literal('organization')]);
export const MarketplaceRegistrationCreate = Type.Object(
  {
    name: Type.String({ pattern: '^[a-z0-9][a-z0-9._-]{0,62}$' }),
    url: MarketplaceUrl,
    ref: Nullable(MarketplaceRef),
    path: Nullable(MarketplacePath),
    scope: Type.Optional(Type.Union(MarketplaceScope.anyOf, { default: 'personal' })),
    /** Required with scope organization: the Git organization whose repositories' conversations it applies to. */
    organization: Nullable(Type.String({ pattern: '^[A-Za-z0-9_.-]{1,100}$' })),
    auto_load: Type.Optional(Type.Boolean({ default: false })),
  },
  STRICT,
);
export type MarketplaceRegistrationCreate = Static<typeof MarketplaceRegistrationCreate>;
export const MarketplaceRegistrationUpdate = Type.Object(
  { url: Type.Optional(MarketplaceUrl), ref: Nullable(MarketplaceRef), path: Nullable(MarketplacePath), auto_load: Type.Optional(Type.Boolean()) },
  STRICT,
);
export type MarketplaceRegistrationUpdate = Static<typeof MarketplaceRegistrationUpdate>;
export const MarketplaceParams = Type.Object({ name: Type.String({ pattern: '^[a-z0-9][a-z0-9._-]{0,62}$' }) });
export type MarketplaceParams = Static<typeof MarketplaceParams>;

/** `POST /app-conversations/{id}/confirmation-policy`: which actions wait for the user (agent server's policy, passed on). */
export const AppConfirmationPolicyRequest = Type.Object({ policy: ConfirmationPolicy }, { additionalProperties: false });
export type AppConfirmationPolicyRequest = Static<typeof AppConfirmationPolicyRequest>;

/** `POST /app-conversations/{id}/respond-to-confirmation`: accept or reject the actions waiting. */
export const AppConfirmationResponse = Type.Object(
  { accept: Type.Boolean(), reason: Type.Optional(Type.String({ minLength: 1, maxLength: 2000 })) },
  { additionalProperties: false },
);
export type AppConfirmationResponse = Static<typeof AppConfirmationResponse>;

/** `POST /app-conversations/{id}/fork`. */
export const AppForkRequest = Type.Object(
  { title: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })) },
  { additionalProperties: false },
);
export type AppForkRequest = Static<typeof AppForkRequest>;
