// Cluster mode: `agentyard controller` (the operator, leader-elected) and `agentyard api` (the
// facade over custom resources). Configuration comes from the environment the Helm chart sets.
import { S3ObjectStore } from '../objstore/s3-store.ts';
import { ARCHIVE_UPLOAD_DEADLINE_SECONDS } from '../runtime/kubernetes/desired.ts';
import { objectStoreFromEnv } from '../objstore/config.ts';
import { licenseFromEnv } from '../license/license.ts';
import { supportUploadFromEnv } from '../facade/support-bundle.ts';
import { randomBytes } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { hostname } from 'node:os';
import { parseArgs } from 'node:util';
import { join, resolve } from 'node:path';
import { CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import type { BundleWriter } from './bundle-writer.ts';
import { collectPodLogs } from './support-bundle.ts';
import { modelGatewayUrl } from '../api/model-gateway.ts';
import { systemClock } from '../controller/clock.ts';
import { createController } from '../controller/embedded.ts';
import { githubHostEnv, gitHostsFromEnv, gitSettingsFromEnv } from '../controller/conversation/repository.ts';
import { kubeEventRecorder } from '../controller/kube-events.ts';
import { LeaderElector } from '../controller/leader/leader-elector.ts';
import { loadLifecycleSettings } from '../controller/lifecycle.ts';
import { openAppStore, startApiServer } from '../facade/index.ts';
import { modelUpstreamFromEnv } from '../facade/model-gateway/upstream.ts';
import { telemetryFromEnv } from '../facade/telemetry/provider.ts';
import { loadPluginCatalog } from '../facade/web/catalog.ts';
import { LOGIN_FLAGS, loginSettings } from '../facade/login/config.ts';
import { loadSandboxPodSettings } from '../runtime/kubernetes/pod-settings.ts';
import { loadRuntimeAddressing } from '../runtime/kubernetes/addressing.ts';
import { KubernetesRuntime } from '../runtime/kubernetes/kubernetes-runtime.ts';
import { KubeStore } from '../store/kube/kube-store.ts';
import { ConversationKind } from '../api/conversation.ts';
import { createLogger } from '../util/log.ts';
import { defaultRegistry, startMetricsServer } from '../util/metrics.ts';
import { subscriptionEndpointEnv } from '../agent-server/subscription/endpoints-env.ts';

function required(env: NodeJS.ProcessEnv, name: string, what: string): string {
  const v = env[name];
  if (!v) throw new Error(`${name} is required: ${what}`);
  return v;
}

function seconds(env: NodeJS.ProcessEnv, name: string, fallback: number): number {
  const v = Number(env[name] ?? fallback);
  if (!Number.isFinite(v) || v <= 0) throw new Error(`${name} must be a positive number of seconds, got '${env[name]}'`);
  return v * 1000;
}

function metricsPortOf(raw: string): number {
  const port = Number(raw);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error(`AGENTYARD_METRICS_PORT must be an integer 0..65535, got '${raw}'`);
  return port;
}

function kubeConfig(): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromDefault(); // in-cluster service account, else KUBECONFIG / ~/.kube/config
  return kc;
}

function sandboxNamespace(env: NodeJS.ProcessEnv): string {
  return env.AGENTYARD_SANDBOX_NAMESPACE ?? 'agentyard-sandboxes';
}

/** Resolves when a signal asks the process to stop. */
function untilSignal(): Promise<NodeJS.Signals> {
  return new Promise((resolveSignal) => {
    const on = (s: NodeJS.Signals) => {
      process.off('SIGTERM', on);
      process.off('SIGINT', on);
      resolveSignal(s);
    };
    process.on('SIGTERM', on);
    process.on('SIGINT', on);
  });
}

/**
 * The model sandboxes use: LLM_MODEL through the API's model gateway (AGENTYARD_API_URL), with each
 * sandbox's own token. The provider's key and base URL belong to `agentyard api` now; a controller
 * still configured with them is refused rather than silently ignoring them.
 */
function sandboxModel(env: NodeJS.ProcessEnv): { model: string; gatewayUrl: string } | undefined {
  if (env.LLM_API_KEY_SECRET) {
    throw new Error('LLM_API_KEY_SECRET is not read any more: sandboxes never get the provider key. Give LLM_API_KEY (and LLM_BASE_URL) to `agentyard api`, whose model gateway holds it.');
  }
  if (!env.LLM_MODEL) return undefined;
  const api = required(env, 'AGENTYARD_API_URL', 'with LLM_MODEL set, sandboxes reach the model through the API\'s model gateway at this address');
  return { model: env.LLM_MODEL, gatewayUrl: modelGatewayUrl(api) };
}

async function keepConversation(store: KubeStore, namespace: string, id: string, sandbox: string): Promise<boolean> {
  const c = await store.get(ConversationKind, namespace, id);
  return c !== undefined && !c.metadata.deletionTimestamp && (c.status?.sandboxName ?? c.spec.sandboxName) === sandbox;
}

export async function runControllerCli(_argv: string[], env: NodeJS.ProcessEnv = process.env): Promise<number> {
  const log = createLogger('controller');
  const kc = kubeConfig();
  const namespace = sandboxNamespace(env);
  const settings = loadLifecycleSettings(env);
  const addressing = loadRuntimeAddressing(env); // refuses an inconsistent RUNTIME_URL_PATTERN now
  const llm = sandboxModel(env);
  // With the chart's objectStore, workspace archives go to the bucket (presigned uploads from the
  // archive Pod); the controller needs the bucket, not a filesystem, so only s3 counts here.
  const objects = env.AGENTYARD_OBJECT_STORE === 's3' ? objectStoreFromEnv(env, '/nonexistent') : undefined;
  const archiveStore = objects instanceof S3ObjectStore ? objects : undefined;
  await archiveStore?.init();
  const store = new KubeStore(kc);
  const runtime = new KubernetesRuntime(kc, {
    namespace,
    image: required(env, 'AGENTYARD_SANDBOX_IMAGE', 'the default image sandboxes run (any Linux image with a shell; the agentyard image by default)'),
    // The agentyard image, source of the agent bundle that sandbox Pods copy into their image.
    ...(env.AGENTYARD_IMAGE ? { agentImage: env.AGENTYARD_IMAGE } : {}),
    storageClass: required(env, 'STORAGE_CLASS', 'a StorageClass of the cluster for sandbox workspaces'),
    addressing,
    ...(env.AGENTYARD_API_URL ? { sinkBaseUrl: env.AGENTYARD_API_URL } : {}),
    ...(llm ? { llm } : {}),
    // The ChatGPT subscription's addresses (chart values sandbox.openaiSubscription), for every sandbox Pod.
    agentServerEnv: { ...subscriptionEndpointEnv(env), ...githubHostEnv(env) },
    ...(env.RUNTIME_INGRESS_CLASS ? { ingressClassName: env.RUNTIME_INGRESS_CLASS } : {}),
    ...(env.RUNTIME_TLS_SECRET ? { tlsSecretName: env.RUNTIME_TLS_SECRET } : {}),
    // Canvas App backends are reached on each sandbox's own host; the web app (this origin) opens their sessions.
    ...(env.AGENTYARD_PUBLIC_URL ? { appBackends: { webOrigins: [new URL(env.AGENTYARD_PUBLIC_URL).origin] } } : {}),
    ...loadSandboxPodSettings(env),
    ...(archiveStore ? { archiveUploadUrl: (key: string) => archiveStore.presignPut(key, ARCHIVE_UPLOAD_DEADLINE_SECONDS) } : {}),
    // A deleted sandbox's conversation files (browser recordings) are kept, as in embedded mode, for
    // conversations that still exist and were placed on that sandbox.
    ...(archiveStore ? { conversationFiles: { objects: archiveStore, keep: (id: string, sandbox: string) => keepConversation(store, namespace, id, sandbox) } } : {}),
  });
  await runtime.checkStorageClass();
  const telemetry = await telemetryFromEnv(env, 'agentyard', log);
  // Prometheus metrics on a port of their own (the controller serves no other HTTP), as
  // controller-runtime's manager does, by every replica: a standby shows it is alive and not leading.
  // Only when AGENTYARD_METRICS_PORT is set (the chart's metrics.enabled sets 8080): a fixed port by
  // default would collide where several controllers share a host (tests, a laptop).
  const metrics = env.AGENTYARD_METRICS_PORT ? await startMetricsServer(defaultRegistry(), metricsPortOf(env.AGENTYARD_METRICS_PORT), env.AGENTYARD_HOST ?? '0.0.0.0') : undefined;
  const identity = `${hostname()}-${randomBytes(4).toString('hex')}`;
  const elector = new LeaderElector({
    kubeConfig: kc,
    namespace: env.AGENTYARD_LEASE_NAMESPACE ?? namespace,
    name: env.AGENTYARD_LEASE_NAME ?? 'agentyard-controller',
    identity,
    leaseDurationMs: seconds(env, 'AGENTYARD_LEASE_DURATION_SECONDS', 15),
    renewDeadlineMs: seconds(env, 'AGENTYARD_LEASE_RENEW_DEADLINE_SECONDS', 10),
    retryPeriodMs: seconds(env, 'AGENTYARD_LEASE_RETRY_PERIOD_SECONDS', 2),
    log,
  });
  const stop = new AbortController();
  let lost = false;
  void untilSignal().then(() => stop.abort());
  log.info({ identity, namespace }, 'campaigning for leadership');
  process.stdout.write(`${JSON.stringify({ controller: identity, namespace, ...(metrics ? { metrics: `${metrics.url}/metrics` } : {}) })}\n`);
  await elector.run(
    {
      onStartedLeading: async (signal) => {
        process.stdout.write(`${JSON.stringify({ leading: identity })}\n`);
        const controller = createController({ store, runtime, clock: systemClock, settings, namespace, log, git: gitSettingsFromEnv(process.env), recorder: kubeEventRecorder(kc, 'agentyard-controller', log) });
        await controller.start();
        // Start traces come from the leader only: one export per start, however many API replicas run.
        const tracing = telemetry ? (await import('../facade/telemetry/index.ts')).traceStartTasks({ store, namespace, log }, telemetry) : undefined;
        await new Promise<void>((r) => signal.addEventListener('abort', () => r(), { once: true }));
        await tracing?.close();
        await controller.stop();
      },
      onStoppedLeading: () => {
        lost = !stop.signal.aborted;
      },
    },
    stop.signal,
  );
  await telemetry?.shutdown();
  await metrics?.close();
  if (lost) log.error({ identity }, 'lost the lease: exiting so that only one controller acts');
  return lost ? 1 : 0;
}

export async function runApiCli(argv: string[], env: NodeJS.ProcessEnv = process.env): Promise<number> {
  const { values } = parseArgs({ args: argv, options: LOGIN_FLAGS, strict: true });
  // OpenID Connect login (README, "Login"); behind an ingress the public URL cannot be guessed.
  const login = loginSettings(env, values);
  if (login && !login.publicUrl) throw new Error('AGENTYARD_PUBLIC_URL (--public-url) is required with OpenID Connect login: the address browsers use, e.g. https://agentyard.example.com');
  const log = createLogger('api');
  const kc = kubeConfig();
  const store = new KubeStore(kc);
  // External PostgreSQL (several replicas) when AGENTYARD_DATABASE_URL is set, else the bundled SQLite file (one replica).
  const databaseUrl = env.AGENTYARD_DATABASE_URL || undefined;
  const dataDir = resolve(env.AGENTYARD_DATA_DIR ?? '/var/lib/agentyard');
  if (!databaseUrl) mkdirSync(dataDir, { recursive: true });
  const db = await openAppStore({ databaseUrl, sqlitePath: join(dataDir, 'app.db'), log });
  log.info({ appStore: databaseUrl ? 'postgresql' : 'sqlite' }, 'app database opened');
  // Replicas may start together: creating the admin twice is a harmless conflict.
  if (!(await db.getUser('admin'))) await db.createUser('admin', 'admin').catch(async (err: unknown) => {
    if (!(await db.getUser('admin'))) throw err;
  });
  await db.setUserAdmin('admin', true); // manages users through the API (/api/v1/users)
  if (env.AGENTYARD_API_KEY) await db.addApiKey('admin', env.AGENTYARD_API_KEY);
  const port = Number(env.AGENTYARD_PORT ?? 3000);
  const settings = loadLifecycleSettings(env);
  // The model gateway: LLM_API_KEY (the provider's key, from a Secret only this Deployment reads) stays in this process.
  const modelUpstream = modelUpstreamFromEnv(env);
  // GET /api/v1/sandbox-specs shows what sandboxes start from: the chart gives the API the same
  // AGENTYARD_SANDBOX_IMAGE and AGENTYARD_SANDBOX_RESOURCES as the controller.
  const podSettings = loadSandboxPodSettings(env);
  const sandboxSpec = {
    runtime: 'kubernetes' as const,
    ...(env.AGENTYARD_SANDBOX_IMAGE ? { image: env.AGENTYARD_SANDBOX_IMAGE } : {}),
    ...(podSettings.resources ? { resources: podSettings.resources } : {}),
    readAt: new Date().toISOString(),
  };
  // The chart's objectStore (bundled SeaweedFS or an external bucket): conversation data deleted
  // with the conversation and served in its download. Unset: none (workspace archives stay on the
  // controller's archive volume). A wrong setting or an unreachable bucket stops the API here.
  const objects = env.AGENTYARD_OBJECT_STORE ? objectStoreFromEnv(env, dataDir) : undefined;
  await objects?.init();
  // The license the chart embedded (values -> Secret -> AGENTYARD_LICENSE): one that is malformed or
  // not signed by the vendor key stops the API here; an expired one only refuses new starts.
  const license = licenseFromEnv(env);
  if (license) log.info({ customer: license.license.customer, expires: license.license.expires_at, verified: license.verified }, 'license checked');
  if (objects) log.info({ objectStore: objects.kind, location: objects.location }, 'object store ready');
  // The console's support bundle carries the Pod logs of both namespaces, as the CLI's does (the
  // chart grants the API's service account pods list and pods/log get there, nothing more).
  const core = kc.makeApiClient(CoreV1Api);
  const logNamespaces = [...new Set([env.AGENTYARD_NAMESPACE, sandboxNamespace(env)].filter((n): n is string => Boolean(n)))];
  const podLogs = async (bundle: BundleWriter) => {
    for (const ns of logNamespaces) await collectPodLogs(core, ns, bundle);
  };
  const api = await startApiServer({ store, db, clock: systemClock, namespace: sandboxNamespace(env), settings: { capacity: settings.capacity, idleTimeMs: settings.idleTimeMs, deletionTimeMs: settings.deletionTimeMs }, gitHosts: gitHostsFromEnv(process.env), pluginCatalog: loadPluginCatalog(env), port, host: env.AGENTYARD_HOST ?? '0.0.0.0', log, sandboxSpec, ...(modelUpstream ? { modelUpstream } : {}), ...(objects ? { objects } : {}), ...(license ? { license } : {}), supportUpload: supportUploadFromEnv(env), podLogs, ...(login ? { login } : {}) });
  process.stdout.write(`agentyard api is up at ${api.url}\n`);
  await untilSignal();
  await api.close();
  await db.close();
  return 0;
}
