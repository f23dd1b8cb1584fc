// The agent server's route table: the one description of its HTTP API that its OpenAPI document
// (src/api/gen/agent-server-openapi.ts, served at /openapi.json) is generated from. Schemas are the
// ones the routes validate with. src/agent-server/openapi.test.ts checks that it lists exactly the
// routes the server serves; e2e/parity checks it against the real OpenHands document.
import Type, { type TSchema } from 'typebox';
import { Event } from '../events/index.ts';
import { HAND_OVER_PATH, HandOverRequest } from './hand-over.ts';
import { InitRequest, InitStatus } from './init.ts';
import {
  AskAgentRequest,
  AskAgentResponse,
  BashCommand,
  BashEvent,
  BashEventPage,
  ConfirmationResponseRequest,
  ConversationInfo,
  ConversationPage,
  EventPage,
  ExecuteBashRequest,
  ForkConversationRequest,
  NavigateConversationRequest,
  StartChildConversationRequest,
  StartChildConversationResponse,
  StartGoalRequest,
  LoadPluginRequest,
  GitChange,
  GitCommitsPage,
  GitDiff,
  HealthStatus,
  SendMessageRequest,
  ServerInfo,
  SetConfirmationPolicyRequest,
  SetSecurityAnalyzerRequest,
  SkillsRequest,
  SkillsResponse,
  StartConversationRequest,
  Success,
  SwitchLlmRequest,
  SwitchAcpModelRequest,
  CredentialBindingActivation,
  AcpModelDiscoveryRequest,
  AcpModelDiscovery,
  UpdateConversationRequest,
  UpdateSecretsRequest,
} from './index.ts';
import { GitCloneRequest, GitCloneResponse, MarketplacePluginsRequest, MarketplacePluginsResponse } from './git.ts';
import { OBSERVABILITY_HEADERS } from './conversation.ts';
import { HooksRequest, HooksResponse } from './hooks.ts';
import { ChatCompletion, ChatCompletionRequest, ModelList, OpenAIResponse, ResponseRequest } from './openai.ts';
import { PluginsRequest, PluginsResponse } from './plugins.ts';
import { MarketplaceCatalogResponse, PluginsMarketplaceCatalogResponse, SkillCatalogResponse, SyncResponse } from './extensions.ts';
import { FetchPluginRequest, FetchPluginResponse, InstalledPlugin, InstalledPluginList, InstalledSkill, InstalledSkillList, InstallPluginRequest, InstallSkillRequest, RefreshPluginResponse, RefreshSkillResponse, UninstallResponse, UpdateInstalledStateRequest, UpdateInstalledStateResponse } from './installs.ts';
import { AppBackendSessionResponse, BackendLogs, BackendLogsQuery, BackendRevisionRequest, BackendStatus, InstallCanvasExtensionRequest, InstalledCanvasExtension, InstalledCanvasExtensionList, UninstallCanvasExtensionResponse, UpdateCanvasExtensionStateRequest, UpdateCanvasExtensionStateResponse } from './canvas.ts';
import { ArchiveQuery, ConversationRuntimeInfo, GitProviderRepositoryPage, GitRepositorySearchQuery, ToolCatalogResponse, VSCodeStatus, VSCodeUrlResponse } from './runtime.ts';
import { SubAgentsRequest, SubAgentsResponse } from './sub-agents.ts';
import { ProviderConnectionCreateRequest, ProviderConnectionResponse, ProviderConnectionUpdateRequest } from './provider-connections.ts';
import { SettingsForm } from '../app/llm-settings.ts';
import { AddWorkspaceParentsRequest, AddWorkspacesRequest, EXPOSE_SECRETS_HEADER, McpServerPatch, McpServerSettings, SettingsResponse, SettingsUpdateRequest, SecretCreateRequest, SecretDeleted, SecretItemResponse, SecretsListResponse, WorkspacesListResponse } from './settings.ts';
import { McpOAuthCallbackRequest, McpOAuthStartResponse, McpOAuthStatusResponse, McpTestRequest, McpTestResponse } from './mcp.ts';
import { ActivateProfileResponse, ProfileDetailResponse, ProfileListResponse, ProfileMutationResponse, RenameProfileRequest, SaveProfileRequest, SwitchProfileRequest, ValidateProfileRequest, ValidateProfileResponse } from './profiles.ts';
import { ActivateAgentProfileResponse, AgentProfileDetailResponse, AgentProfileDiagnostics, AgentProfileInput, AgentProfileListResponse, AgentProfileMutationResponse, MaterializeAgentProfileRequest } from './agent-profiles.ts';
import { ActivateMetaProfileResponse, MetaProfile, MetaProfileDetailResponse, MetaProfileListResponse, MetaProfileMutationResponse } from './meta-profiles.ts';
import { ModelsResponse, ProvidersResponse, SubscriptionDevicePollRequest, SubscriptionDeviceStartResponse, SubscriptionModelsResponse, SubscriptionStatusResponse, VerifiedModelsResponse } from './llm.ts';

export interface AgentServerRoute {
  method: 'get' | 'post' | 'put' | 'patch' | 'delete';
  /** OpenAPI path template. */
  path: string;
  summary: string;
  tag: 'server' | 'conversations' | 'events' | 'bash' | 'files' | 'git' | 'skills' | 'tools' | 'vscode' | 'workspace' | 'mcp' | 'settings' | 'openai' | 'profiles' | 'llm' | 'acp' | 'canvas' | 'agentyard';
  /** Query parameters the route reads, and which are required. */
  query?: Record<string, { required?: true; schema?: TSchema }>;
  /** Optional request headers the route reads (string values). */
  headers?: string[];
  body?: TSchema;
  /** The body may be left out (as OpenHands declares some: `requestBody.required` false). */
  bodyOptional?: true;
  response?: TSchema;
  /** The status of a success (default 200). */
  status?: 200 | 201 | 204;
  /** The response is text/plain (a secret's value), not JSON. */
  textResponse?: true;
  /** Served without the session key. */
  public?: true;
}

const S = Type.String();
const I = Type.Integer();
const q = (names: string[], required: string[] = []): AgentServerRoute['query'] => Object.fromEntries(names.map((n) => [n, required.includes(n) ? { required: true } : {}]));
const EVENT_SEARCH = ['page_id', 'limit', 'kind', 'source', 'body', 'sort_order', 'timestamp__gte', 'timestamp__lt'];
const CONV_SEARCH = ['page_id', 'limit', 'status', 'sort_order', 'include_skills'];
/** 1.58: `agent.agent_context.skills` is `[]` in conversation records unless `include_skills=true`. */
const SKILLS = q(['include_skills']);
const C = '/api/conversations/{conversation_id}';
const CX = '/api/canvas-extensions/installed/{extension_name}';
/** A query schema's properties as route query parameters (required as the schema says). */
const fromSchema = (schema: TSchema): AgentServerRoute['query'] => {
  const o = schema as unknown as { properties: Record<string, TSchema>; required?: string[] };
  return Object.fromEntries(Object.entries(o.properties).map(([n, sch]) => [n, { ...(o.required?.includes(n) ? { required: true as const } : {}), schema: sch }]));
};
const BASH_SEARCH = q(['kind__eq', 'command_id__eq', 'timestamp__gte', 'timestamp__lt', 'order__gt', 'sort_order', 'page_id', 'limit']);

/**
 * The one-shot command, file, git and VS Code routes, under `prefix` (`/api`, or a conversation's
 * runtime `/api/conversations/{runtime_conversation_id}`, where they are scoped to its workspace).
 * `server: true` adds what only the server-wide ones have.
 */
function runtimeRoutes(prefix: string, scope: string, server: boolean): AgentServerRoute[] {
  const p = prefix;
  return [
    { method: 'post', path: `${p}/bash/start_bash_command`, tag: 'bash', summary: `Start a command in the background${scope}`, body: ExecuteBashRequest, response: BashCommand },
    { method: 'post', path: `${p}/bash/execute_bash_command`, tag: 'bash', summary: `Run a command and wait for it${scope}`, body: ExecuteBashRequest, response: BashEvent },
    { method: 'post', path: `${p}/bash/bash_commands/{command_id}/stop`, tag: 'bash', summary: 'Stop a running command (SIGTERM, then SIGKILL); a finished one is a success too', response: Success },
    { method: 'get', path: `${p}/bash/bash_events/search`, tag: 'bash', summary: 'Search command events', query: BASH_SEARCH, response: BashEventPage },
    { method: 'get', path: `${p}/bash/bash_events/{event_id}`, tag: 'bash', summary: 'A command event', response: BashEvent },
    { method: 'get', path: `${p}/bash/bash_events/`, tag: 'bash', summary: 'Command events by id (a GET whose JSON body is the list of ids)', body: Type.Array(S) },
    { method: 'delete', path: `${p}/bash/bash_events`, tag: 'bash', summary: 'Clear all command events' },
    { method: 'post', path: `${p}/file/upload`, tag: 'files', summary: `Upload a file (multipart; path in the query)${scope}`, query: q(['path'], ['path']) },
    { method: 'get', path: `${p}/file/download`, tag: 'files', summary: `Download a file${scope}`, query: q(['path', 'ref'], ['path']) },
    { method: 'get', path: `${p}/file/download-trajectory/{conversation_id}`, tag: 'files', summary: "A conversation's trajectory as a zip" },
    { method: 'post', path: `${p}/file/create_directory`, tag: 'files', summary: `Create a directory${scope}`, query: q(['path']) },
    { method: 'get', path: `${p}/file/archive`, tag: 'files', summary: `A directory as a git patch of its changes, or as a tarball${scope}`, query: fromSchema(ArchiveQuery) },
    { method: 'get', path: `${p}/git/changes`, tag: 'git', summary: 'Changed files of a repository', query: q(['path', 'ref'], ['path']), response: Type.Array(GitChange) },
    { method: 'get', path: `${p}/git/diff`, tag: 'git', summary: 'A file before and after (working tree, or a commit)', query: q(['path', 'ref', 'commit'], ['path']), response: GitDiff },
    { method: 'get', path: `${p}/git/commits`, tag: 'git', summary: 'Commit history', query: q(['path', 'limit'], ['path']), response: GitCommitsPage },
    { method: 'get', path: `${p}/git/commits/{sha}/changes`, tag: 'git', summary: 'Files a commit changed', query: q(['path'], ['path']), response: Type.Array(GitChange) },
    { method: 'get', path: `${p}/vscode/url`, tag: 'vscode', summary: 'VS Code: 503, none runs in this sandbox', query: q(['base_url', 'workspace_dir']), response: VSCodeUrlResponse },
    { method: 'get', path: `${p}/vscode/status`, tag: 'vscode', summary: 'VS Code: not enabled (none runs in this sandbox)', response: VSCodeStatus },
    ...(server
      ? ([
          { method: 'get', path: '/api/file/home', tag: 'files', summary: 'The home (workspace) directory', query: q(['include_hidden']), response: Type.Object({ home: S }) },
          { method: 'get', path: '/api/file/search_subdirs', tag: 'files', summary: 'Subdirectories of a directory', query: q(['path', 'page_id', 'limit', 'include_hidden'], ['path']) },
          { method: 'get', path: '/api/desktop/url', tag: 'vscode', summary: 'A remote desktop: 503, none runs in this sandbox (OpenHands before 1.58)', query: q(['base_url']), response: VSCodeUrlResponse },
          { method: 'get', path: '/api/git/repositories/search', tag: 'git', summary: "Repositories a stored GitHub token (settings secret github_token, GITHUB_TOKEN, GH_TOKEN or github) reaches on the configured GitHub host, newest push first, optionally those whose full name contains `query`; without one, missing_token and no items. Page ids as OpenHands 1.58's (page or page:offset); a GitHub rate limit is 429 with Retry-After", query: fromSchema(GitRepositorySearchQuery), response: GitProviderRepositoryPage },
        ] satisfies AgentServerRoute[])
      : []),
  ];
}

export const AGENT_SERVER_ROUTES: AgentServerRoute[] = [
  // The OpenAI-compatible gateway (the agent offered as a model); also `Authorization: Bearer <session key>`.
  { method: 'get', path: '/v1/models', tag: 'openai', summary: 'The models: openhands_<LLM profile> for each stored profile, and openhands_default for the configured model', response: ModelList },
  { method: 'post', path: '/v1/chat/completions', tag: 'openai', summary: "A chat completion: the agent's final answer to the last user message (stream: as SSE chunks after the run)", body: ChatCompletionRequest, response: ChatCompletion, headers: ['X-OpenHands-ServerConversation-ID', ...OBSERVABILITY_HEADERS] },
  { method: 'post', path: '/v1/responses', tag: 'openai', summary: "A response (Responses API, not stored): the agent's final answer", body: ResponseRequest, response: OpenAIResponse, headers: [...OBSERVABILITY_HEADERS] },
  { method: 'get', path: '/', tag: 'server', summary: 'Server information (as /server_info)', response: ServerInfo, public: true },
  { method: 'get', path: '/alive', tag: 'server', summary: 'Liveness', response: HealthStatus, public: true },
  { method: 'get', path: '/health', tag: 'server', summary: 'Health (degraded while the disk is low or refuses writes)', public: true },
  { method: 'get', path: '/ready', tag: 'server', summary: 'Readiness (503 while initializing)', response: HealthStatus, public: true },
  { method: 'get', path: '/server_info', tag: 'server', summary: 'Server information: compatible OpenHands version, tools, capabilities', response: ServerInfo, public: true },

  { method: 'post', path: '/api/conversations', tag: 'conversations', summary: 'Start a conversation (an initial message runs at once)', query: SKILLS, body: StartConversationRequest, response: ConversationInfo, headers: [...OBSERVABILITY_HEADERS] },
  { method: 'get', path: '/api/conversations', tag: 'conversations', summary: 'Conversations by id (null for an unknown one)', query: q(['ids', 'include_skills'], ['ids']), response: Type.Array(Type.Union([ConversationInfo, Type.Null()])) },
  { method: 'get', path: '/api/conversations/search', tag: 'conversations', summary: 'Search conversations', query: q(CONV_SEARCH), response: ConversationPage },
  { method: 'get', path: '/api/conversations/count', tag: 'conversations', summary: 'Count conversations', query: q(['status']), response: I },
  { method: 'get', path: C, tag: 'conversations', summary: 'A conversation', query: SKILLS, response: ConversationInfo },
  { method: 'patch', path: C, tag: 'conversations', summary: 'Update title or tags', body: UpdateConversationRequest, response: Success },
  { method: 'delete', path: C, tag: 'conversations', summary: 'Delete a conversation', response: Success },
  { method: 'get', path: `${C}/agent_final_response`, tag: 'conversations', summary: "The agent's final response", response: Type.Object({ response: S }) },
  { method: 'post', path: `${C}/ask_agent`, tag: 'conversations', summary: 'Ask the agent a side question (nothing recorded)', body: AskAgentRequest, response: AskAgentResponse },
  { method: 'post', path: `${C}/condense`, tag: 'conversations', summary: 'Condense the history now', response: Success },
  { method: 'post', path: `${C}/confirmation_policy`, tag: 'conversations', summary: 'Set the confirmation policy', body: SetConfirmationPolicyRequest, response: Success },
  { method: 'post', path: `${C}/fork`, tag: 'conversations', summary: 'Fork a conversation', query: SKILLS, body: ForkConversationRequest, response: ConversationInfo },
  { method: 'post', path: `${C}/children`, tag: 'conversations', summary: "Start a child conversation: the parent's configuration, the task as its first message (201)", body: StartChildConversationRequest, response: StartChildConversationResponse, status: 201 },
  { method: 'post', path: `${C}/goal`, tag: 'conversations', summary: 'Start a /goal loop: the objective runs, a judge audits each run, followups until done or capped (409 while running)', body: StartGoalRequest, response: Success },
  { method: 'post', path: `${C}/goal/stop`, tag: 'conversations', summary: 'Stop the /goal loop (not the run going on); resumable', response: Success },
  { method: 'post', path: `${C}/goal/resume`, tag: 'conversations', summary: 'Resume the last interrupted /goal loop', response: Success },
  { method: 'post', path: `${C}/load_plugin`, tag: 'conversations', summary: "Load a plugin of the conversation's registered marketplaces (from the next run on)", body: LoadPluginRequest, response: Success },
  { method: 'post', path: `${C}/navigate`, tag: 'conversations', summary: "Move the conversation's HEAD to an event (the next events start a branch there)", query: SKILLS, body: NavigateConversationRequest, response: ConversationInfo },
  { method: 'post', path: `${C}/interrupt`, tag: 'conversations', summary: 'Interrupt the running agent', response: Success },
  { method: 'post', path: `${C}/pause`, tag: 'conversations', summary: 'Pause the agent', response: Success },
  { method: 'post', path: `${C}/run`, tag: 'conversations', summary: 'Run the agent (nothing to do on a finished conversation)', response: Success },
  { method: 'post', path: `${C}/secrets`, tag: 'conversations', summary: 'Add or replace secrets', body: UpdateSecretsRequest, response: Success },
  { method: 'post', path: `${C}/security_analyzer`, tag: 'conversations', summary: 'Set the security analyzer', body: SetSecurityAnalyzerRequest, response: Success },
  { method: 'post', path: `${C}/switch_llm`, tag: 'conversations', summary: 'Switch the LLM for the next model call', body: SwitchLlmRequest, response: Success },
  { method: 'post', path: `${C}/switch_acp_model`, tag: 'conversations', summary: "Switch the model of an ACP conversation's session (before its first run: kept for its start)", body: SwitchAcpModelRequest, response: Success },
  { method: 'put', path: `${C}/credential-bindings/{secret_name}`, tag: 'conversations', summary: "Bind an ACP agent's credential file (CODEX_AUTH_JSON) to a versioned HTTP source; before the server starts, or the same source with rotated headers", body: CredentialBindingActivation, status: 204 },
  { method: 'post', path: '/api/conversations/prepare-for-sandbox-pause', tag: 'conversations', summary: "Stop every ACP conversation's server and flush its bound credential files before the sandbox is frozen", status: 204 },
  { method: 'post', path: `${C}/switch_profile`, tag: 'conversations', summary: "Switch to an LLM profile's LLM for the next model call", body: SwitchProfileRequest, response: Success },

  { method: 'get', path: `${C}/events`, tag: 'events', summary: 'Events by id (a GET whose JSON body is the list of ids)', body: Type.Array(S), response: Type.Array(Type.Union([Event, Type.Null()])) },
  { method: 'post', path: `${C}/events`, tag: 'events', summary: 'Send a user message (run: true starts the agent)', body: SendMessageRequest, response: Success },
  { method: 'get', path: `${C}/events/search`, tag: 'events', summary: 'Search events', query: q(EVENT_SEARCH), response: EventPage },
  { method: 'get', path: `${C}/events/count`, tag: 'events', summary: 'Count events', query: q(EVENT_SEARCH.filter((n) => !['page_id', 'limit', 'sort_order'].includes(n))), response: I },
  { method: 'get', path: `${C}/events/{event_id}`, tag: 'events', summary: 'An event', response: Event },
  { method: 'post', path: `${C}/events/respond_to_confirmation`, tag: 'events', summary: 'Accept or reject the actions waiting for confirmation', body: ConfirmationResponseRequest, response: Success },

  ...runtimeRoutes('/api', '', true),
  ...runtimeRoutes('/api/conversations/{runtime_conversation_id}', " (in the conversation's workspace)", false),
  { method: 'get', path: `${C}/runtime`, tag: 'conversations', summary: "The conversation's runtime: always available (it runs in this server)", response: ConversationRuntimeInfo },
  { method: 'post', path: `${C}/runtime/reprovision`, tag: 'conversations', summary: 'Nothing to provision: the runtime as GET /runtime says', response: ConversationRuntimeInfo },
  { method: 'get', path: `${C}/workspace`, tag: 'workspace', summary: "The workspace's index.html" },
  { method: 'get', path: `${C}/workspace/{file_path}`, tag: 'workspace', summary: 'A file of the workspace (a directory: its index.html), as a static file server' },
  { method: 'post', path: '/api/skills', tag: 'skills', summary: 'The skills a conversation would load', body: SkillsRequest, response: SkillsResponse },
  { method: 'get', path: '/api/skills/catalog', tag: 'skills', summary: 'The skills an agent profile launch can load (public and user)', response: SkillCatalogResponse },
  { method: 'post', path: '/api/skills/sync', tag: 'skills', summary: 'Fetch the extensions repository again (public skills, marketplace)', response: SyncResponse },
  { method: 'get', path: '/api/skills/marketplace', tag: 'skills', summary: "The extensions repository's marketplace, with installed flags", response: MarketplaceCatalogResponse },
  { method: 'get', path: '/api/plugins/marketplace', tag: 'skills', summary: "The extensions repository's plugins (entries under ./plugins/), with attach coordinates and installed flags", response: PluginsMarketplaceCatalogResponse },
  { method: 'post', path: '/api/hooks', tag: 'skills', summary: 'The hooks a workspace configures', body: HooksRequest, response: HooksResponse },
  { method: 'post', path: '/api/canvas-extensions/install', tag: 'canvas', summary: 'Install a Canvas extension (local directory, git URL or github:owner/repo); a new install is disabled', body: InstallCanvasExtensionRequest, response: InstalledCanvasExtension },
  { method: 'get', path: '/api/canvas-extensions/installed', tag: 'canvas', summary: 'Installed Canvas extensions (enabled and disabled)', response: InstalledCanvasExtensionList },
  { method: 'get', path: `${CX}`, tag: 'canvas', summary: 'An installed Canvas extension', response: InstalledCanvasExtension },
  { method: 'patch', path: `${CX}`, tag: 'canvas', summary: 'Enable or disable a Canvas extension (disabling stops its backend and ends its browser sessions)', body: UpdateCanvasExtensionStateRequest, response: UpdateCanvasExtensionStateResponse },
  { method: 'delete', path: `${CX}`, tag: 'canvas', summary: 'Uninstall a Canvas extension (its backend is stopped; its backend data is kept)', response: UninstallCanvasExtensionResponse },
  { method: 'get', path: `${CX}/bundle`, tag: 'canvas', summary: "The extension's entrypoint bundle (re-checked to lie inside the package on every request)" },
  { method: 'get', path: `${CX}/icon`, tag: 'canvas', summary: "The extension's SVG icon" },
  { method: 'get', path: `${CX}/backend`, tag: 'canvas', summary: "The backend's state, installed revision and approved revision", response: BackendStatus },
  { method: 'post', path: `${CX}/backend/prepare`, tag: 'canvas', summary: 'Approve an exact revision: verify and unpack its backend artifact', body: BackendRevisionRequest, response: BackendStatus },
  { method: 'post', path: `${CX}/backend/start`, tag: 'canvas', summary: 'Start the prepared revision and wait for its health probe', body: BackendRevisionRequest, response: BackendStatus },
  { method: 'post', path: `${CX}/backend/stop`, tag: 'canvas', summary: "Stop the backend's process group (idempotent) and end its browser sessions", response: BackendStatus },
  { method: 'get', path: `${CX}/backend/logs`, tag: 'canvas', summary: "The backend's recent stdout and stderr", query: fromSchema(BackendLogsQuery), response: BackendLogs },
  { method: 'delete', path: `${CX}/backend/data`, tag: 'canvas', summary: "Delete the backend's data directory (the backend must be stopped)", response: BackendStatus },
  { method: 'post', path: '/app-backends/{extension_name}/session', tag: 'canvas', summary: "A short-lived HttpOnly cookie for one ready app backend (on the app ingress origin, with the Canvas page's Origin)", response: AppBackendSessionResponse },
  { method: 'delete', path: '/app-backends/{extension_name}/session', tag: 'canvas', summary: 'End the browser session of an app backend and clear its cookie', status: 204 },
  { method: 'post', path: '/api/plugins', tag: 'skills', summary: 'Load plugins and list what they bring', body: PluginsRequest, response: PluginsResponse },
  { method: 'post', path: '/api/plugins/fetch', tag: 'skills', summary: 'Check a plugin source and pin its commit, without installing it (422/502/504 with {code, message})', body: FetchPluginRequest, response: FetchPluginResponse },
  { method: 'post', path: '/api/plugins/install', tag: 'skills', summary: 'Install a plugin from a local path, a git URL or github:owner/repo (409 installed, 400 not fetched, 422 invalid)', body: InstallPluginRequest, response: InstalledPlugin },
  { method: 'get', path: '/api/plugins/installed', tag: 'skills', summary: 'Installed plugins (enabled and disabled)', response: InstalledPluginList },
  { method: 'get', path: '/api/plugins/installed/{plugin_name}', tag: 'skills', summary: 'An installed plugin', response: InstalledPlugin },
  { method: 'patch', path: '/api/plugins/installed/{plugin_name}', tag: 'skills', summary: 'Enable or disable an installed plugin', body: UpdateInstalledStateRequest, response: UpdateInstalledStateResponse },
  { method: 'delete', path: '/api/plugins/installed/{plugin_name}', tag: 'skills', summary: 'Uninstall a plugin', response: UninstallResponse },
  { method: 'post', path: '/api/plugins/installed/{plugin_name}/refresh', tag: 'skills', summary: 'Fetch an installed plugin again from its source (a failure keeps the installed copy)', response: RefreshPluginResponse },
  { method: 'post', path: '/api/skills/install', tag: 'skills', summary: 'Install a skill from a local path, a git URL or github:owner/repo (409 installed, 400 not fetched, 422 invalid)', body: InstallSkillRequest, response: InstalledSkill },
  { method: 'get', path: '/api/skills/installed', tag: 'skills', summary: 'Installed skills (enabled and disabled)', response: InstalledSkillList },
  { method: 'get', path: '/api/skills/installed/{skill_name}', tag: 'skills', summary: 'An installed skill', response: InstalledSkill },
  { method: 'patch', path: '/api/skills/installed/{skill_name}', tag: 'skills', summary: 'Enable or disable an installed skill', body: UpdateInstalledStateRequest, response: UpdateInstalledStateResponse },
  { method: 'delete', path: '/api/skills/installed/{skill_name}', tag: 'skills', summary: 'Uninstall a skill', response: UninstallResponse },
  { method: 'post', path: '/api/skills/installed/{skill_name}/refresh', tag: 'skills', summary: 'Fetch an installed skill again from its source (a failure keeps the installed copy)', response: RefreshSkillResponse },
  { method: 'post', path: '/api/sub-agents', tag: 'skills', summary: 'The agent definitions (sub-agents) a workspace has', body: SubAgentsRequest, response: SubAgentsResponse },
  { method: 'get', path: '/api/tools/', tag: 'tools', summary: 'Tools this server offers agents', response: Type.Array(S) },
  { method: 'get', path: '/api/tools/catalog', tag: 'tools', summary: 'The tools a client may offer for agent.tools, described', response: ToolCatalogResponse },
  { method: 'post', path: '/api/mcp/test', tag: 'mcp', summary: 'Test an MCP server configuration: connect, list its tools, optionally call one (200 with ok=false when it fails)', body: McpTestRequest, response: McpTestResponse },
  { method: 'post', path: '/api/mcp/oauth/start', tag: 'mcp', summary: 'Start authorizing an OAuth MCP server: the authorization URL for the browser (tokens stay with this server)', body: McpTestRequest, response: McpOAuthStartResponse },
  { method: 'get', path: '/api/mcp/oauth/status/{job_id}', tag: 'mcp', summary: 'An MCP OAuth job', response: McpOAuthStatusResponse },
  { method: 'post', path: '/api/mcp/oauth/callback/{job_id}', tag: 'mcp', summary: 'Hand in the URL the browser was redirected to after consent', body: McpOAuthCallbackRequest, response: McpOAuthStatusResponse },

  { method: 'get', path: '/api/settings', tag: 'settings', summary: 'The stored agent settings (clients build new agents from them) and conversation settings (defaults of the gateway\'s conversations); secrets masked unless X-Expose-Secrets: plaintext, or as Fernet tokens of the secret key with X-Expose-Secrets: encrypted (sent back in a PATCH or a start with secrets_encrypted)', headers: [EXPOSE_SECRETS_HEADER], response: SettingsResponse },
  { method: 'patch', path: '/api/settings', tag: 'settings', summary: 'Deep-merge diffs into the stored settings (null inside a map removes the entry); answered masked', body: SettingsUpdateRequest, response: SettingsResponse },
  { method: 'get', path: '/api/settings/agent-schema', tag: 'settings', summary: 'The agent settings form (derived from the schemas PATCH validates with)', response: SettingsForm },
  { method: 'get', path: '/api/settings/conversation-schema', tag: 'settings', summary: 'The conversation settings form', response: SettingsForm },
  { method: 'post', path: '/api/settings/mcp/{settings_key}', tag: 'settings', summary: 'Add one MCP server to the settings (409 when the key exists)', body: McpServerSettings, response: SettingsResponse, status: 201 },
  { method: 'patch', path: '/api/settings/mcp/{settings_key}', tag: 'settings', summary: 'Change one stored MCP server (404 when absent)', body: McpServerPatch, response: SettingsResponse },
  { method: 'delete', path: '/api/settings/mcp/{settings_key}', tag: 'settings', summary: 'Remove one stored MCP server (404 when absent)', response: SettingsResponse },
  { method: 'get', path: '/api/settings/secrets', tag: 'settings', summary: 'Stored secrets, without values (agent_profile_id: only those its secret_refs allows; 404 for an unknown one)', query: q(['agent_profile_id']), response: SecretsListResponse },
  { method: 'put', path: '/api/settings/secrets', tag: 'settings', summary: 'Create or replace a secret (sealed with the secret key at rest; memory only without one)', body: SecretCreateRequest, response: SecretItemResponse },
  { method: 'get', path: '/api/settings/secrets/{name}', tag: 'settings', summary: "A secret's value, as text (for LookupSecret)", response: S, textResponse: true },
  { method: 'delete', path: '/api/settings/secrets/{name}', tag: 'settings', summary: 'Delete a secret', response: SecretDeleted },
  { method: 'get', path: '/api/llm/provider-connections', tag: 'settings', summary: 'LLM provider connections (shared credentials; the key never shown, only api_key_set)', response: Type.Array(ProviderConnectionResponse) },
  { method: 'post', path: '/api/llm/provider-connections', tag: 'settings', summary: 'Store a provider connection (at most 64; the key sealed like the secrets)', body: ProviderConnectionCreateRequest, response: ProviderConnectionResponse, status: 201 },
  { method: 'patch', path: '/api/llm/provider-connections/{connection_id}', tag: 'settings', summary: 'Change the fields given (base_url: null clears it; the key can be replaced, not cleared)', body: ProviderConnectionUpdateRequest, response: ProviderConnectionResponse },
  { method: 'delete', path: '/api/llm/provider-connections/{connection_id}', tag: 'settings', summary: 'Delete a provider connection no LLM profile uses (409 naming them; answered as it was, api_key_set false)', response: ProviderConnectionResponse },
  { method: 'get', path: '/api/workspaces', tag: 'settings', summary: 'Saved workspaces and workspace parents', response: WorkspacesListResponse },
  { method: 'post', path: '/api/workspaces', tag: 'settings', summary: 'Save workspaces (deduplicated by path)', body: AddWorkspacesRequest, response: WorkspacesListResponse },
  { method: 'delete', path: '/api/workspaces', tag: 'settings', summary: 'Forget a saved workspace', query: q(['path'], ['path']), response: SecretDeleted },
  { method: 'post', path: '/api/workspaces/parents', tag: 'settings', summary: 'Save workspace parents (deduplicated by path)', body: AddWorkspaceParentsRequest, response: WorkspacesListResponse },
  { method: 'delete', path: '/api/workspaces/parents', tag: 'settings', summary: 'Forget a workspace parent', query: q(['path'], ['path']), response: SecretDeleted },
  { method: 'post', path: '/api/auth/workspace-session', tag: 'settings', summary: 'Trade the session key for the HttpOnly cookie the workspace file routes accept', status: 204 },
  { method: 'delete', path: '/api/auth/workspace-session', tag: 'settings', summary: 'Clear the workspace session cookie', status: 204 },
  { method: 'get', path: '/api/init', tag: 'server', summary: 'Deferred initialization (a server started with OH_DEFERRED_INIT): its state, open for polling; 404 on a server not started deferred', response: InitStatus, public: true },
  { method: 'post', path: '/api/init', tag: 'server', summary: 'Deferred initialization: the dormant server takes its configuration and serves (every other /api route answers 503 until then); X-Init-API-Key must be the secret key (401); 400 once initialized; 404 on a server not started deferred', headers: ['X-Init-API-Key'], body: InitRequest, response: InitStatus, public: true },

  { method: 'get', path: '/api/profiles', tag: 'profiles', summary: 'LLM profiles and the active one', response: ProfileListResponse },
  { method: 'get', path: '/api/profiles/{name}', tag: 'profiles', summary: "A profile's LLM settings (api_key null: secrets are never returned; X-Expose-Secrets is refused)", headers: ['X-Expose-Secrets'], response: ProfileDetailResponse },
  { method: 'post', path: '/api/profiles/{name}', tag: 'profiles', summary: 'Save (create or overwrite) a profile; its API key is stored sealed', body: SaveProfileRequest, response: ProfileMutationResponse, status: 201 },
  { method: 'delete', path: '/api/profiles/{name}', tag: 'profiles', summary: 'Delete a profile (idempotent)', response: ProfileMutationResponse },
  { method: 'post', path: '/api/profiles/{name}/rename', tag: 'profiles', summary: 'Rename a profile', body: RenameProfileRequest, response: ProfileMutationResponse },
  { method: 'post', path: '/api/profiles/{name}/validate', tag: 'profiles', summary: 'Try a draft LLM with one short model call before saving it', body: ValidateProfileRequest, response: ValidateProfileResponse },
  { method: 'post', path: '/api/profiles/{name}/activate', tag: 'profiles', summary: 'Mark a profile active (there are no agent settings here to apply it to)', response: ActivateProfileResponse },
  { method: 'get', path: '/api/agent-profiles', tag: 'profiles', summary: 'Agent profiles and the active one (default seeded when none is)', response: AgentProfileListResponse },
  { method: 'get', path: '/api/agent-profiles/{name}', tag: 'profiles', summary: 'An agent profile', response: AgentProfileDetailResponse },
  { method: 'post', path: '/api/agent-profiles/{name}', tag: 'profiles', summary: 'Save (create or overwrite) an agent profile', body: AgentProfileInput, response: AgentProfileMutationResponse, status: 201 },
  { method: 'delete', path: '/api/agent-profiles/{name}', tag: 'profiles', summary: 'Delete an agent profile (idempotent)', response: AgentProfileMutationResponse },
  { method: 'post', path: '/api/agent-profiles/{name}/rename', tag: 'profiles', summary: 'Rename an agent profile (its id stays)', body: RenameProfileRequest, response: AgentProfileMutationResponse },
  { method: 'post', path: '/api/agent-profiles/{profile_id}/activate', tag: 'profiles', summary: 'Mark an agent profile active by id (a pointer only)', response: ActivateAgentProfileResponse },
  { method: 'post', path: '/api/agent-profiles/{name}/materialize', tag: 'profiles', summary: 'Preview the launch of a stored or draft agent profile (dangling references reported, not raised)', body: MaterializeAgentProfileRequest, bodyOptional: true, response: AgentProfileDiagnostics },
  { method: 'get', path: '/api/meta-profiles', tag: 'profiles', summary: 'Meta-profiles (model routing configurations)', response: MetaProfileListResponse },
  { method: 'get', path: '/api/meta-profiles/{name}', tag: 'profiles', summary: 'A meta-profile', response: MetaProfileDetailResponse },
  { method: 'post', path: '/api/meta-profiles/{name}', tag: 'profiles', summary: 'Save (create or overwrite) a meta-profile', body: MetaProfile, response: MetaProfileMutationResponse, status: 201 },
  { method: 'delete', path: '/api/meta-profiles/{name}', tag: 'profiles', summary: 'Delete a meta-profile (idempotent)', response: MetaProfileMutationResponse },
  { method: 'post', path: '/api/meta-profiles/{name}/activate', tag: 'profiles', summary: 'Activate a meta-profile: recorded as the settings\' active_meta_profile, which a seeded default agent profile routes with', response: ActivateMetaProfileResponse },
  { method: 'post', path: '/api/acp/models', tag: 'acp', summary: "Start an ACP server in a throwaway session and report its models (a failed start is reported in `error`)", body: AcpModelDiscoveryRequest, response: AcpModelDiscovery },
  { method: 'get', path: '/api/llm/providers', tag: 'llm', summary: 'LLM providers (litellm)', response: ProvidersResponse },
  { method: 'get', path: '/api/llm/models', tag: 'llm', summary: 'LLM models (litellm), optionally of one provider', query: q(['provider']), response: ModelsResponse },
  { method: 'get', path: '/api/llm/models/verified', tag: 'llm', summary: "OpenHands' verified models by provider", response: VerifiedModelsResponse },
  { method: 'get', path: '/api/llm/subscription/openai/models', tag: 'llm', summary: 'Models of a ChatGPT subscription', response: SubscriptionModelsResponse },
  { method: 'get', path: '/api/llm/subscription/openai/status', tag: 'llm', summary: 'ChatGPT subscription state (an expired token is refreshed first; never a token)', response: SubscriptionStatusResponse },
  { method: 'post', path: '/api/llm/subscription/openai/device/start', tag: 'llm', summary: 'Start a ChatGPT device-code sign-in (the user enters user_code at verification_uri)', response: SubscriptionDeviceStartResponse },
  { method: 'post', path: '/api/llm/subscription/openai/device/poll', tag: 'llm', summary: 'Poll a ChatGPT device-code sign-in: connected once the user approved (tokens are kept sealed, never returned)', body: SubscriptionDevicePollRequest, response: SubscriptionStatusResponse },
  { method: 'post', path: '/api/llm/subscription/openai/logout', tag: 'llm', summary: 'Forget the ChatGPT subscription credentials and every pending sign-in', response: SubscriptionStatusResponse },

  { method: 'get', path: '/api/agentyard/files', tag: 'agentyard', summary: 'List workspace files (agentyard)', query: q(['path']) },
  { method: 'post', path: '/api/agentyard/git/clone', tag: 'agentyard', summary: 'Clone a repository into the workspace (agentyard)', body: GitCloneRequest, response: GitCloneResponse },
  { method: 'post', path: HAND_OVER_PATH, tag: 'agentyard', summary: 'Hand a warm-pool sandbox over to the user who claimed it: new session key, model token and sealing key (agentyard)', body: HandOverRequest, response: Type.Object({ success: Type.Boolean() }) },
  { method: 'post', path: '/api/agentyard/marketplaces/plugins', tag: 'agentyard', summary: "A marketplace's plugins (agentyard)", body: MarketplacePluginsRequest, response: MarketplacePluginsResponse },
];
