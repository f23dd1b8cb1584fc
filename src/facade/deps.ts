// What the facade is built from. The facade never talks to runtimes: it writes resources, reads
// their status, keeps the app database, and talks to agent servers only to deliver messages.
import type { Clock } from '../controller/clock.ts';
import type { GitHosts } from '../controller/conversation/repository.ts';
import type { ResourceStore } from '../store/types.ts';
import type { Logger } from '../util/log.ts';
import type { AppStore } from './db/types.ts';
import type { ModelUpstream } from './model-gateway/upstream.ts';
import type { CatalogPlugin } from './web/catalog.ts';
import type { LoginSettings } from './login/config.ts';
import type { Registry } from '../util/metrics.ts';
import type { ObjectStore } from '../objstore/types.ts';
import type { InstalledLicense } from '../license/license.ts';
import type { SupportUploadSettings } from './support-bundle.ts';
import type { BundleWriter } from '../cli/bundle-writer.ts';

export interface AgentMessage {
  role: 'user';
  content: unknown[];
  run?: boolean;
}

/** The part of the agent server client the facade uses. */
export interface AgentMessenger {
  sendMessage(conversationId: string, message: AgentMessage): Promise<unknown>;
}

export type AgentClientFactory = (baseUrl: string, sessionKey: string) => AgentMessenger;

export interface FacadeSettings {
  /** Installation-wide number of sandboxes that may be STARTING or RUNNING at once (spec part 8 rule 2). */
  capacity: number;
  /** Idle Time and Deletion Time of the environment: the admin console's defaults (DEFAULT_LIFECYCLE when absent). */
  idleTimeMs?: number;
  deletionTimeMs?: number;
  /** Retry-After of a 429 at capacity. Default 30. */
  retryAfterSeconds?: number;
  /** At most one last-activity write per sandbox per this many ms. Default 15 000. */
  activityCoalesceMs?: number;
  /** How long a workspace read waits for the paused sandbox it resumed. Default 30. */
  resumeWaitSeconds?: number;
  /**
   * Where the API itself may clone a marketplace to list its plugins. `git-hosts` (default): only
   * on the configured Git hosts, so a registered URL cannot make the API pod reach into the cluster
   * network (sandboxes, which Auto-Load clones in, are fenced off from it; the API is not).
   * `any-host`: anywhere (embedded mode, where the API runs beside the user's own processes).
   */
  marketplaceListing?: 'git-hosts' | 'any-host';
  /** Queued messages per conversation before send-message answers 429. Default 10. */
  maxPendingMessages?: number;
}

/** What the installation's sandboxes start from (GET /api/v1/sandbox-specs). */
export interface DefaultSandboxSpec {
  runtime: 'process' | 'kubernetes';
  /** The default sandbox image (kubernetes); none for process sandboxes. */
  image?: string;
  resources?: { requests?: Record<string, string>; limits?: Record<string, string> };
  /** When the configuration was read (the spec's created_at). */
  readAt?: string;
}

export interface FacadeDeps {
  store: ResourceStore;
  db: AppStore;
  clock: Clock;
  /** Namespace of Sandbox and Conversation resources ('default' embedded). */
  namespace: string;
  settings: FacadeSettings;
  log?: Logger;
  /** How to reach an agent server; default: AgentServerClient from src/runtime. */
  agentClient?: AgentClientFactory;
  /** The instance plugin catalog the Plugin Directory (/plugins) shows; none by default. */
  pluginCatalog?: CatalogPlugin[];
  /** CSP connect-src sources the web app needs for the agent servers' WebSockets (embedded: ws://127.0.0.1:*). */
  webConnectSrc?: string[];
  /** The provider the model gateway forwards to (modelUpstreamFromEnv); none: the gateway answers 503. */
  modelUpstream?: ModelUpstream;
  /** Where this process keeps its data (embedded: the data dir): /health reports its free disk space. */
  dataDir?: string;
  /** The default sandbox spec; default: process sandboxes. */
  sandboxSpec?: DefaultSandboxSpec;
  /** Free space below which /health says `degraded`. Default AGENTYARD_MIN_FREE_DISK_MB, else 512 MiB. */
  minFreeDiskBytes?: number;
  /** Git hosts (gitHostsFromEnv): a marketplace there is listed with the caller's token for it. Default: the public hosts. */
  gitHosts?: GitHosts;
  /** Prometheus registry GET /metrics serves (src/util/metrics.ts). Default: the process's registry. */
  metrics?: Registry;
  /** OpenID Connect login (login/config.ts); absent: the app signs in with API keys only. */
  login?: LoginSettings;
  /**
   * Conversation data kept outside the database (src/objstore): deleted with the conversation,
   * its `conversations/<id>/files/` handed to the owner in the download. None: there is none.
   */
  objects?: ObjectStore;
  /** The license checked at start (src/license); none: unlicensed, nothing refused. */
  license?: InstalledLicense;
  /** Where POST /api/v1/admin/support-bundle sends the bundle (supportUploadFromEnv). */
  supportUpload?: SupportUploadSettings;
  /**
   * Cluster mode: writes the Pod logs of the release and sandbox namespaces into a support bundle
   * (collectPodLogs in src/cli/support-bundle.ts). None: the bundle has no logs (embedded mode).
   */
  podLogs?: (bundle: BundleWriter) => Promise<void>;
}
