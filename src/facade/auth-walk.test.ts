// Authentication before routing (#18 finding 3): every route the routers register, in every
// spelling a router or a proxy might still match (case, percent-encoding, double and trailing
// slashes, `..`), sent without a key over raw HTTP (no client normalises the path). The answer is
// 401 or 404, never a handler's 200/422/500, and no handler touches the store or the app database.
import { request } from 'node:http';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiRouters, createApiApp, createFacade, publicPaths } from './app.ts';
import type { FacadeDeps } from './deps.ts';
import { createLogger } from '../util/log.ts';
import { makeSandbox, setStartTask, startConversationId, startHarness, type Harness } from './test-support.ts';

/** Raw request: the path goes on the wire exactly as given. */
export function rawRequest(url: string, method: string, path: string, headers: Record<string, string> = {}, body?: string): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method, path, headers: { ...headers, ...(body !== undefined ? { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)) } : {}) } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** The spellings of `path` (under /api/v1) that must not reach a handler without a key. */
function variants(path: string): string[] {
  const rest = path.slice('/api/v1'.length); // '' or '/...'
  const out = [
    path.toUpperCase(),
    path.replace('/api/v1', '/API/V1'),
    path.replace('/api/v1', '/Api/v1'),
    path.replace('/api/', '/%61pi/'),
    path.replace('/api/', '/api%2F'),
    path.replace('/api/v1', '/api/v1%2F').replace('%2F/', '%2F'),
    `/${path.slice(1).replaceAll('/', '%2F')}`,
    `/${path}`,
    path.replace('/api/', '/api//'),
    path.replace('/v1', '/v1/'),
    `${path}/`,
    `${path}//`,
    `${path}%2F`,
    `/api/v1/webhooks/..${rest}`,
    `/api/v1/webhooks/x/..%2F..${rest}`,
    `/api/v1/webhooks/../..${path}`,
    `/api/v1/openapi.json/..${rest}`,
    `/health/..${path}`,
    `/plugins/../..${path}`,
    `${path}?x=/api/v1/openapi.json`,
    `${path};/api/v1/openapi.json`,
    path.replace('/api/v1', '/api/v1/WEBHOOKS/..'),
  ];
  return [...new Set(out)].filter((v) => v !== path);
}

describe('every registered route, in every spelling, without a key', () => {
  let h: Harness;
  let server: Server;
  let url = '';
  let conv = '';
  const touched: string[] = [];

  beforeAll(async () => {
    h = await startHarness();
    await makeSandbox(h.store, h.alice.user, 'sb-1', 'RUNNING', { url: 'http://127.0.0.1:1', key: 'sk-1' });
    conv = await startConversationId(h);
    await setStartTask(h.store, conv, 'READY', 'sb-1');
    expect((await h.call('POST', '/api/v1/secrets', { body: { name: 'tok', value: 'v' } })).status).toBe(201);
    // The same store and database, watched: any call a handler makes is recorded. The key check
    // (findUserByApiKey) and the webhooks' session-key check (get of a Sandbox and its Secret) are auth.
    const watch = <T extends object>(target: T, name: string, allowed: (method: string, args: unknown[]) => boolean): T =>
      new Proxy(target, {
        get(t, prop, receiver) {
          const v = Reflect.get(t, prop, receiver) as unknown;
          if (typeof v !== 'function') return v;
          return (...args: unknown[]) => {
            if (!allowed(String(prop), args)) touched.push(`${name}.${String(prop)}`);
            return (v as (...a: unknown[]) => unknown).apply(t, args);
          };
        },
      });
    const deps: FacadeDeps = {
      store: watch(h.store, 'store', (m, args) => m === 'get' && ['Sandbox', 'Secret'].includes((args[0] as { kind: string }).kind)),
      db: watch(h.db, 'db', (m) => m === 'findUserByApiKey'),
      clock: h.clock,
      namespace: 'default',
      settings: { capacity: 10 },
      log: createLogger('auth-walk', 'silent'),
    };
    server = createServer(createApiApp(deps).callback());
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await new Promise<void>((r) => {
      server.close(() => r());
      server.closeAllConnections();
    });
    await h.close();
  });

  it('answers 401 or 404 and runs no handler, for every route and every variant', async () => {
    const facade = createFacade({ store: h.store, db: h.db, clock: h.clock, namespace: 'default', settings: { capacity: 10 } });
    const routes = apiRouters(facade).api.stack.flatMap((layer) =>
      layer.methods.filter((m) => m !== 'HEAD').map((method) => ({ method, path: String(layer.path).replace(/:(\w+)/g, (_m, p: string) => (p === 'conversation_id' ? conv : p === 'sandbox_id' ? 'sb-1' : 'tok')) })),
    );
    expect(routes.length).toBeGreaterThan(35);
    const open = publicPaths(facade);
    const body = JSON.stringify({ initial_message: { role: 'user', content: [{ type: 'text', text: 'hi' }] }, items: [], content: [{ type: 'text', text: 'hi' }], title: 'x', name: 'n', value: 'v' });
    let tried = 0;
    for (const r of routes) {
      const spellings = [...variants(r.path), ...(open.has(r.path) || r.path.startsWith('/api/v1/webhooks/') ? [] : [r.path])];
      for (const path of spellings) {
        // A sandbox's valid session key is no key for anything but its own webhooks.
        const attempts: Record<string, string>[] = [{}, { authorization: 'Bearer ay_not-a-key' }, { 'x-session-api-key': r.path.startsWith('/api/v1/webhooks/') ? 'sk-wrong' : 'sk-1' }];
        for (const headers of attempts) {
          const res = await rawRequest(url, r.method, path, headers, r.method === 'GET' || r.method === 'DELETE' ? undefined : body);
          expect([401, 404], `${r.method} ${path} ${JSON.stringify(headers)} → ${res.status} ${res.text.slice(0, 200)}`).toContain(res.status);
          tried++;
        }
      }
    }
    expect(touched).toEqual([]);
    expect(tried).toBeGreaterThan(2000);
  });

  it('still serves the public paths, exactly as spelled, and nothing else without a key', async () => {
    expect((await rawRequest(url, 'GET', '/api/v1/openapi.json')).status).toBe(200);
    expect((await rawRequest(url, 'GET', '/health')).status).toBe(200);
    expect((await rawRequest(url, 'GET', '/plugins')).status).toBe(200);
    for (const path of ['/API/V1/openapi.json', '/api/v1/openapi.json/', '/HEALTH', '/nowhere']) expect((await rawRequest(url, 'GET', path)).status, path).toBe(401);
    // With a key, a spelling the routers do not serve is simply not a route (an id path without GET: 405).
    expect((await rawRequest(url, 'GET', `/api/v1/app-conversations/${conv}%2Fdownload`, { authorization: `Bearer ${h.alice.key}` })).status).toBe(405);
    expect((await rawRequest(url, 'GET', `/api/v1/%61pp-conversations/${conv}/download`, { authorization: `Bearer ${h.alice.key}` })).status).toBe(404);
  });
});
