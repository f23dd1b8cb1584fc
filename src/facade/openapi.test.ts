// The OpenAPI document over HTTP, and the route table it is generated from against the routes the
// Koa routers really register: an undocumented route, or a documented one nobody serves, fails here.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { bodyParser } from '@koa/bodyparser';
import Koa from 'koa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { APP_ROUTES } from '../api/app/routes.ts';
import { apiRouters, createFacade } from './app.ts';
import { errorMiddleware } from './errors.ts';
import { createLogger } from '../util/log.ts';
import { NS, startHarness, type Harness } from './test-support.ts';

const root = join(import.meta.dirname, '..', '..');

/** `GET /api/v1/x/{id}` for each route a router serves (HEAD is implied by GET). */
function registered(router: ReturnType<typeof apiRouters>['api']): string[] {
  return router.stack.flatMap((layer) =>
    layer.methods.filter((m) => m !== 'HEAD').map((m) => `${m} ${String(layer.path).replace(/:(\w+)/g, '{$1}')}`),
  );
}

describe('OpenAPI document', () => {
  let h: Harness;
  beforeAll(async () => (h = await startHarness()));
  afterAll(() => h.close());

  it('is served at /api/v1/openapi.json without a key, as generated into openapi.json', async () => {
    const onDisk = JSON.parse(readFileSync(join(root, 'openapi.json'), 'utf8'));
    for (const key of [null, h.alice.key, 'ay_wrong']) {
      const r = await h.call('GET', '/api/v1/openapi.json', { key });
      expect(r.status).toBe(200);
      expect(r.headers.get('content-type')).toMatch(/^application\/json/);
      expect(r.body).toEqual(onDisk);
    }
    expect(onDisk.paths['/api/v1/users/me'].get.security).toEqual([{ bearer: [] }]);
    expect(onDisk.paths['/api/v1/openapi.json'].get.security).toEqual([]);
  });

  it('documents exactly the routes the routers register', () => {
    const { openApi, api } = apiRouters(createFacade({ store: h.store, db: h.db, clock: h.clock, namespace: NS, settings: { capacity: 1 } }));
    const served = [...registered(openApi), ...registered(api)].sort();
    const documented = APP_ROUTES.map((r) => `${r.method.toUpperCase()} ${r.path}`).sort();
    expect(new Set(served).size).toBe(served.length);
    expect(new Set(documented).size).toBe(documented.length);
    expect(served).toEqual(documented);
    // Sanity: the walk saw the nested routers, not just their mount points.
    expect(served).toContain('GET /api/v1/users/me');
    expect(served).toContain('POST /api/v1/webhooks/{sandbox_id}/events/{conversation_id}');
  });

  // A generated client sends only the query parameters the document declares, so a route that reads
  // one more cannot be called by it. Each route runs once (as alice, no query) with ctx.query behind
  // a proxy that records every name a handler asks for; a name the document lacks fails here.
  it('declares every query parameter a route reads', async () => {
    const doc = JSON.parse(readFileSync(join(root, 'openapi.json'), 'utf8')) as {
      paths: Record<string, Record<string, { parameters?: { name: string; in: string }[] }>>;
    };
    const read = new Map<string, Set<string>>();
    let current = '';
    const app = new Koa();
    app.silent = true;
    app.use(errorMiddleware(createLogger('openapi-test')));
    app.use(bodyParser({ enableTypes: ['json'] }));
    app.use(async (ctx, next) => {
      const names = read.get(current)!;
      const query = new Proxy(ctx.request.query, {
        get(target, name, receiver) {
          if (typeof name === 'string') names.add(name);
          return Reflect.get(target, name, receiver);
        },
      });
      for (const holder of [ctx, ctx.request]) Object.defineProperty(holder, 'query', { get: () => query, configurable: true });
      ctx.state.user = h.alice.user;
      await next();
    });
    const { openApi, api } = apiRouters(createFacade({ store: h.store, db: h.db, clock: h.clock, namespace: NS, settings: { capacity: 1 } }));
    app.use(openApi.routes());
    app.use(api.routes());
    const server = app.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    try {
      const base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
      for (const route of APP_ROUTES) {
        current = `${route.method.toUpperCase()} ${route.path}`;
        read.set(current, new Set());
        const url = route.path.replace(/\{\w+\}/g, '00000000-0000-4000-8000-000000000000');
        const body = route.method === 'get' || route.method === 'delete' ? undefined : '{}';
        const res = await fetch(base + url, { method: route.method.toUpperCase(), headers: { 'content-type': 'application/json' }, ...(body ? { body } : {}) });
        // An event stream (the conversation changes) does not end by itself: its query was read before its headers came.
        if (res.headers.get('content-type')?.includes('text/event-stream')) await res.body?.cancel();
        else await res.arrayBuffer();
      }
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
    const undeclared: string[] = [];
    for (const route of APP_ROUTES) {
      const key = `${route.method.toUpperCase()} ${route.path}`;
      const declared = new Set((doc.paths[route.path]![route.method]!.parameters ?? []).filter((p) => p.in === 'query').map((p) => p.name));
      for (const name of read.get(key)!) if (!declared.has(name)) undeclared.push(`${key}: ${name}`);
    }
    expect(undeclared).toEqual([]);
    // Sanity: the proxy saw the reads of routes that take a query at all.
    expect(read.get('GET /api/v1/app-conversations/{conversation_id}/file')!.size + read.get('GET /api/v1/app-conversations/search')!.size).toBeGreaterThan(0);
  });
});

