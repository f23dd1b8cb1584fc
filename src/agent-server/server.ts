// startAgentServer: wires the store, the conversations, the HTTP API, the event sockets and the
// event-sink pusher into one listening server, and takes them down in order on close.
import { createHash } from 'node:crypto';
import type { Duplex } from 'node:stream';
import { createServer, type IncomingMessage, type RequestListener, type Server } from 'node:http';
import { mkdirSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { join, resolve } from 'node:path';
import { findChromium } from '../agent/tools/browser/session.ts';
import { toolCatalog } from '../agent/tools/catalog.ts';
import type { CreateAgent, LlmConfig } from '../agent/types.ts';
import type { SinkConversationUpdate } from '../api/event-sink.ts';
import { createLogger, type Logger } from '../util/log.ts';
import { createApp } from './app.ts';
import type { InitService } from './routes/init.ts';
import { extensionsConfigFromEnv, type ExtensionsConfig } from '../agent/skills/extensions-repo.ts';
import { CanvasHolder } from './routes/canvas-extensions.ts';
import type { BridgeOptions } from './canvas/bridge.ts';
import { BashService } from './bash/service.ts';
import { BashEventStore } from './bash/store.ts';
import { ConversationBash } from './bash/conversation-bash.ts';
import { EventBus } from './conversation/bus.ts';
import { usageSummary } from './conversation/info.ts';
import { ConversationService } from './conversation/service.ts';
import { SessionKeys } from './http/auth.ts';
import { Fernet } from './fernet.ts';
import { SecretSealer } from './secrets.ts';
import { resealStores } from './reseal.ts';
import { localSecretLookup } from './secret-lookup.ts';
import { SinkPusher } from './sink-pusher.ts';
import { ConversationStore, SinkCursorStore } from './store/conversation-store.ts';
import { ProfileStore } from './store/profile-store.ts';
import { AgentProfileStore } from './store/agent-profile-store.ts';
import { launchFromProfile, serverLaunchStores } from './conversation/launch-profile.ts';
import { serverRouting } from './conversation/model-routing.ts';
import { openDatabase } from './store/db.ts';
import { SettingsDocStore, SettingsSecretStore, WorkspacesStore } from './store/settings-store.ts';
import { defaultSettings } from './settings-doc.ts';
import { ProviderConnectionStore } from './store/provider-connection-store.ts';
import { SubscriptionStore } from './store/subscription-store.ts';
import { OPENAI_CODEX_BASE_URL, OPENAI_ISSUER, SubscriptionService, type SubscriptionSettings } from './subscription/service.ts';
import { EventStore } from './store/event-store.ts';
import { StorageHealth } from './store/storage-health.ts';
import { assertWritable } from './http/storage-guard.ts';
import { diskSpace, minFreeDiskBytes } from '../util/disk-space.ts';
import { BashSockets } from './ws/bash-socket.ts';
import { McpOAuthStore } from './mcp/token-store.ts';
import { StoreOAuthProvider } from './mcp/oauth-provider.ts';
import type { McpOAuthAuthentication } from '../api/agent-server/mcp.ts';
import { EventSockets, type EventSocketOptions } from './ws/events-socket.ts';

export interface AgentServerOptions {
  port: number;
  /**
   * Serve on an HTTP server that listens already instead of listening on `port` (a deferred start,
   * deferred.ts): `mount` takes the request handler; the server is then this one's to close. `init`
   * answers /api/init (the state, and 400 to a second initialization).
   */
  attach?: { server: Server; url: string; mount(handler: RequestListener): void; init: InitService };
  /** Default 127.0.0.1. */
  host?: string;
  workspaceDir: string;
  /** Holds the SQLite event database. Default `<workspaceDir>/.agentyard`. */
  dataDir?: string;
  /** The user's home for the skill and plugin routes (user and installed skills and plugins). Default: the process's. */
  home?: string;
  /** Accepted X-Session-API-Key values; empty turns authentication off. */
  sessionKeys: string[];
  createAgent: CreateAgent;
  sink?: { url: string; key: string };
  llmDefaults?: LlmConfig;
  /** Seals persisted secrets (OH_SECRET_KEY). Without it secrets live only in memory. */
  secretKey?: string;
  /** Earlier secret keys (OH_PREVIOUS_SECRET_KEYS): they open what they sealed; that is sealed again with `secretKey` at start. */
  previousSecretKeys?: readonly string[];
  /** Where a ChatGPT subscription signs in and calls its models (default OpenAI's; OH_OPENAI_AUTH_ISSUER, OH_OPENAI_CODEX_BASE_URL), and the clock its token expiry is read with. */
  subscription?: Partial<SubscriptionSettings> & { now?: () => number };
  /** Conversations running at once before the OpenAI-compatible gateway answers 429 (OH_MAX_CONCURRENT_RUNS). Default 10. */
  maxConcurrentRuns?: number;
  log?: Logger;
  /** Canvas App backends: the ingress origin browsers reach them on (OH_APP_BACKEND_PUBLIC_URL), and who may open sessions. */
  appBackends?: BridgeOptions;
  /** The extensions repository and marketplace registrations (default: from the environment, extensionsConfigFromEnv). */
  extensions?: ExtensionsConfig;
  /** The github host whose API lists repositories with a stored GitHub token (AGENTYARD_GIT_HOSTS' github; default https://github.com). */
  githubHost?: string;
  /** Knobs for tests and operators; the defaults suit production. */
  tuning?: {
    sockets?: Pick<EventSocketOptions, 'authTimeoutMs' | 'pingIntervalMs' | 'maxSubscribers' | 'maxQueueEvents' | 'maxQueueBytes' | 'closeGraceMs'>;
    sink?: { batchSize?: number; batchMaxBytes?: number; retryInitialMs?: number; retryMaxMs?: number };
    /** One-shot commands (/api/bash): chunk size and SIGTERM-to-SIGKILL grace. */
    bash?: { maxChunkChars?: number; killGraceMs?: number };
    /** How long close() waits for a running agent to stop. Default 10 s. */
    runGraceMs?: number;
    /** While the disk refuses writes, how often held events are tried again. Default 5 s. */
    storageRetryMs?: number;
    /** Free space below which /health reports the disk low. Default AGENTYARD_MIN_FREE_DISK_MB, else 512 MiB. */
    minFreeDiskBytes?: number;
    /** How long the OpenAI-compatible gateway (/v1) waits for a run before answering 504. Default 120 s. */
    gatewayTimeoutMs?: number;
    /** Awaited after the server listens and before it restores its conversations (tests hold the restoring phase with it). */
    beforeRestore?: (url: string) => Promise<void>;
  };
}

export interface AgentServer {
  url: string;
  close(): Promise<void>;
}

export async function startAgentServer(opts: AgentServerOptions): Promise<AgentServer> {
  const log = opts.log ?? createLogger('agent-server');
  // Read once at start (a bad OH_REGISTERED_MARKETPLACES stops the server here, as it stops OpenHands').
  // A given home holds the clone and the installed directories too, as it does for the install routes.
  const extensions = opts.extensions ?? (opts.home !== undefined ? { ...extensionsConfigFromEnv({ ...process.env, HOME: opts.home, OH_PERSISTENCE_DIR: '' }), home: opts.home } : extensionsConfigFromEnv());
  const workspaceDir = resolve(opts.workspaceDir);
  mkdirSync(workspaceDir, { recursive: true });
  const dataDir = resolve(opts.dataDir ?? join(workspaceDir, '.agentyard'));
  const db = openDatabase(dataDir);
  // A full or failing disk stops runs with an error and refuses writes with 507; it never crashes the server.
  const storage = new StorageHealth({ log, ...(opts.tuning?.storageRetryMs !== undefined ? { retryMs: opts.tuning.storageRetryMs } : {}) });
  const events = new EventStore(db, storage);
  const conversations = new ConversationStore(db, storage);
  const cursor = new SinkCursorStore(db, storage);
  storage.setFlush(() => {
    db.transaction(() => {
      events.writeHeld();
      conversations.writeHeld();
      cursor.writeHeld();
    })();
    events.heldWritten();
    conversations.heldWritten();
    cursor.heldWritten();
  });
  const bus = new EventBus();
  const startedAt = Date.now();
  let lastActivity = startedAt;
  const onActivity = () => void (lastActivity = Date.now());

  const isDeleted = (id: string) => conversations.exists(id) && conversations.get(id) === undefined;
  // A deleted conversation keeps a tombstone row (so a repeated DELETE still succeeds and the id
  // is never reused); its events go once the sink has them.
  const purge = (id: string) => {
    db.transaction(() => {
      events.deleteConversation(id);
      cursor.delete(id);
    })();
  };

  let service: ConversationService | undefined;
  const describe = (id: string): SinkConversationUpdate | undefined => {
    const rt = service?.find(id);
    if (rt) {
      const metrics = usageSummary(rt.row.stats);
      return { id, execution_status: rt.row.executionStatus, title: rt.row.title, ...(metrics ? { metrics } : {}), updated_at: rt.row.updatedAt, rate_limited_until: rt.rateLimitedUntil };
    }
    return conversations.exists(id) ? { id, execution_status: 'deleting', updated_at: new Date().toISOString() } : undefined;
  };
  // The state when the first push goes, dated when the conversation was created (it opens the log,
  // before the first event), with an id of its own that stays the same when that push is retried.
  const snapshot = (id: string) => {
    const rt = service?.find(id);
    if (!rt) return undefined;
    const hash = createHash('sha256').update(`full_state:${id}`).digest('hex');
    const snapshotId = `${hash.slice(0, 8)}-${hash.slice(8, 12)}-${hash.slice(12, 16)}-${hash.slice(16, 20)}-${hash.slice(20, 32)}`;
    return { ...rt.fullState().event, id: snapshotId, timestamp: rt.row.createdAt };
  };
  const pusher = opts.sink
    ? new SinkPusher({ ...opts.sink, ...opts.tuning?.sink, events, cursor, describe, purge, isDeleted, snapshot, log: log.child({ part: 'sink' }) })
    : undefined;
  if (!pusher) for (const id of conversations.deletedIds()) purge(id);

  if (opts.sessionKeys.length === 0) log.warn('no session API keys configured: authentication is OFF for the agent server API');
  if (!opts.secretKey) log.info('no OH_SECRET_KEY: conversation secrets and settings secrets are kept in memory only and are forgotten on restart');

  const keys = new SessionKeys(opts.sessionKeys);
  const previousKeys = opts.previousSecretKeys ?? [];
  const sealer = opts.secretKey ? new SecretSealer(opts.secretKey, previousKeys) : undefined;
  // The same key as OpenHands' cipher: the wire form of exposed secrets (X-Expose-Secrets: encrypted, secrets_encrypted).
  let fernet = opts.secretKey ? new Fernet(opts.secretKey, previousKeys) : undefined;
  const mcpOAuthStore = new McpOAuthStore({ dataDir, ...(sealer ? { sealer } : {}), log: log.child({ part: 'mcp' }) });
  const settingsSecrets = new SettingsSecretStore(db, sealer, log.child({ part: 'settings' }));
  const providerConnections = new ProviderConnectionStore(db, sealer, log.child({ part: 'settings' }));
  const settingsDoc = new SettingsDocStore(db, sealer, log.child({ part: 'settings' }), () => defaultSettings(opts.llmDefaults?.model));
  // LLM profiles (keys sealed like the settings secrets, and sealed again at a hand-over), and the
  // agent profiles that name them.
  const profiles = new ProfileStore(db, sealer, { connections: providerConnections });
  const agentProfiles = new AgentProfileStore(db, () => profiles.activeProfile(), () => settingsDoc.activeMetaProfile());
  const subscriptionStore = new SubscriptionStore(db, sealer, log.child({ part: 'subscription' }));
  // As 1.58 at start (reencrypt_stale_stores): what an earlier key sealed is sealed with the current
  // one, so that key can be dropped later; what no key opens is named in the log, and left as it is.
  if (sealer) resealStores({ db, dataDir, sealer, log: log.child({ part: 'secrets' }) });
  const subscription = new SubscriptionService({
    store: subscriptionStore,
    settings: { issuer: opts.subscription?.issuer ?? OPENAI_ISSUER, codexBaseUrl: opts.subscription?.codexBaseUrl ?? OPENAI_CODEX_BASE_URL },
    log: log.child({ part: 'subscription' }),
    ...(opts.subscription?.now ? { now: opts.subscription.now } : {}),
  });
  service = new ConversationService({
    subscription: () => subscription.access(),
    lookupSecret: localSecretLookup(keys, settingsSecrets),
    ctx: {
      events,
      conversations,
      bus,
      createAgent: opts.createAgent,
      log,
      persistenceDir: dataDir,
      extensions,
      ...(opts.home !== undefined ? { userHome: opts.home } : {}),
      // Conversations only use and refresh stored tokens: consent is given through /api/mcp/oauth.
      mcpOAuth: (serverUrl, oauth) => new StoreOAuthProvider({ store: mcpOAuthStore, serverUrl, ...(oauth.authentication ? { authentication: oauth.authentication as McpOAuthAuthentication } : {}), ...(oauth.state ? { seed: oauth.state } : {}) }),
      onAppended: (id) => pusher?.notifyEvents(id),
      onChanged: (id) => {
        if (pusher) pusher.notifyConversation(id);
        else if (isDeleted(id)) purge(id);
      },
      onActivity,
      storageFault: () => storage.fault,
      assertWritable: () => assertWritable(storage),
      childrenOf: (id) => service?.childrenOf(id) ?? [],
      routing: serverRouting({ db, profiles, switchLlm: (id, req) => service!.switchLlm(id, req), llmDefaults: opts.llmDefaults, subscription: () => subscription.access() }),
    },
    conversations,
    workspaceDir,
    llmDefaults: opts.llmDefaults,
    sealer,
    fernet: () => fernet,
    transaction: (fn) => db.transaction(fn)(),
    launchProfile: (req) => launchFromProfile(req, serverLaunchStores({ agentProfiles, profiles, settings: settingsDoc, db, extensions })),
    ...(opts.maxConcurrentRuns !== undefined ? { maxConcurrentRuns: opts.maxConcurrentRuns } : {}),
  });
  // Serving phases: `restoring` from listening until the stored conversations are loaded (/alive
  // answers, /ready and every /api route say 503, sockets are refused), then `serving`, then
  // `closing` (/ready 503 again, so a Service stops routing here while runs wind down).
  let phase: 'restoring' | 'serving' | 'closing' = 'restoring';

  const minFree = opts.tuning?.minFreeDiskBytes ?? minFreeDiskBytes(process.env);
  // X-Init-API-Key is the secret key, or (as OpenHands falls back) a session key.
  let initKeys = opts.secretKey ? new SessionKeys([opts.secretKey]) : keys;
  const bashStore = new BashEventStore(db);
  const conversationService = service;
  const allSecrets = () => Object.assign({}, ...conversationService.all().map((rt) => rt.secrets)) as Record<string, string>;
  const bash = new BashService({
    store: bashStore,
    workspaceDir,
    // One-shot commands belong to no conversation: every loaded conversation's secrets are masked.
    secrets: allSecrets,
    log: log.child({ part: 'bash' }),
    ...opts.tuning?.bash,
  });
  const conversationBash = new ConversationBash({ db, log: log.child({ part: 'bash' }), secrets: allSecrets, ...(opts.tuning?.bash ? { tuning: opts.tuning.bash } : {}) });
  service.onDeleted((id) => conversationBash.drop(id));
  const canvas = new CanvasHolder(join(dataDir, 'canvas-extensions'), opts.appBackends);
  await canvas.reapOrphans().catch((err: unknown) => log.warn({ err }, 'could not stop Canvas App backends left by a previous server'));
  const app = createApp({
    ...(opts.githubHost ? { githubHost: opts.githubHost } : {}),
    canvas,
    extensions,
    ...(opts.home !== undefined ? { home: opts.home } : {}),
    service,
    events,
    keys,
    log,
    onActivity,
    ...(pusher ? { setSinkKey: (key: string) => pusher.setKey(key) } : {}),
    bash: { service: bash, store: bashStore, forConversation: (rt) => conversationBash.of(rt) },
    profiles,
    agentProfiles,
    subscription,
    db,
    restoring: () => phase === 'restoring',
    ...(opts.tuning?.gatewayTimeoutMs !== undefined ? { gatewayTimeoutMs: opts.tuning.gatewayTimeoutMs } : {}),
    health: { startedAt, lastActivity: () => lastActivity, ready: () => phase === 'serving', usableTools: toolCatalog({ browser: findChromium() !== undefined }), ...(opts.appBackends?.publicUrl ? { appBackendIngressUrl: opts.appBackends.publicUrl } : {}), storage: () => storage.fault, disk: () => diskSpace(dataDir, minFree) },
    storage,
    mcp: { store: mcpOAuthStore },
    settings: {
      secrets: settingsSecrets,
      workspaces: new WorkspacesStore(db),
      providerConnections,
      document: settingsDoc,
      initKeys: () => initKeys,
      fernet: () => fernet,
      ...(opts.attach ? { init: opts.attach.init } : {}),
      onHandOver: (req) => {
        if (!req.secret_key) return;
        fernet = new Fernet(req.secret_key);
        settingsSecrets.setSealer(new SecretSealer(req.secret_key));
        providerConnections.setSealer(new SecretSealer(req.secret_key));
        settingsDoc.setSealer(new SecretSealer(req.secret_key));
        profiles.setSealer(new SecretSealer(req.secret_key));
        subscriptionStore.setSealer(new SecretSealer(req.secret_key));
        initKeys = new SessionKeys([req.secret_key]);
      },
    },
  });
  const sockets = new EventSockets({ ...opts.tuning?.sockets, service, events, bus, keys, log, onActivity });
  const server = opts.attach?.server ?? createServer(app.callback());
  opts.attach?.mount(app.callback());
  const bashSockets = new BashSockets({ service: bash, store: bashStore, keys, log, onActivity, ...(opts.tuning?.sockets?.authTimeoutMs ? { authTimeoutMs: opts.tuning.sockets.authTimeoutMs } : {}) });
  const refuseUpgrade = (_req: unknown, socket: Duplex) => {
    socket.end('HTTP/1.1 503 Service Unavailable\r\nRetry-After: 1\r\nContent-Length: 0\r\nConnection: close\r\n\r\n');
  };
  server.on('upgrade', refuseUpgrade);
  const host = opts.host ?? '127.0.0.1';
  if (!opts.attach) {
    await new Promise<void>((ok, fail) => {
      server.once('error', fail);
      server.listen(opts.port, host, () => {
        server.off('error', fail);
        ok();
      });
    });
  }
  const { port } = server.address() as AddressInfo;
  const url = opts.attach?.url ?? `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
  log.info({ url, dataDir }, 'agent server listening');

  await opts.tuning?.beforeRestore?.(url);
  service.recover();
  pusher?.resume([...service.all().map((rt) => rt.conversationId), ...conversations.deletedIds()]);
  server.off('upgrade', refuseUpgrade);
  // App-backend WebSockets first: the events sockets answer 404 to paths that are not theirs.
  server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => void canvas.upgrade(req, socket, head));
  sockets.attach(server);
  bashSockets.attach(server);
  phase = 'serving';
  log.info({ conversations: service.all().length }, 'agent server ready');

  let closing: Promise<void> | undefined;
  const close = () =>
    (closing ??= (async () => {
      phase = 'closing';
      const stopped = new Promise<void>((ok) => server.close(() => ok()));
      await sockets.close();
      await bashSockets.close();
      await bash.close();
      await conversationBash.close();
      await canvas.close();
      await service.close(opts.tuning?.runGraceMs ?? 10_000);
      await pusher?.close();
      server.closeAllConnections();
      await stopped;
      // Last chance for held events; what the disk still refuses was pushed to the sink if it could be.
      storage.retry();
      storage.close();
      if (events.heldCount() > 0) log.error({ held: events.heldCount() }, 'closing with events the disk never took');
      db.close();
    })());
  return { url, close };
}
