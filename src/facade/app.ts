// The /api/v1 Koa application: one error middleware first, then API-key auth for every request
// but the few public pages and the webhooks (which check the sandbox's session key), then the
// routers. Auth runs before routing and before any body is read: a route reads its own body, with
// its own limit, in validate.ts.
import Router from '@koa/router';
import Koa from 'koa';
import { generatedFiles } from '../api/gen/generated-files.ts';
import { diskSpace, minFreeDiskBytes } from '../util/disk-space.ts';
import { createLogger } from '../util/log.ts';
import { ActivityRecorder } from './activity.ts';
import { requireApiKey } from './auth.ts';
import type { Facade } from './context.ts';
import type { FacadeDeps } from './deps.ts';
import { errorMiddleware } from './errors.ts';
import { OidcClient } from './login/oidc.ts';
import { loginRoutes, sessionPolicy } from './login/routes.ts';
import { modelGateway } from './model-gateway/gateway.ts';
import { appConversationRoutes } from './routes/app-conversations.ts';
import { eventRoutes } from './routes/events.ts';
import { hookRoutes } from './routes/hooks.ts';
import { sandboxRoutes } from './routes/sandboxes.ts';
import { marketplaceRoutes } from './routes/marketplaces.ts';
import { openHandsRoutes } from './routes/openhands.ts';
import { secretRoutes } from './routes/secrets.ts';
import { gitRoutes } from './routes/git.ts';
import { settingsRoutes } from './routes/settings.ts';
import { llmSettingsRoutes } from './routes/llm-settings.ts';
import { skillRoutes } from './routes/skills.ts';
import { usageRoutes } from './routes/usage.ts';
import { userRoutes } from './routes/users.ts';
import { warmPoolRoutes } from './routes/warm-pools.ts';
import { adminRoutes } from './routes/admin.ts';
import { licenseGate } from './license-gate.ts';
import { WEBHOOK_PREFIX, webhookRoutes } from './routes/webhooks.ts';
import { webRoutes } from './web/routes.ts';
import { defaultRegistry, httpMetrics, metricsEndpoint } from '../util/metrics.ts';
import { eventsIngested } from './sink.ts';

export const API_PREFIX = '/api/v1';

/**
 * Probes, outside /api/v1, no key needed. Liveness (/health): 200 once the app serves, nothing
 * else, so a slow database never gets a working process restarted; with a data dir, its free space
 * too: `degraded` (still 200: a restart frees nothing) when it is low. Readiness (/ready): the app
 * database answers as well, so a replica that cannot reach it leaves its Service instead of
 * answering 500s. /alive is the OpenHands app server's liveness path, kept for its clients and probes:
 * `{"status":"ok"}` while the process serves, as there.
 */
function healthRoutes(d: Facade['d']): Router {
  const minFree = d.dataDir === undefined ? 0 : (d.minFreeDiskBytes ?? minFreeDiskBytes(process.env));
  return new Router()
    .get('/alive', (ctx) => {
      ctx.body = { status: 'ok' };
    })
    .get('/health', (ctx) => {
      const disk = d.dataDir === undefined ? undefined : diskSpace(d.dataDir, minFree);
      ctx.body = { status: disk?.low ? 'degraded' : 'ok', ...(disk ? { disk } : {}) };
    })
    .get('/ready', async (ctx) => {
      try {
        await d.db.getUser('readiness-probe'); // any read that goes to the database
        ctx.body = { status: 'ok' };
      } catch (err) {
        d.log.warn({ err }, 'readiness: the app database does not answer');
        ctx.status = 503;
        ctx.body = { status: 'unavailable', detail: 'The app database does not answer' };
      }
    });
}

const OPENAPI_PATH = `${API_PREFIX}/openapi.json`;

/** The generated OpenAPI document, readable without a key like any API description. */
function openApiRoutes(): Router {
  let document: unknown;
  return new Router().get(OPENAPI_PATH, (ctx) => {
    document ??= JSON.parse(generatedFiles().find((f) => f.path === 'openapi.json')!.content);
    ctx.body = document;
  });
}

export function createFacade(deps: FacadeDeps): Facade {
  const d = { ...deps, log: deps.log ?? createLogger('facade') };
  return { d, activity: new ActivityRecorder(d), ...(deps.login ? { oidc: new OidcClient(deps.login, d.log) } : {}) };
}

/**
 * Every router that serves /api/v1. The route table in src/api/app/routes.ts (and so the OpenAPI
 * document) describes exactly these routes; src/facade/openapi.test.ts compares the two.
 */
export function apiRouters(facade: Facade): { openApi: Router; api: Router } {
  const api = new Router({ prefix: API_PREFIX });
  for (const routes of [webhookRoutes, appConversationRoutes, hookRoutes, skillRoutes, eventRoutes, sandboxRoutes, settingsRoutes, llmSettingsRoutes, userRoutes, secretRoutes, marketplaceRoutes, usageRoutes, warmPoolRoutes, openHandsRoutes, gitRoutes, adminRoutes]) {
    api.use(routes(facade).routes());
  }
  return { openApi: openApiRoutes(), api };
}

/**
 * Paths served without an API key, exactly as spelled here (case and encoding included): the
 * routers' public routes. Anything else, also any other spelling a router might still match
 * (`/API/V1/...`, `%61pi`, `//`, a trailing slash), needs a key before it is routed. Webhooks are
 * routed without one and authenticated by their router with the sandbox's session key.
 */
export function publicPaths(facade: Facade): Set<string> {
  const routers = [healthRoutes(facade.d), openApiRoutes(), loginRoutes(facade, facade.oidc), webRoutes(facade.d.pluginCatalog ?? [], { connectSrc: facade.d.webConnectSrc ?? [] })];
  return new Set(routers.flatMap((r) => r.stack.map((layer) => layer.path)).filter((p): p is string => typeof p === 'string'));
}

export function createApiApp(deps: FacadeDeps, facade: Facade = createFacade(deps)): Koa {
  const app = new Koa();
  app.silent = true; // errors are logged once, by errorMiddleware
  // Prometheus: /metrics is open like /health (what it holds and why: README, Metrics); the latency
  // middleware is outermost so that refused and failed requests are counted with their status.
  const metrics = deps.metrics ?? defaultRegistry();
  app.use(metricsEndpoint(metrics));
  app.use(httpMetrics(metrics));
  eventsIngested(metrics);
  app.use(errorMiddleware(facade.d.log));
  // Before the API-key check: the model gateway checks its own tokens first, then reads the body.
  app.use(modelGateway(facade, { upstream: deps.modelUpstream }));
  const open = publicPaths(facade);
  const webhooks = `${API_PREFIX}${WEBHOOK_PREFIX}/`;
  // With OIDC login on, a browser session's cookie authenticates too (CSRF-checked; README, "Login").
  const oidc = facade.oidc;
  app.use(requireApiKey(deps.db, { except: (path) => open.has(path) || path.startsWith(webhooks), ...(oidc ? { sessions: () => sessionPolicy(oidc) } : {}) }));
  app.use(licenseGate(facade.d));
  const { openApi, api } = apiRouters(facade);
  app.use(openApi.routes());
  app.use(api.routes());
  app.use(api.allowedMethods());
  app.use(healthRoutes(facade.d).routes());
  app.use(loginRoutes(facade, facade.oidc).routes());
  app.use(webRoutes(facade.d.pluginCatalog ?? [], { connectSrc: facade.d.webConnectSrc ?? [] }).routes());
  return app;
}
