// The /api/v1 route table: the one description of the application API that the OpenAPI document
// is generated from. Request schemas are the ones the facade validates with.
import Type, { type TSchema } from 'typebox';
import { Event } from '../events/index.ts';
import { SinkAck, SinkConversationUpdate, SinkEventBatch } from '../event-sink.ts';
import { GitProvider, SandboxGrouping } from '../conversation.ts';
import {
  AppConfirmationPolicyRequest,
  AppConfirmationResponse,
  AppForkRequest,
  AppConversationStartRequest,
  AppConversationUpdateRequest,
  AppSendMessageRequest,
  ConversationChangesQuery,
  ConversationCountQuery,
  ConversationSearchQuery,
  EventCountQuery,
  EventSearchQuery,
  IdQuery,
  IdsQuery,
  SandboxIdsQuery,
  WorkspaceFileQuery,
  WorkspaceFilesQuery,
  WorkspaceGitQuery,
  PageQuery,
  SandboxCreateQuery,
  SandboxDeleteQuery,
  MarketplaceRegistrationCreate,
  MarketplaceRegistrationUpdate,
  GitLogin,
  SettingsUpdate,
  StoredSecretCreate,
  StoredSecretUpdate,
  StartTaskCountQuery,
  StartTaskSearchQuery,
} from './requests.ts';
import { ConversationHooksResponse } from './hooks.ts';
import { MarketplacePluginsResponse } from '../agent-server/git.ts';
import { BranchPage, BranchSearchQuery, EditResponse, GitProvidersRequest, InstallationPage, InstallationSearchQuery, ProviderType, RepositoryPage, RepositorySearchQuery, SuggestedTaskPage, SuggestedTaskSearchQuery } from './git.ts';
import { ListQuery, ModelInfo, NOT_BUILT_ROUTES, PendingMessageRequest, PendingMessageResponse, ProviderInfo, SandboxSpecInfo } from './compat.ts';
import { AppConversation, AppConversationStartTask, AppSendMessageResponse, MarketplaceRegistration, Page, SandboxInfo, Success } from './responses.ts';
import { ConversationSkillsResponse } from './skills.ts';
import { ActivateProfileResponse, AgentSettingsView, ConversationSettingsView, ProfileDetailResponse, ProfileListResponse, ProfileMutationResponse, RenameProfileRequest, SaveProfileRequest, SettingsForm, SkillInfo, SkillSearchQuery, SwitchProfileRequest } from './llm-settings.ts';
import { UsageReport, UsersUsage } from './usage.ts';
import { ApiKeyInfo, UserInfo } from './users.ts';
import { WarmPoolCreate, WarmPoolInfo, WarmPoolUpdate } from './warm-pools.ts';
import { AdminSandbox, LicenseStatus, SandboxConfigurationInfo, SandboxConfigurationUpdate, SupportBundleUpload } from './admin.ts';

export interface AppRoute {
  method: 'get' | 'post' | 'patch' | 'delete';
  /** OpenAPI path template under the base URL. */
  path: string;
  summary: string;
  tag: 'conversations' | 'events' | 'sandboxes' | 'settings' | 'users' | 'webhooks' | 'meta' | 'admin';
  query?: TSchema;
  body?: TSchema;
  response?: TSchema;
  /** Authenticated with the sandbox session key instead of a user API key. */
  sandboxAuth?: true;
  /** Readable without any key. */
  public?: true;
  /** An OpenHands route agentyard does not build: always 501 with the reason. */
  notBuilt?: true;
}

const Nullable = <T extends TSchema>(s: T) => Type.Union([s, Type.Null()]);
const Count = Type.Integer({ minimum: 0 });
const Settings = Type.Object({
  sandbox_grouping_strategy: SandboxGrouping,
  git_login: Nullable(GitLogin),
  git_login_provider: GitProvider,
  agent_settings: AgentSettingsView,
  conversation_settings: ConversationSettingsView,
  provider_tokens_set: Type.Record(ProviderType, Nullable(Type.String()), { description: "OpenHands': provider → host, for each provider whose <PROVIDER>_TOKEN secret the caller has" }),
});

const StoredSecretInfo = Type.Object({ name: Type.String(), description: Nullable(Type.String()) });

export const APP_ROUTES: AppRoute[] = [
  { method: 'post', path: '/api/v1/app-conversations', tag: 'conversations', summary: 'Start a conversation (asynchronous; returns a start task)', body: AppConversationStartRequest, response: AppConversationStartTask },
  { method: 'get', path: '/api/v1/app-conversations', tag: 'conversations', summary: 'Get conversations by id (aligned with the input, null for unknown; 422 with the position for a malformed id)', query: IdsQuery, response: Type.Array(Nullable(AppConversation)) },
  { method: 'get', path: '/api/v1/app-conversations/search', tag: 'conversations', summary: 'Search conversations, newest first', query: ConversationSearchQuery, response: Page(AppConversation) },
  { method: 'get', path: '/api/v1/app-conversations/changes', tag: 'conversations', summary: "The caller's conversations as they change (text/event-stream, Server-Sent Events): first `snapshot` (the search's first page, same filters), then `change` (a conversation record, as search shows it: new, or its sandbox or execution status moved) and `remove` ({id}: deleted or no longer matching). Each event's id resumes the stream after it (Last-Event-ID header or `after`) without a gap; when that is too old, a new snapshot comes first. Comments keep it alive; it ends when the key or session no longer holds (checked every 5 s) and after 5 minutes, and the reconnect is authorized again", query: ConversationChangesQuery },
  { method: 'get', path: '/api/v1/app-conversations/count', tag: 'conversations', summary: 'Count conversations', query: ConversationCountQuery, response: Count },
  { method: 'get', path: '/api/v1/app-conversations/start-tasks', tag: 'conversations', summary: 'Get start tasks by id (aligned, null for unknown; 422 with the position for a malformed id)', query: IdsQuery, response: Type.Array(Nullable(AppConversationStartTask)) },
  { method: 'get', path: '/api/v1/app-conversations/start-tasks/search', tag: 'conversations', summary: 'Search start tasks', query: StartTaskSearchQuery, response: Page(AppConversationStartTask) },
  { method: 'get', path: '/api/v1/app-conversations/start-tasks/count', tag: 'conversations', summary: 'Count start tasks', query: StartTaskCountQuery, response: Count },
  { method: 'post', path: '/api/v1/app-conversations/{conversation_id}/send-message', tag: 'conversations', summary: 'Send a follow-up message (a PAUSED sandbox is resumed and the message delivered once it runs; 409 while the sandbox is STARTING, as spec part 3 says)', body: AppSendMessageRequest, response: AppSendMessageResponse },
  { method: 'patch', path: '/api/v1/app-conversations/{conversation_id}', tag: 'conversations', summary: 'Update conversation metadata (title, public). selected_repository, selected_branch and git_provider are fixed at start: 422 naming each', body: AppConversationUpdateRequest, response: AppConversation },
  { method: 'delete', path: '/api/v1/app-conversations/{conversation_id}', tag: 'conversations', summary: 'Delete a conversation and its events; the last conversation of a sandbox takes the sandbox with it. Idempotent: a repeat by the same user answers 200', response: Success },
  { method: 'get', path: '/api/v1/app-conversations/{conversation_id}/download', tag: 'conversations', summary: 'Download the trajectory: a zip of every event plus meta.json (application/zip)' },
  { method: 'post', path: '/api/v1/app-conversations/{conversation_id}/fork', tag: 'conversations', summary: "Fork a conversation: a new one in the same sandbox with the source's events and state copied (the source is not changed); answers its start task. A paused sandbox is resumed; 409/410 when the source is read-only or still starting", body: AppForkRequest, response: AppConversationStartTask },
  { method: 'post', path: '/api/v1/app-conversations/{conversation_id}/confirmation-policy', tag: 'conversations', summary: "Set the conversation's confirmation policy (NeverConfirm, AlwaysConfirm, ConfirmRisky) on its agent server; actions it covers wait in waiting_for_confirmation. 409/410 when the sandbox is read-only", body: AppConfirmationPolicyRequest, response: Success },
  { method: 'post', path: '/api/v1/app-conversations/{conversation_id}/respond-to-confirmation', tag: 'conversations', summary: 'Accept (they run) or reject (each gets a UserRejectObservation with the reason) the actions waiting for confirmation', body: AppConfirmationResponse, response: Success },
  { method: 'get', path: '/api/v1/app-conversations/{conversation_id}/file', tag: 'conversations', summary: 'Read a workspace file ; the content as a JSON string. A paused sandbox is resumed by the read; 409/410 when read-only', query: WorkspaceFileQuery, response: Type.String() },
  { method: 'get', path: '/api/v1/app-conversations/{conversation_id}/git/changes', tag: 'conversations', summary: 'Git changes in the workspace repository at path', query: WorkspaceGitQuery, response: Type.Array(Type.Object({ status: Type.String(), path: Type.String() })) },
  { method: 'get', path: '/api/v1/app-conversations/{conversation_id}/git/diff', tag: 'conversations', summary: 'Whole file at path before and after', query: WorkspaceGitQuery, response: Type.Object({ modified: Nullable(Type.String()), original: Nullable(Type.String()) }) },
  { method: 'get', path: '/api/v1/app-conversations/{conversation_id}/files', tag: 'conversations', summary: 'List workspace files under a directory (relative paths, sorted, at most 2000; .git, node_modules, build and cache directories left out). A paused sandbox is resumed; 409/410 when read-only', query: WorkspaceFilesQuery, response: Type.Array(Type.String()) },
  { method: 'get', path: '/api/v1/app-conversations/{conversation_id}/skills', tag: 'conversations', summary: 'Skills the workspace loads, read live from the agent server. A paused sandbox is resumed by the read; 409/410 when read-only', response: ConversationSkillsResponse },
  { method: 'get', path: '/api/v1/app-conversations/{conversation_id}/hooks', tag: 'conversations', summary: "Hooks configured in the conversation's workspace (.openhands/hooks.json, read live), grouped by event type. A paused sandbox is resumed by the read; 409/410 when read-only", response: ConversationHooksResponse },
  { method: 'get', path: '/api/v1/conversation/{conversation_id}/events/search', tag: 'events', summary: 'Search the events of a conversation (readable after its sandbox is gone)', query: EventSearchQuery, response: Page(Event) },
  { method: 'get', path: '/api/v1/conversation/{conversation_id}/events/count', tag: 'events', summary: 'Count events', query: EventCountQuery, response: Count },
  { method: 'get', path: '/api/v1/conversation/{conversation_id}/events', tag: 'events', summary: 'Get events by id (aligned, null for unknown)', query: IdQuery, response: Type.Array(Nullable(Event)) },
  { method: 'post', path: '/api/v1/sandboxes', tag: 'sandboxes', summary: 'Create a sandbox (STARTING, then RUNNING when ready)', query: SandboxCreateQuery, response: SandboxInfo },
  { method: 'get', path: '/api/v1/sandboxes', tag: 'sandboxes', summary: 'Get sandboxes by id (aligned, null for unknown; 422 for a malformed id)', query: SandboxIdsQuery, response: Type.Array(Nullable(SandboxInfo)) },
  { method: 'get', path: '/api/v1/sandboxes/search', tag: 'sandboxes', summary: 'Search sandboxes, newest first', query: PageQuery, response: Page(SandboxInfo) },
  { method: 'post', path: '/api/v1/sandboxes/{sandbox_id}/pause', tag: 'sandboxes', summary: 'Pause (compute released, workspace kept); idempotent', response: Success },
  { method: 'post', path: '/api/v1/sandboxes/{sandbox_id}/resume', tag: 'sandboxes', summary: 'Resume; a new 12-hour window starts; idempotent', response: Success },
  { method: 'delete', path: '/api/v1/sandboxes/{sandbox_id}', tag: 'sandboxes', summary: 'Delete the sandbox; its conversations become read-only (MISSING). Idempotent: a repeat by the same user answers 200; pause or resume afterwards answers 410', query: SandboxDeleteQuery, response: Success },
  { method: 'post', path: '/api/v1/app-conversations/stream-start', tag: 'conversations', summary: 'Start a conversation and stream its start task: one JSON array of snapshots, a new one at every change, closed at READY or ERROR (or after 15 minutes; poll on from there)', body: AppConversationStartRequest, response: Type.Array(AppConversationStartTask) },
  { method: 'post', path: '/api/v1/conversations/{conversation_id}/pending-messages', tag: 'conversations', summary: "Queue a message for a conversation that may still be starting (id: the conversation's, or task-<start task id>); delivered in order once it is READY and its sandbox RUNNING. 201 queued; 200 delivered at once when ready with nothing waiting; 429 past 10 waiting", body: PendingMessageRequest, response: PendingMessageResponse },
  { method: 'get', path: '/api/v1/warm-pools', tag: 'sandboxes', summary: 'Warm pools: ready sandboxes that conversation starts claim (administrators only; 403 otherwise)', response: Type.Object({ items: Type.Array(WarmPoolInfo) }) },
  { method: 'post', path: '/api/v1/warm-pools', tag: 'sandboxes', summary: 'Create a warm pool; the controller starts its members (administrators only; 409 for a taken name)', body: WarmPoolCreate, response: WarmPoolInfo },
  { method: 'get', path: '/api/v1/warm-pools/{name}', tag: 'sandboxes', summary: 'One warm pool with its ready, starting and claimed members (administrators only)', response: WarmPoolInfo },
  { method: 'patch', path: '/api/v1/warm-pools/{name}', tag: 'sandboxes', summary: 'Change replicas or template; a new template replaces every unclaimed member (administrators only)', body: WarmPoolUpdate, response: WarmPoolInfo },
  { method: 'delete', path: '/api/v1/warm-pools/{name}', tag: 'sandboxes', summary: 'Delete a warm pool and its unclaimed members; claimed sandboxes stay with their users (administrators only)', response: Success },
  { method: 'get', path: '/api/v1/sandbox-specs/search', tag: 'sandboxes', summary: 'Sandbox specs: what a sandbox starts from (runtime, image, resources). One, default: the installation\'s', query: PageQuery, response: Page(SandboxSpecInfo) },
  { method: 'get', path: '/api/v1/sandbox-specs', tag: 'sandboxes', summary: 'Get sandbox specs by id (aligned, null for unknown)', query: IdQuery, response: Type.Array(Nullable(SandboxSpecInfo)) },
  { method: 'get', path: '/api/v1/config/models/search', tag: 'settings', summary: 'The model agents are given (LLM_MODEL); llm_model at start may name another the same endpoint serves', query: ListQuery, response: Page(ModelInfo) },
  { method: 'get', path: '/api/v1/config/providers/search', tag: 'settings', summary: 'The provider of the configured model', query: ListQuery, response: Page(ProviderInfo) },
  { method: 'get', path: '/api/v1/settings/agent-schema', tag: 'settings', summary: "The agent settings form (OpenHands' SettingsSchema): what agent_settings_diff of POST /api/v1/settings sets here, the model of new conversations", response: SettingsForm },
  { method: 'get', path: '/api/v1/settings/conversation-schema', tag: 'settings', summary: "The conversation settings form (OpenHands' SettingsSchema): the defaults conversation_settings_diff of POST /api/v1/settings sets for new conversations", response: SettingsForm },
  { method: 'get', path: '/api/v1/settings/profiles', tag: 'settings', summary: "The caller's saved LLM profiles (never a key: api_key_set) and the active one", response: ProfileListResponse },
  { method: 'get', path: '/api/v1/settings/profiles/{name}', tag: 'settings', summary: "A profile's stored configuration (api_key always null; api_key_set) and which of its fields change nothing here", response: ProfileDetailResponse },
  { method: 'post', path: '/api/v1/settings/profiles/{name}', tag: 'settings', summary: "Save an LLM profile (201): the llm given, or the agent's LLM when none; an existing one is replaced (409 past 10 profiles). Its model applies when activated or switched to; endpoint and key stay the installation's", body: SaveProfileRequest, response: ProfileMutationResponse },
  { method: 'delete', path: '/api/v1/settings/profiles/{name}', tag: 'settings', summary: 'Delete a profile; idempotent', response: ProfileMutationResponse },
  { method: 'post', path: '/api/v1/settings/profiles/{name}/activate', tag: 'settings', summary: "Make a profile the agent's LLM: its model for the caller's new conversations (404 for an unknown profile)", response: ActivateProfileResponse },
  { method: 'post', path: '/api/v1/settings/profiles/{name}/rename', tag: 'settings', summary: 'Rename a profile, keeping its key and whether it is active (409 when the new name is taken)', body: RenameProfileRequest, response: ProfileMutationResponse },
  { method: 'post', path: '/api/v1/app-conversations/{conversation_id}/switch_profile', tag: 'conversations', summary: "Switch a conversation's agent to a profile's model from its next model call on (a paused sandbox is resumed); the record's llm_model follows. 404 for an unknown profile", body: SwitchProfileRequest, response: Success },
  { method: 'get', path: '/api/v1/skills/search', tag: 'settings', summary: "Skills the caller's new conversations get from outside their repository: the user configuration repository of their Git login, and the plugins of their registered marketplaces (read afresh)", query: SkillSearchQuery, response: Page(SkillInfo) },
  { method: 'get', path: '/api/v1/git/installations/search', tag: 'users', summary: "Installations (OpenHands): github's GitHub App installations (GET /user/installations of the configured GitHub host; none for a personal access token), Bitbucket workspaces, Bitbucket Data Center project keys, the configured Azure DevOps organization; gitlab and forgejo have none: 400, as OpenHands answers. 403 without the provider's <PROVIDER>_TOKEN secret; 429 with Retry-After when GitHub rate-limits the token; providers not searched here 501", query: InstallationSearchQuery, response: InstallationPage },
  { method: 'get', path: '/api/v1/git/repositories/search', tag: 'users', summary: "Repositories on the installation's host for the provider (AGENTYARD_GIT_HOSTS) seen with the caller's <PROVIDER>_TOKEN secret: matching `query` (by stars unless sort_order says, where the host can sort so), else the caller's own (installation_id: a GitHub App installation's, a Bitbucket workspace's or a Data Center project's). 403 without the token, 403 when the host refuses it, 429 with Retry-After when GitHub rate-limits it, 502 when the host fails; providers not searched here 501", query: RepositorySearchQuery, response: RepositoryPage },
  { method: 'get', path: '/api/v1/git/branches/search', tag: 'users', summary: "Branches of a repository (owner/repo; GitLab group/subgroup/project; Azure DevOps organization/project/repo): every branch in the host's order for an empty query, else those whose name contains it; none for a repository the token cannot see. 403 without the token; providers not searched here 501", query: BranchSearchQuery, response: BranchPage },
  { method: 'get', path: '/api/v1/git/suggested-tasks/search', tag: 'users', summary: "Suggested tasks from the caller's provider tokens, as OpenHands 1.11 builds them: GitHub, GitLab and Azure DevOps pull/merge requests with conflicts, failing checks or unresolved comments, then the open issues (work items) assigned to the caller; none for forgejo and Bitbucket. 403 without any token; 501 when a token of a provider not searched here is held", query: SuggestedTaskSearchQuery, response: SuggestedTaskPage },
  { method: 'post', path: '/api/v1/secrets/git-providers', tag: 'settings', summary: "Save Git provider tokens (OpenHands): a token is checked with the installation's host for its provider, as OpenHands checks it (422 when the host refuses it, or when `host` names another host), and stored as the <PROVIDER>_TOKEN secret (GITHUB_TOKEN, GITLAB_TOKEN, AZURE_DEVOPS_TOKEN...), the one clones and git searches use; an empty token keeps the stored one. Providers not searched here 501", body: GitProvidersRequest, response: EditResponse },
  { method: 'delete', path: '/api/v1/secrets/git-providers', tag: 'settings', summary: "Delete the caller's provider tokens (the GITHUB_TOKEN, GITLAB_TOKEN, BITBUCKET_TOKEN, BITBUCKET_DATA_CENTER_TOKEN, AZURE_DEVOPS_TOKEN and FORGEJO_TOKEN secrets); idempotent", response: EditResponse },
  ...NOT_BUILT_ROUTES.map((r): AppRoute => ({ method: r.method, path: r.path, tag: r.path.includes('/git/') ? 'users' : 'settings', summary: `Not built: answers 501. ${r.reason}`, notBuilt: true })),
  { method: 'get', path: '/api/v1/settings', tag: 'settings', summary: "The caller's settings", response: Settings },
  { method: 'post', path: '/api/v1/settings', tag: 'settings', summary: 'Save settings (Sandbox Grouping Strategy, Git login; agent_settings_diff and conversation_settings_diff as OpenHands takes them); the fields given only', body: SettingsUpdate, response: Settings },
  { method: 'get', path: '/api/v1/users/me', tag: 'users', summary: 'The user the API key belongs to, and whether they are an administrator', response: Type.Object({ id: Type.String(), name: Type.String(), admin: Type.Boolean() }) },
  { method: 'get', path: '/api/v1/users/me/keys', tag: 'users', summary: "The caller's API keys (display prefixes, creation and revocation times; never a key)", response: Type.Object({ items: Type.Array(ApiKeyInfo) }) },
  { method: 'post', path: '/api/v1/users/me/keys', tag: 'users', summary: 'Issue a new API key for the caller (201). The key is in this answer only; afterwards it is listed by its prefix', response: Type.Object({ key: Type.String(), prefix: Type.String(), created_at: Type.Union([Type.String(), Type.Null()]) }) },
  { method: 'delete', path: '/api/v1/users/me/keys/{prefix}', tag: 'users', summary: "Revoke one of the caller's keys (by the prefix the list shows); refused at once and for good. 404 when no working key has it, 409 when several do", response: Success },
  { method: 'get', path: '/api/v1/admin/license', tag: 'admin', summary: 'The installed license: validity, expiry, seats against enabled users, signature check (administrators only; 403 otherwise). Never the whole license id', response: LicenseStatus },
  { method: 'post', path: '/api/v1/admin/support-bundle', tag: 'admin', summary: "Collect a redacted support bundle (versions, settings, Sandbox and Conversation resources, users without keys, license status) and upload it over HTTPS to the installation's receiver with its token (administrators only). 409 when no receiver or token is configured, 502 when the receiver refuses or stays unreachable", response: SupportBundleUpload },
  { method: 'get', path: '/api/v1/users', tag: 'users', summary: 'Every user (administrators only; 403 otherwise)', response: Type.Object({ items: Type.Array(UserInfo) }) },
  { method: 'post', path: '/api/v1/users/{user_id}/disable', tag: 'users', summary: "Disable a user: every key of theirs is refused at once (administrators only; 409 for oneself)", response: UserInfo },
  { method: 'post', path: '/api/v1/users/{user_id}/enable', tag: 'users', summary: "Enable a user again: their unrevoked keys work again (administrators only)", response: UserInfo },
  { method: 'post', path: '/api/v1/users/{user_id}/admin', tag: 'users', summary: 'Grant the administrator role (administrators only)', response: UserInfo },
  { method: 'delete', path: '/api/v1/users/{user_id}/admin', tag: 'users', summary: 'Revoke the administrator role (administrators only; 409 for oneself)', response: UserInfo },
  { method: 'get', path: '/api/v1/users/{user_id}/keys', tag: 'users', summary: "A user's API keys (administrators only)", response: Type.Object({ items: Type.Array(ApiKeyInfo) }) },
  { method: 'delete', path: '/api/v1/users/{user_id}/keys/{prefix}', tag: 'users', summary: "Revoke a user's key (administrators only)", response: Success },
  { method: 'get', path: '/api/v1/secrets/search', tag: 'settings', summary: "The caller's stored secrets: names and descriptions, never values (by name)", query: PageQuery, response: Page(StoredSecretInfo) },
  { method: 'post', path: '/api/v1/secrets', tag: 'settings', summary: 'Store a secret (201; 409 when the name exists). Given to each new conversation of the caller; a per-conversation secret of the same name wins', body: StoredSecretCreate, response: StoredSecretInfo },
  { method: 'get', path: '/api/v1/secrets/{name}', tag: 'settings', summary: "A stored secret's name and description (never the value)", response: StoredSecretInfo },
  { method: 'patch', path: '/api/v1/secrets/{name}', tag: 'settings', summary: "Replace a stored secret's value and/or description; running conversations keep what they started with", body: StoredSecretUpdate, response: StoredSecretInfo },
  { method: 'delete', path: '/api/v1/secrets/{name}', tag: 'settings', summary: 'Delete a stored secret', response: Success },
  { method: 'get', path: '/api/v1/settings/marketplaces', tag: 'settings', summary: "The caller's personal skill marketplaces, then the installation's organization ones (visible to every user)", response: Type.Object({ items: Type.Array(MarketplaceRegistration) }) },
  { method: 'post', path: '/api/v1/settings/marketplaces', tag: 'settings', summary: 'Register a marketplace (URL, optional ref and path, personal or organization scope, Auto-Load); 201, 409 when the name is taken, 403 for organization scope unless an administrator. Registering alone loads nothing', body: MarketplaceRegistrationCreate, response: MarketplaceRegistration },
  { method: 'get', path: '/api/v1/settings/marketplaces/{name}/plugins', tag: 'settings', summary: "The plugins a registered marketplace offers, read from its manifest (.plugin/ or .claude-plugin/marketplace.json); status says why the list is empty when it could not be read", response: Type.Intersect([MarketplacePluginsResponse, Type.Object({ marketplace: MarketplaceRegistration })]) },
  { method: 'patch', path: '/api/v1/settings/marketplaces/{name}', tag: 'settings', summary: 'Change a registration (Auto-Load, URL, ref, path); applies to conversations started afterwards, never to running ones', body: MarketplaceRegistrationUpdate, response: MarketplaceRegistration },
  { method: 'delete', path: '/api/v1/settings/marketplaces/{name}', tag: 'settings', summary: 'Unregister a marketplace', response: Success },
  { method: 'get', path: '/api/v1/admin/sandbox-configuration', tag: 'users', summary: 'Sandbox Configuration (admin console): Idle Time, Deletion Time and sandbox capacity in force, their defaults, and the audit trail of changes, newest first (administrators only; 403 otherwise)', response: SandboxConfigurationInfo },
  { method: 'patch', path: '/api/v1/admin/sandbox-configuration', tag: 'users', summary: 'Change the Sandbox Configuration (null: back to the default). The controller takes it up at once, for running sandboxes too; each change is recorded with who made it (administrators only)', body: SandboxConfigurationUpdate, response: SandboxConfigurationInfo },
  { method: 'get', path: '/api/v1/admin/sandboxes', tag: 'users', summary: 'The sandboxes of every user, with owner and status (administrators only)', response: Type.Object({ items: Type.Array(AdminSandbox) }) },
  { method: 'get', path: '/api/v1/usage', tag: 'users', summary: "The caller's model usage as the model gateway recorded it (what the provider reported per call), in all and per conversation, sandbox and model", response: UsageReport },
  { method: 'get', path: '/api/v1/usage/users', tag: 'users', summary: "Every user's model usage (the admin user only; 403 for others)", response: UsersUsage },
  { method: 'get', path: '/api/v1/openapi.json', tag: 'meta', summary: 'This OpenAPI 3.1 document (no key needed)', public: true },
  { method: 'post', path: '/api/v1/webhooks/{sandbox_id}/events/{conversation_id}', tag: 'webhooks', summary: 'Event sink for agent servers (in order, idempotent)', body: SinkEventBatch, response: SinkAck, sandboxAuth: true },
  { method: 'post', path: '/api/v1/webhooks/{sandbox_id}/conversations', tag: 'webhooks', summary: 'Conversation status from agent servers', body: SinkConversationUpdate, response: Success, sandboxAuth: true },
];
