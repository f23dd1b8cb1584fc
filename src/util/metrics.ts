// Prometheus metrics (prom-client), shared by every process: the API, the controller and the agent
// server each serve GET /metrics in the text exposition format. One registry per process (with
// Node's process metrics: RSS, CPU, event-loop lag, GC); components register their metrics on it
// once, by name, so that several apps in one process (`agentyard up`, tests) share them.
//
// Labels never carry user data: HTTP latency is labelled by the route *template* (`/api/v1/
// conversation/:id/events/search`, never the ids), an unrouted path by `<unmatched>`, and the other
// metrics by controller, step, phase and result names from a fixed set.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Middleware } from 'koa';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';

export type { Registry };

/** Latency buckets (seconds) for HTTP requests and reconciles: 1 ms .. 60 s. */
export const LATENCY_BUCKETS = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];

let processRegistry: Registry | undefined;

/** The process's registry, with Node's default process metrics; created on first use. */
export function defaultRegistry(): Registry {
  if (!processRegistry) {
    processRegistry = new Registry();
    collectDefaultMetrics({ register: processRegistry });
  }
  return processRegistry;
}

/** A registry of its own (tests that assert exact values), without the process metrics. */
export function newRegistry(): Registry {
  return new Registry();
}

type Ctor<M> = new (cfg: { name: string; help: string; labelNames?: readonly string[]; buckets?: number[]; registers: Registry[] }) => M;

/** The metric `name` on `registry`, created the first time (a second app in the process reuses it). */
function once<M>(registry: Registry, Kind: Ctor<M>, name: string, help: string, labelNames: readonly string[], buckets?: number[]): M {
  const existing = registry.getSingleMetric(name);
  if (existing) return existing as unknown as M;
  return new Kind({ name, help, labelNames, ...(buckets ? { buckets } : {}), registers: [registry] });
}

export const counter = (r: Registry, name: string, help: string, labels: readonly string[] = []) => once<Counter<string>>(r, Counter, name, help, labels);
export const gauge = (r: Registry, name: string, help: string, labels: readonly string[] = []) => once<Gauge<string>>(r, Gauge, name, help, labels);
export const histogram = (r: Registry, name: string, help: string, labels: readonly string[] = [], buckets = LATENCY_BUCKETS) => once<Histogram<string>>(r, Histogram, name, help, labels, buckets);

/**
 * Koa middleware: `http_request_duration_seconds{method,route,code}` and `http_requests_total`.
 * Register it first (outermost), so that errors turned into responses and 401s are counted too.
 * `route` is @koa/router's matched template; requests no route matched share one label value.
 */
export function httpMetrics(registry: Registry): Middleware {
  const duration = histogram(registry, 'http_request_duration_seconds', 'HTTP request latency by route template', ['method', 'route', 'code']);
  const total = counter(registry, 'http_requests_total', 'HTTP requests by route template', ['method', 'route', 'code']);
  return async (ctx, next) => {
    const end = duration.startTimer();
    try {
      await next();
    } finally {
      const matched = (ctx as { _matchedRoute?: unknown })._matchedRoute;
      const labels = { method: ctx.method, route: typeof matched === 'string' ? matched : '<unmatched>', code: String(ctx.status) };
      end(labels);
      total.inc(labels);
    }
  };
}

/** Koa middleware answering GET /metrics (before authentication: see the README on why it is open). */
export function metricsEndpoint(registry: Registry, path = '/metrics'): Middleware {
  return async (ctx, next) => {
    if (ctx.path !== path || (ctx.method !== 'GET' && ctx.method !== 'HEAD')) return next();
    ctx.set('content-type', registry.contentType);
    ctx.body = await registry.metrics();
  };
}

/**
 * A bare HTTP server answering GET /metrics only: for the controller, which serves no other HTTP
 * (controller-runtime's metrics server, by default on :8080).
 */
export async function startMetricsServer(registry: Registry, port: number, host: string): Promise<{ url: string; close(): Promise<void> }> {
  const server = createServer((req, res) => {
    if (req.method !== 'GET' || (req.url ?? '').split('?')[0] !== '/metrics') {
      res.writeHead(404).end();
      return;
    }
    registry.metrics().then(
      (text) => res.writeHead(200, { 'content-type': registry.contentType }).end(text),
      () => res.writeHead(500).end(),
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  const { port: bound } = server.address() as AddressInfo;
  return {
    url: `http://${host.includes(':') ? `[${host}]` : host}:${bound}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
