// A deferred start (OpenHands 1.58's `deferred_init`, OH_DEFERRED_INIT): the server listens at once,
// dormant, without its user's configuration: its health routes answer (/ready is 200, so a warm pool
// knows it can be initialized), /server_info and the OpenAPI document too, GET /api/init reports
// `dormant`, and every other /api route, /v1 and /app-backends answer 503 (sockets are refused) until
// POST /api/init delivers the configuration. Then the whole server (server.ts) starts on the same
// listening socket with the start options merged with the request's, exactly as a normal start with
// those options would: the stores open in the given data directory, what a key in
// `previous_secret_keys` sealed is sealed again with the current key (reseal.ts) before anything is
// served. A failed initialization rolls back to dormant with its error in GET /api/init, and can be
// tried again; a second one is refused (400), as in 1.58.
import { createServer, type IncomingMessage, type RequestListener } from 'node:http';
import type { Duplex } from 'node:stream';
import type { AddressInfo } from 'node:net';
import Koa from 'koa';
import Router from '@koa/router';
import { INIT_FIELDS_NOT_TAKEN, type InitRequest, type InitState, type InitStatus } from '../api/agent-server/init.ts';
import { BadRequest, Invalid, Unavailable } from '../api/errors.ts';
import { errorMiddleware } from '../facade/errors.ts';
import { findChromium } from '../agent/tools/browser/session.ts';
import { toolCatalog } from '../agent/tools/catalog.ts';
import { createLogger } from '../util/log.ts';
import { defaultRegistry, metricsEndpoint } from '../util/metrics.ts';
import { SessionKeys } from './http/auth.ts';
import { docsRoutes } from './routes/docs.ts';
import { healthRoutes } from './routes/health.ts';
import { initRoutes, type InitService } from './routes/init.ts';
import { startAgentServer, type AgentServer, type AgentServerOptions } from './server.ts';

const dormantDetail = (state: InitState) => `server is in deferred-init state '${state}'; call POST /api/init first`;

/**
 * The start options once initialized: the request's values over the dormant server's (1.58's
 * _build_initialized_config). A blank secret key is unset; without one, the first session key given
 * seals (1.58's fallback) when the dormant server had no key of its own.
 */
export function initializedOptions(base: AgentServerOptions, req: InitRequest): AgentServerOptions {
  const given = (INIT_FIELDS_NOT_TAKEN as readonly string[]).filter((f) => (req as Record<string, unknown>)[f] != null);
  if (given.length) throw new Invalid(given.map((f) => ({ loc: ['body', f], msg: `Value error, not taken by this agent server (see the field's description in /openapi.json); leave it out or null`, type: 'value_error' })));
  const secretKey = req.secret_key?.trim() ? req.secret_key : req.session_api_keys?.length && !base.secretKey ? req.session_api_keys[0] : base.secretKey;
  const previous = req.previous_secret_keys ?? base.previousSecretKeys;
  return {
    ...base,
    ...(req.session_api_keys ? { sessionKeys: req.session_api_keys } : {}),
    ...(secretKey !== undefined ? { secretKey } : {}),
    ...(previous !== undefined ? { previousSecretKeys: previous } : {}),
    ...(req.conversations_path ? { dataDir: req.conversations_path } : {}),
    ...(req.max_concurrent_runs ? { maxConcurrentRuns: req.max_concurrent_runs } : {}),
    ...(req.allow_cors_origins ? { appBackends: { ...base.appBackends, allowedOrigins: [...(base.appBackends?.allowedOrigins ?? []), ...req.allow_cors_origins] } } : {}),
  };
}

export async function startDeferredAgentServer(opts: AgentServerOptions): Promise<AgentServer> {
  const log = opts.log ?? createLogger('agent-server');
  let state: InitState = 'dormant';
  let error: string | null = null;
  let full: AgentServer | undefined;
  // The X-Init-API-Key: the dormant server's secret key (else its session keys, as 1.58 falls back).
  const dormantKeys = new SessionKeys(opts.secretKey ? [opts.secretKey] : opts.sessionKeys);
  const snapshot = (): InitStatus => ({ state, error });

  const http = createServer();
  let handler: RequestListener;
  http.on('request', (req, res) => handler(req, res));
  const refuseUpgrade = (_req: IncomingMessage, socket: Duplex) => {
    socket.end('HTTP/1.1 503 Service Unavailable\r\nRetry-After: 1\r\nContent-Length: 0\r\nConnection: close\r\n\r\n');
  };
  http.on('upgrade', refuseUpgrade);
  await new Promise<void>((ok, fail) => {
    http.once('error', fail);
    http.listen(opts.port, opts.host ?? '127.0.0.1', () => {
      http.off('error', fail);
      ok();
    });
  });
  const host = opts.host ?? '127.0.0.1';
  const url = `http://${host.includes(':') ? `[${host}]` : host}:${(http.address() as AddressInfo).port}`;

  const init: InitService = {
    snapshot,
    async initialize(req) {
      if (state !== 'dormant') throw new BadRequest(`server already in state: ${state}`);
      if (req.session_api_keys?.some((k) => k === '')) throw new Invalid([{ loc: ['body', 'session_api_keys'], msg: 'session_api_keys cannot contain empty keys', type: 'value_error' }]);
      const options = initializedOptions(opts, req);
      state = 'initializing';
      error = null;
      const envBefore = Object.fromEntries(Object.keys(req.env ?? {}).map((k) => [k, process.env[k]]));
      try {
        // Before the services start, so that what they read from the environment (tools' credentials) is there.
        Object.assign(process.env, req.env ?? {});
        http.off('upgrade', refuseUpgrade);
        full = await startAgentServer({ ...options, attach: { server: http, url, mount: (h) => void (handler = h), init } });
        state = 'ready';
        log.info({ url }, 'deferred start: initialized by POST /api/init, serving');
        return snapshot();
      } catch (err) {
        // Back to dormant, as 1.58: the error is said in GET /api/init and the orchestrator may try again.
        for (const [k, v] of Object.entries(envBefore)) if (v === undefined) delete process.env[k];
        else process.env[k] = v;
        http.removeAllListeners('upgrade');
        http.on('upgrade', refuseUpgrade);
        handler = dormant;
        state = 'dormant';
        error = err instanceof Error ? `${err.name}: ${err.message}` : String(err);
        log.error({ err }, 'deferred start: POST /api/init failed; dormant again');
        throw err;
      }
    },
  };

  const app = new Koa();
  app.silent = true;
  app.use(metricsEndpoint(defaultRegistry()));
  app.use(errorMiddleware(log, { malformedJson: 'validation-error' }));
  const startedAt = Date.now();
  // Booted and waiting for its configuration: ready as 1.58 marks it, so a warm pool can tell it may initialize it.
  app.use(healthRoutes({ startedAt, lastActivity: () => startedAt, ready: () => true, usableTools: toolCatalog({ browser: findChromium() !== undefined }), ...(opts.appBackends?.publicUrl ? { appBackendIngressUrl: opts.appBackends.publicUrl } : {}) }).routes());
  app.use(docsRoutes().routes());
  const initRouter = initRoutes(() => dormantKeys, init);
  app.use(initRouter.routes());
  app.use(initRouter.allowedMethods());
  // Every other route of the API (1.58's require_initialized, before its session-key check).
  const gate = new Router();
  gate.all(/^\/(api|v1|app-backends)(\/|$)/, async () => {
    throw new Unavailable(dormantDetail(state), { retryAfterSeconds: 1 });
  });
  app.use(gate.routes());
  const dormant = app.callback();
  handler = dormant;
  log.info({ url }, 'agent server listening, dormant: awaiting POST /api/init (OH_DEFERRED_INIT)');

  let closing: Promise<void> | undefined;
  return {
    url,
    close: () =>
      (closing ??= (async () => {
        if (full) return full.close();
        await new Promise<void>((ok) => {
          http.close(() => ok());
          http.closeAllConnections();
        });
      })()),
  };
}
