// The agent server's Koa app: one error middleware first, health routes open, `/api/*` behind the
// session key, one router per resource.
import { Unavailable } from '../api/errors.ts';
import { REQUEST_BODY_LIMIT_BYTES } from '../api/agent-server/server.ts';
import { bodyParser } from '@koa/bodyparser';
import Router from '@koa/router';
import Koa from 'koa';
import type { Logger } from '../util/log.ts';
import type { ConversationService } from './conversation/service.ts';
import type { ConversationRuntime } from './conversation/runtime.ts';
import { requireSessionKey, type SessionKeys } from './http/auth.ts';
import { refuseDeepJson } from '../facade/body.ts';
import { errorMiddleware } from '../facade/errors.ts';
import type { BashService } from './bash/service.ts';
import type { BashEventStore } from './bash/store.ts';
import { archiveRoutes } from './routes/archive.ts';
import { bashRoutes, type BashScope } from './routes/bash.ts';
import { gitRepositoryRoutes } from './routes/git-repositories.ts';
import { runtimeInfoRoutes, runtimeRoutes } from './routes/runtime.ts';
import { desktopRoutes, vscodeRoutes } from './routes/vscode.ts';
import { workspaceFileRoutes } from './routes/workspace-files.ts';
import { conversationRoutes } from './routes/conversations.ts';
import { eventRoutes } from './routes/events.ts';
import { docsRoutes } from './routes/docs.ts';
import { fileBrowserRoutes } from './routes/file-browser.ts';
import { fileListRoutes } from './routes/files.ts';
import { gitHistoryRoutes } from './routes/git-history.ts';
import { gitRoutes } from './routes/git.ts';
import { handOverRoutes } from './routes/hand-over.ts';
import { healthRoutes, type HealthDeps } from './routes/health.ts';
import { hookRoutes } from './routes/hooks.ts';
import { NOT_BUILT_OUTSIDE_API, notImplementedRoutes } from './routes/not-implemented.ts';
import { McpOAuthStore } from './mcp/token-store.ts';
import { mcpRoutes, type McpRouteDeps } from './routes/mcp.ts';
import { openaiRoutes } from './routes/openai.ts';
import { pluginRoutes } from './routes/plugins.ts';
import { appBackendRoutes, canvasExtensionRoutes, CanvasHolder } from './routes/canvas-extensions.ts';
import { profileRoutes } from './routes/profiles.ts';
import { llmRoutes } from './routes/llm.ts';
import type { SubscriptionService } from './subscription/service.ts';
import type { ProfileStore } from './store/profile-store.ts';
import { agentProfileRoutes } from './routes/agent-profiles.ts';
import { acpRoutes } from './routes/acp.ts';
import { serverLaunchStores } from './conversation/launch-profile.ts';
import { metaProfileRoutes, readMetaProfile } from './routes/meta-profiles.ts';
import type { Db } from './store/db.ts';
import type { AgentProfileStore } from './store/agent-profile-store.ts';
import { subAgentRoutes } from './routes/sub-agents.ts';
import { skillRoutes } from './routes/skills.ts';
import { extensionRoutes } from './routes/extensions.ts';
import { extensionsConfigFromEnv, type ExtensionsConfig } from '../agent/skills/extensions-repo.ts';
import { initRoutes, type InitService } from './routes/init.ts';
import { settingsRoutes } from './routes/settings.ts';
import { settingsDocRoutes } from './routes/settings-doc.ts';
import type { Fernet } from './fernet.ts';
import { workspaceSessionRoutes } from './routes/workspace-session.ts';
import { workspacesRoutes } from './routes/workspaces.ts';
import type { SettingsDocStore, SettingsSecretStore, WorkspacesStore } from './store/settings-store.ts';
import type { ProviderConnectionStore } from './store/provider-connection-store.ts';
import { providerConnectionRoutes } from './routes/provider-connections.ts';
import type { HandOverRequest } from '../api/agent-server/hand-over.ts';
import { toolRoutes } from './routes/tools.ts';
import { trajectoryRoutes } from './routes/trajectory.ts';
import { uploadRoutes } from './routes/upload.ts';
import { workspaceRoutes } from './routes/workspace.ts';
import type { EventStore } from './store/event-store.ts';
import type { StorageHealth } from './store/storage-health.ts';
import { storageGuard } from './http/storage-guard.ts';
import { defaultRegistry, httpMetrics, metricsEndpoint, type Registry } from '../util/metrics.ts';

export interface AppDeps {
  service: ConversationService;
  events: EventStore;
  keys: SessionKeys;
  log: Logger;
  health: HealthDeps;
  /** The server's own one-shot commands, and each conversation's (its runtime routes). */
  bash: { service: BashService; store: BashEventStore; forConversation(rt: ConversationRuntime): BashScope };
  /** LLM profiles (/api/profiles, switch_profile). */
  profiles: ProfileStore;
  /** Agent profiles (/api/agent-profiles; conversations start from one by agent_profile_id). */
  agentProfiles: AgentProfileStore;
  /** The ChatGPT subscription sign-in (/api/llm/subscription/openai). */
  subscription: SubscriptionService;
  /** The database meta-profiles are kept in (/api/meta-profiles). */
  db: Db;
  onActivity(): void;
  /** Absent: writes are not guarded (a storage fault is still a 507, by errorMiddleware). */
  storage?: StorageHealth;
  /** Event pushes follow a hand-over's new session key. */
  setSinkKey?(key: string): void;
  /** Prometheus registry GET /metrics serves. Default: the process's registry. */
  metrics?: Registry;
  /** True while the server restores its stored conversations: /api answers 503 until they are loaded. */
  restoring?(): boolean;
  /** /api/mcp: the OAuth token store (and knobs for tests); the workspace is where stdio servers start. */
  mcp?: Omit<McpRouteDeps, 'cwd'>;
  /** The github host whose API GET /api/git/repositories/search asks with a stored GitHub token (default https://github.com). */
  githubHost?: string;
  /** How long the OpenAI-compatible gateway waits for a run (default 120 s, as OpenHands). */
  gatewayTimeoutMs?: number;
  /** What the server keeps for its clients: named secrets, saved workspaces; and who may call POST /api/init. */
  /** The user's home for user and installed skills and plugins (default: the process's); tests isolate it. */
  home?: string;
  /** Canvas extensions and their app backends (default: kept under the workspace's .agentyard, no ingress). */
  canvas?: CanvasHolder;
  /** The extensions repository (public skills, marketplace) and marketplace registrations. Default: from the environment (EXTENSIONS_PATH, EXTENSIONS_REF, OH_PERSISTENCE_DIR, OH_REGISTERED_MARKETPLACES). */
  extensions?: ExtensionsConfig;
  settings: { secrets: SettingsSecretStore; workspaces: WorkspacesStore; providerConnections: ProviderConnectionStore; document: SettingsDocStore; initKeys: () => SessionKeys; /** A deferred start's /api/init (absent: not started deferred, 404). */ init?: InitService; onHandOver?(req: HandOverRequest): void; /** The secret key as OpenHands' cipher (X-Expose-Secrets: encrypted); undefined: none. */ fernet?: () => Fernet | undefined };
}

export function createApp(d: AppDeps): Koa {
  const app = new Koa();
  app.silent = true; // errors are logged once, by errorMiddleware
  // Prometheus, open like /alive (route templates and process figures only: README, Metrics).
  const metrics = d.metrics ?? defaultRegistry();
  app.use(metricsEndpoint(metrics));
  app.use(httpMetrics(metrics));
  app.use(errorMiddleware(d.log, { malformedJson: 'validation-error' }));

  const health = healthRoutes(d.health);
  app.use(health.routes());
  app.use(docsRoutes().routes());

  // /api/init is outside the session-key check, as in OpenHands (it has a key of its own).
  const init = initRoutes(d.settings.initKeys, d.settings.init);
  app.use(init.routes());
  app.use(init.allowedMethods());

  const canvas = d.canvas ?? new CanvasHolder(`${d.service.workspaceDir}/.agentyard/canvas-extensions`);
  const api = new Router({ prefix: '/api' });
  // Before the key check: nothing is said but "not yet", and an answer from a half-loaded server could be wrong (a 404 for a conversation still being restored).
  api.use(async (_ctx, next) => {
    if (d.restoring?.()) throw new Unavailable('The agent server is starting: its conversations are being restored', { retryAfterSeconds: 1 });
    await next();
  });
  api.use(requireSessionKey(d.keys));
  // Bodies are read only once the key is checked, and refused past 10 MB or 128 levels of nesting.
  api.use(bodyParser({ enableTypes: ['json'], jsonLimit: REQUEST_BODY_LIMIT_BYTES }));
  api.use(refuseDeepJson());
  if (d.storage) api.use(storageGuard(d.storage));
  // Reads (a UI polling status) must not keep an idle sandbox awake; writes and events do.
  api.use(async (ctx, next) => {
    if (ctx.method !== 'GET' && ctx.method !== 'HEAD') d.onActivity();
    await next();
  });
  const extensions = d.extensions ?? extensionsConfigFromEnv();
  const runtime = [runtimeRoutes({ service: d.service, bash: d.bash.forConversation }), runtimeInfoRoutes(d.service), workspaceFileRoutes(d.service), archiveRoutes(), gitRepositoryRoutes((name) => d.settings.secrets.get(name), d.githubHost ?? 'https://github.com'), vscodeRoutes(), desktopRoutes()];
  for (const r of [...runtime, conversationRoutes(d.service), eventRoutes(d.service, d.events), workspaceRoutes(), extensionRoutes(extensions), skillRoutes(d.service.workspaceDir, { ...(d.home !== undefined ? { home: d.home } : {}), extensions }), uploadRoutes(), hookRoutes(d.service.workspaceDir), bashRoutes(() => ({ service: d.bash.service, store: d.bash.store })), gitRoutes(d.service.workspaceDir), gitHistoryRoutes(), fileListRoutes(d.service.workspaceDir), fileBrowserRoutes(d.service.workspaceDir), toolRoutes(d.health.usableTools), pluginRoutes(d.service.workspaceDir, d.home !== undefined ? { home: d.home } : {}), subAgentRoutes(d.service.workspaceDir), trajectoryRoutes(d.service), mcpRoutes({ cwd: d.service.workspaceDir, ...(d.mcp ?? { store: new McpOAuthStore() }) }), handOverRoutes({ service: d.service, keys: d.keys, ...(d.setSinkKey ? { setSinkKey: d.setSinkKey } : {}), ...(d.settings.onHandOver ? { onHandOver: d.settings.onHandOver } : {}) }), settingsRoutes(d.settings.secrets, d.log, (id) => { const p = d.agentProfiles.byId(id); return p ? p.secret_refs : undefined; }), settingsDocRoutes(d.settings.document, d.log, {
      activeProfile: () => d.profiles.activeProfile(),
      setActiveProfile: (name) => d.profiles.setActiveProfile(name),
      profileLlm: (name) => d.profiles.runnable(name),
      activeAgentProfileId: () => d.agentProfiles.activeId(),
      activateAgentProfile: (id) => (d.agentProfiles.byId(id) ? (d.agentProfiles.activate(id), true) : false),
      metaProfileExists: (name) => readMetaProfile(d.db, name) !== undefined,
    }, d.settings.fernet ?? (() => undefined)), providerConnectionRoutes(d.settings.providerConnections, d.log, (id) => d.profiles.linkedTo(id)), workspacesRoutes(d.settings.workspaces), workspaceSessionRoutes(), profileRoutes({
      store: d.profiles,
      agentProfiles: d.agentProfiles,
      service: d.service,
      log: d.log,
      activate: (name) =>
        d.settings.document.update((doc) => {
          const p = d.profiles.runnable(name)!;
          doc.agent_settings.llm = { ...p.llm, ...(p.apiKey !== undefined ? { api_key: p.apiKey } : {}) };
          d.profiles.setActiveProfile(name);
        }),
    }), agentProfileRoutes(d.agentProfiles, { stores: serverLaunchStores({ agentProfiles: d.agentProfiles, profiles: d.profiles, settings: d.settings.document, db: d.db, extensions }), usableTools: d.health.usableTools }), metaProfileRoutes(d.db, d.settings.document), llmRoutes(d.subscription), acpRoutes(d.service), notImplementedRoutes()]) {
    api.use(r.routes(), r.allowedMethods());
  }
  // Canvas extensions (their implementation loads on first use).
  const canvasExtensions = canvasExtensionRoutes(canvas);
  api.use(canvasExtensions.routes(), canvasExtensions.allowedMethods());
  app.use(api.routes());
  app.use(api.allowedMethods());
  const outside = new Router();
  outside.use('/v1', async (_ctx, next) => {
    if (d.restoring?.()) throw new Unavailable('The agent server is starting: its conversations are being restored', { retryAfterSeconds: 1 });
    await next();
  });
  outside.use('/v1', requireSessionKey(d.keys, { bearer: true }));
  outside.use('/v1', bodyParser({ enableTypes: ['json'], jsonLimit: '10mb' }), refuseDeepJson());
  if (d.storage) outside.use('/v1', storageGuard(d.storage));
  outside.use('/v1', async (ctx, next) => {
    if (ctx.method === 'POST') d.onActivity();
    await next();
  });
  const openai = openaiRoutes({ service: d.service, profiles: d.profiles, settings: d.settings.document, ...(d.gatewayTimeoutMs !== undefined ? { timeoutMs: d.gatewayTimeoutMs } : {}) });
  outside.use(openai.routes(), openai.allowedMethods());
  const notBuilt = notImplementedRoutes(NOT_BUILT_OUTSIDE_API);
  outside.use(notBuilt.routes(), notBuilt.allowedMethods());
  const appBackends = appBackendRoutes(canvas, requireSessionKey(d.keys), d.onActivity);
  outside.use(appBackends.routes(), appBackends.allowedMethods());
  app.use(outside.routes());
  app.use(outside.allowedMethods());
  return app;
}
