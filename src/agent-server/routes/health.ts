// Liveness, health, readiness and server info; outside the `/api` session-key check.
import Router from '@koa/router';
import type { ServerInfo } from '../../api/agent-server/index.ts';
import type { DiskSpace } from '../../util/disk-space.ts';
import type { StorageFaultState } from '../store/storage-health.ts';

/** The OpenHands agent-server release whose API surface we serve (for clients that gate on it). */
export const COMPATIBLE_VERSION = '1.58.2';

export interface HealthDeps {
  startedAt: number;
  /** Milliseconds since epoch of the last execution (event, message, run). */
  lastActivity(): number;
  ready(): boolean;
  usableTools: string[];
  /** The storage fault in force (writes refused with 507), if any. */
  storage?(): StorageFaultState | undefined;
  /** Free space where the database lives. */
  disk?(): DiskSpace | undefined;
  /** OH_APP_BACKEND_PUBLIC_URL: where browsers reach Canvas App backends (announced with its capability). */
  appBackendIngressUrl?: string;
}

/**
 * `/health` body: `status` is `ok`, or `degraded` while the disk is low or refuses writes. Still 200
 * then: a restart frees no space, so probes must not kill the server for it (it recovers by itself).
 */
export function healthBody(d: Pick<HealthDeps, 'storage' | 'disk'>): Record<string, unknown> {
  const fault = d.storage?.();
  const disk = d.disk?.();
  const storage = fault ? { status: 'faulted', code: fault.code, since: fault.since, detail: fault.detail } : { status: 'ok' };
  return { status: fault || disk?.low ? 'degraded' : 'ok', storage, ...(disk ? { disk } : {}) };
}

export function healthRoutes(d: HealthDeps): Router {
  const router = new Router();
  router.get('/alive', async (ctx) => {
    ctx.body = { status: 'ok' };
  });
  router.get('/health', async (ctx) => {
    ctx.body = healthBody(d);
  });
  router.get('/ready', async (ctx) => {
    if (d.ready()) {
      ctx.body = { status: 'ready' };
    } else {
      ctx.status = 503;
      ctx.body = { status: 'initializing', message: 'Server is still initializing' };
    }
  });
  const info = async (ctx: { body: unknown }) => {
    const now = Date.now();
    const body: ServerInfo = {
      uptime: (now - d.startedAt) / 1000,
      idle_time: Math.max(0, now - d.lastActivity()) / 1000,
      title: 'agentyard agent server',
      version: COMPATIBLE_VERSION,
      // The SDK and tools API we serve is that release's; no build metadata (OpenHands says unknown too).
      sdk_version: COMPATIBLE_VERSION,
      tools_version: COMPATIBLE_VERSION,
      workspace_version: 'unknown',
      build_git_sha: 'unknown',
      build_git_ref: 'unknown',
      python_version: null,
      usable_tools: d.usableTools,
      runtime_idle_timeout_seconds: null,
      max_foreground_terminal_timeout_seconds: null,
      conversation_runtime: 'local',
      available_conversation_runtimes: [],
      app_backend_ingress_url: d.appBackendIngressUrl ?? null,
      capabilities: ['event_seq_resume', 'event_sink_push', ...(d.appBackendIngressUrl ? ['canvas_app_backend_bridge_v1'] : [])],
      docs: '/docs',
      redoc: '/redoc',
    };
    ctx.body = body;
  };
  router.get('/server_info', info);
  router.get('/', info);
  return router;
}
