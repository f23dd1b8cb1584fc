// Cross-cutting HTTP behaviour: auth, unknown routes, wrong methods, malformed JSON, 422 shape, 500.
import Koa from 'koa';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import Type from 'typebox';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Conflict, TooManyRequests } from '../api/errors.ts';
import { createLogger } from '../util/log.ts';
import { errorMiddleware } from './errors.ts';
import { APP_ROUTES, type AppRoute } from '../api/app/routes.ts';
import { makeSandbox, setStartTask, startConversationId, startHarness, type Harness } from './test-support.ts';
import { validate } from './validate.ts';

describe('facade HTTP conventions', () => {
  let h: Harness;
  beforeAll(async () => (h = await startHarness()));
  afterAll(() => h.close());

  it('requires a Bearer API key', async () => {
    expect(await h.call('GET', '/api/v1/sandboxes/search', { key: null })).toMatchObject({ status: 401, body: { detail: expect.stringMatching(/Bearer/) } });
    expect(await h.call('GET', '/api/v1/sandboxes/search', { key: 'ay_wrong' })).toMatchObject({ status: 401, body: { detail: 'Invalid API key' } });
    expect((await h.call('GET', '/api/v1/sandboxes/search')).status).toBe(200);
  });

  it('answers unknown routes with 404 and wrong methods with 405', async () => {
    expect(await h.call('GET', '/api/v1/nothing-here')).toMatchObject({ status: 404, body: { detail: 'Not Found' } });
    expect(await h.call('GET', '/elsewhere')).toMatchObject({ status: 404, body: { detail: 'Not Found' } });
    // The key is checked before anything is routed: without one, only the public pages answer.
    expect(await h.call('GET', '/elsewhere', { key: null })).toMatchObject({ status: 401 });
    expect((await h.call('GET', '/health', { key: null })).status).toBe(200);
    const r = await h.call('PUT', '/api/v1/sandboxes/search');
    expect(r).toMatchObject({ status: 405, body: { detail: 'Method Not Allowed' } });
    expect(r.headers.get('allow')).toContain('GET');
  });

  it('answers malformed JSON with 400', async () => {
    expect(await h.call('POST', '/api/v1/app-conversations', { rawBody: '{"initial_message": ' })).toMatchObject({
      status: 400,
      body: { detail: 'Malformed JSON in request body' },
    });
  });

  it('answers invalid input with 422 located issues', async () => {
    const r = await h.call('POST', '/api/v1/app-conversations', {
      body: { initial_message: { role: 'user', content: [{ type: 'text', text: 7 }] }, bogus: 1 },
    });
    expect(r.status).toBe(422);
    expect(r.body.detail).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ loc: ['body', 'initial_message', 'content', 0, 'text'], type: expect.any(String) }),
        expect.objectContaining({ loc: ['body', 'bogus'], type: 'extra_forbidden' }),
      ]),
    );
    const q = await h.call('GET', `/api/v1/sandboxes?${Array.from({ length: 101 }, (_, i) => `id=s${i}`).join('&')}`);
    expect(q.status).toBe(422);
    expect(q.body.detail[0].loc[0]).toBe('query');
  });
});

// Every route of the table, tried as a new user would: a broken body, a wrong field type, an id
// that does not exist. Walked from APP_ROUTES, so a new route is tried without touching this file.
describe('every /api/v1 route, tried as a new user', () => {
  let h: Harness;
  let conv: string;
  const UNKNOWN = { conversation_id: 'ffffffffffffffffffffffffffffffff', sandbox_id: 'sb-unknown', name: 'unknown-name', user_id: 'unknown-user', prefix: 'ay_unknwn' };
  let known: typeof UNKNOWN;
  beforeAll(async () => {
    h = await startHarness();
    await makeSandbox(h.store, h.alice.user, 'sb-1', 'RUNNING', { url: 'http://127.0.0.1:1', key: 'sk-1' });
    conv = await startConversationId(h);
    await setStartTask(h.store, conv, 'READY', 'sb-1');
    expect((await h.call('POST', '/api/v1/secrets', { body: { name: 'tok', value: 'v' } })).status).toBe(201);
    expect((await h.call('POST', '/api/v1/settings/marketplaces', { body: { name: 'mp', url: 'https://git.example.com/acme/mp' } })).status).toBe(201);
    known = { conversation_id: conv, sandbox_id: 'sb-1', name: 'tok', user_id: h.bob.user.id, prefix: h.bob.key.slice(0, 9) };
    await h.db.setUserAdmin(h.alice.user.id, true); // reaches the administrators' routes too
  });
  afterAll(() => h.close());

  /** A body each route with a body accepts, for trying its ids. */
  const validBody = (r: AppRoute): unknown => {
    const bodies: Record<string, unknown> = {
      'POST /api/v1/app-conversations/{conversation_id}/send-message': { content: [{ type: 'text', text: 'hi' }] },
      'POST /api/v1/conversations/{conversation_id}/pending-messages': { content: [{ type: 'text', text: 'hi' }] },
      'PATCH /api/v1/app-conversations/{conversation_id}': { title: 'x' },
      'POST /api/v1/app-conversations/{conversation_id}/fork': { title: 'x' },
      'POST /api/v1/app-conversations/{conversation_id}/confirmation-policy': { policy: { kind: 'NeverConfirm' } },
      'POST /api/v1/app-conversations/{conversation_id}/respond-to-confirmation': { accept: true },
      'PATCH /api/v1/warm-pools/{name}': { replicas: 1 },
      'PATCH /api/v1/secrets/{name}': { value: 'w' },
      'PATCH /api/v1/settings/marketplaces/{name}': { auto_load: true },
      'POST /api/v1/settings/profiles/{name}/rename': { new_name: 'renamed' },
      'POST /api/v1/app-conversations/{conversation_id}/switch_profile': { profile_name: 'p' },
      'POST /api/v1/webhooks/{sandbox_id}/events/{conversation_id}': { items: [] },
      'POST /api/v1/webhooks/{sandbox_id}/conversations': { id: UNKNOWN.conversation_id, execution_status: 'idle', updated_at: '2026-03-01T10:00:00Z' },
    };
    const key = `${r.method.toUpperCase()} ${r.path}`;
    if (!(key in bodies)) throw new Error(`add a valid body for ${key} to this test`);
    return bodies[key];
  };
  /** The query parameters a route requires, each with a value it accepts (they are all paths). */
  const requiredQuery = (r: AppRoute): string => {
    const required = ((r.query as { required?: string[] } | undefined)?.required ?? []).map((n) => `${n}=${encodeURIComponent('/workspace/x')}`);
    return required.length ? `?${required.join('&')}` : '';
  };
  const pathOf = (r: AppRoute, ids: typeof UNKNOWN) =>
    r.path.replace(/\{(\w+)\}/g, (_m, p: keyof typeof UNKNOWN) => (p === 'name' && r.path.includes('marketplaces') && ids === known ? 'mp' : ids[p]));
  const send = (r: AppRoute, path: string, o: { body?: unknown; rawBody?: string; headers?: Record<string, string> } = {}) =>
    h.call(r.method.toUpperCase(), path, { ...o, headers: { ...(r.sandboxAuth ? { 'x-session-api-key': 'sk-1' } : {}), ...o.headers } });
  const where = (r: AppRoute) => `${r.method.toUpperCase()} ${r.path}`;
  const locs = (body: { detail: { loc: unknown[] }[] }) => body.detail.map((i) => i.loc.join('.'));
  const typesOf = (s: Record<string, unknown>): string[] =>
    s['anyOf'] ? (s['anyOf'] as Record<string, unknown>[]).flatMap(typesOf) : s['const'] !== undefined ? [typeof s['const']] : [s['type'] ?? []].flat() as string[];
  const props = (s: unknown) => Object.entries(((s as { properties?: object } | undefined)?.properties ?? {}) as Record<string, Record<string, unknown>>);
  const requiredOf = (s: unknown): string[] => (s as { required?: string[] } | undefined)?.required ?? [];
  /** A value a required query parameter takes: an enum's first member, else any text. */
  const validOf = (s: Record<string, unknown> | undefined): string => String((s?.['anyOf'] as Record<string, unknown>[] | undefined)?.[0]?.['const'] ?? 'x');

  it('answers malformed JSON with 400 on every route that reads a body', async () => {
    const routes = APP_ROUTES.filter((r) => r.body);
    expect(routes.length).toBeGreaterThanOrEqual(10);
    for (const r of routes) {
      expect(await send(r, pathOf(r, known), { rawBody: '{"title": ' }), where(r)).toMatchObject({ status: 400, body: { detail: 'Malformed JSON in request body' } });
    }
  });

  it('answers a body that is not a JSON object, or not JSON at all, with 422 at loc body', async () => {
    for (const r of APP_ROUTES.filter((x) => x.body)) {
      for (const [rawBody, type] of [['[1]', 'application/json'], ['title=x', 'application/x-www-form-urlencoded'], ['hello', 'text/plain']]) {
        const res = await send(r, pathOf(r, known), { rawBody: rawBody!, headers: { 'content-type': type! } });
        expect(res.status, `${where(r)} ${type}`).toBe(422);
        expect(locs(res.body), `${where(r)} ${type}`).toEqual(['body']);
      }
    }
    // Nothing was started by the form-encoded start requests.
    expect((await h.call('GET', '/api/v1/app-conversations/count')).body).toBe(1);
  });

  it('answers a wrong field type with 422 naming the field, in bodies and queries', async () => {
    let tried = 0;
    for (const r of APP_ROUTES) {
      for (const [name, schema] of props(r.body)) {
        const types = typesOf(schema);
        if (types.length === 0) continue; // takes anything
        const res = await send(r, pathOf(r, known), { body: { [name]: types.some((t) => t === 'number' || t === 'integer') ? 'text' : 12345 } });
        expect(res.status, `${where(r)} body.${name}`).toBe(422);
        expect(locs(res.body), `${where(r)} body.${name}`).toContain(`body.${name}`);
        tried++;
      }
      for (const [name, schema] of props(r.query)) {
        const types = typesOf(schema);
        const wrong = types.includes('integer') ? 'many' : types.includes('boolean') ? 'maybe' : schema['anyOf'] ? 'SIDEWAYS' : /__(gte|lt)$/.test(name) ? 'last-tuesday' : name === 'page_id' ? '!!' : undefined;
        if (wrong === undefined) continue; // a free string (a title filter, an id)
        // The route's other required parameters, valid (an enum's first value), so that only this one is wrong.
        const others = requiredOf(r.query).filter((n) => n !== name).map((n) => `&${n}=${encodeURIComponent(validOf(props(r.query).find(([k]) => k === n)?.[1]))}`).join('');
        const res = await send(r, `${pathOf(r, known)}?${name}=${wrong}${others}`);
        expect(res.status, `${where(r)} query.${name}`).toBe(422);
        expect(locs(res.body), `${where(r)} query.${name}`).toEqual([`query.${name}`]);
        tried++;
      }
    }
    expect(tried).toBeGreaterThan(40);
  });

  it('answers a missing required query parameter with 422 naming it', async () => {
    const routes = APP_ROUTES.filter((r) => requiredQuery(r) !== '');
    expect(routes.length).toBeGreaterThanOrEqual(3);
    for (const r of routes) {
      const res = await send(r, pathOf(r, known));
      expect(res.status, where(r)).toBe(422);
      expect(locs(res.body), where(r)).toEqual(((r.query as { required: string[] }).required).map((n) => `query.${n}`));
    }
  });

  it('answers an unknown id with 404 and a detail naming it (401 for an unknown sandbox behind a webhook)', async () => {
    // Routes not built answer 501 whatever the id (openhands-routes.test.ts).
    // As in OpenHands: saving a profile creates an unknown name, deleting one that is not there succeeds (llm-settings.test.ts).
    const upserts = new Set(['POST /api/v1/settings/profiles/{name}', 'DELETE /api/v1/settings/profiles/{name}']);
    for (const r of APP_ROUTES.filter((x) => x.path.includes('{') && !x.notBuilt && !upserts.has(`${x.method.toUpperCase()} ${x.path}`))) {
      const body = r.body ? validBody(r) : undefined;
      const res = await send(r, pathOf(r, UNKNOWN) + requiredQuery(r), body !== undefined ? { body } : {});
      if (r.sandboxAuth) {
        expect(res, where(r)).toMatchObject({ status: 401, body: { detail: 'Invalid session API key for this sandbox' } });
        if (!r.path.includes('{conversation_id}')) continue;
        // A known sandbox, an unknown conversation.
        const inner = await send(r, r.path.replace('{sandbox_id}', 'sb-1').replace('{conversation_id}', UNKNOWN.conversation_id), { body });
        expect(inner, where(r)).toMatchObject({ status: 404, body: { detail: `Conversation ${UNKNOWN.conversation_id} not found` } });
        continue;
      }
      expect(res.status, where(r)).toBe(404);
      const id = r.path.includes('{conversation_id}')
        ? UNKNOWN.conversation_id
        : r.path.includes('{sandbox_id}')
          ? UNKNOWN.sandbox_id
          : r.path.includes('{user_id}')
            ? UNKNOWN.user_id
            : r.path.includes('{prefix}')
              ? UNKNOWN.prefix
              : UNKNOWN.name;
      expect(res.body.detail, where(r)).toEqual(expect.stringContaining(id));
    }
    for (const r of APP_ROUTES.filter((x) => x.method === 'get' && props(x.query).some(([n]) => n === 'ids' || n === 'id'))) {
      const param = props(r.query).find(([n]) => n === 'ids' || n === 'id')![0];
      const res = await send(r, `${pathOf(r, known)}?${param}=${UNKNOWN.conversation_id}&${param}=${conv}`);
      expect(res.status, where(r)).toBe(200);
      expect(res.body[0], where(r)).toBeNull();
    }
  });

  it('answers a malformed id in a batch get with 422 at its position, where ids have a form (UUIDs, sandbox names)', async () => {
    const checked = APP_ROUTES.filter((x) => x.method === 'get' && props(x.query).some(([n, s]) => (n === 'ids' || n === 'id') && (s['items'] as { pattern?: string } | undefined)?.pattern));
    expect(checked.map(where).sort()).toEqual(['GET /api/v1/app-conversations', 'GET /api/v1/app-conversations/start-tasks', 'GET /api/v1/sandboxes']);
    for (const r of checked) {
      const param = props(r.query).find(([n]) => n === 'ids' || n === 'id')![0];
      const res = await send(r, `${pathOf(r, known)}?${param}=${UNKNOWN.conversation_id}&${param}=Not%20An%20Id`);
      expect(res.status, where(r)).toBe(422);
      expect(res.body.detail, where(r)).toEqual([expect.objectContaining({ loc: ['query', param, 1], type: 'pattern' })]);
    }
  });
});

describe('errorMiddleware', () => {
  const app = new Koa();
  app.silent = true;
  app.use(errorMiddleware(createLogger('t', 'silent')));
  app.use(validate({ query: Type.Object({ n: Type.Optional(Type.Integer()), ids: Type.Array(Type.String()) }) }));
  app.use(async (ctx) => {
    const q = ctx.state.query as { n?: number; ids: string[] };
    if (ctx.path === '/boom') throw new Error('secret internals');
    if (ctx.path === '/busy') throw new TooManyRequests('full', 12);
    if (ctx.path === '/conflict') throw new Conflict('taken');
    ctx.body = q;
  });
  let url = '';
  const server = createServer(app.callback());
  beforeAll(async () => {
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((r) => server.close(() => r())));

  it('hides the message of unexpected errors behind an error id', async () => {
    const res = await fetch(`${url}/boom?ids=a`);
    const body = (await res.json()) as Record<string, unknown>;
    expect(res.status).toBe(500);
    expect(body).toEqual({ detail: 'Internal Server Error', error_id: expect.any(String) });
    expect(JSON.stringify(body)).not.toContain('secret');
  });

  it('maps error codes and sets Retry-After on 429', async () => {
    const busy = await fetch(`${url}/busy?ids=a`);
    expect(busy.status).toBe(429);
    expect(busy.headers.get('retry-after')).toBe('12');
    expect(await busy.json()).toEqual({ detail: 'full' });
    expect((await fetch(`${url}/conflict?ids=a`)).status).toBe(409);
  });

  it('coerces query numbers and keeps repeated keys as arrays', async () => {
    expect(await (await fetch(`${url}/?n=5&ids=a&ids=b`)).json()).toEqual({ n: 5, ids: ['a', 'b'] });
    expect(await (await fetch(`${url}/?ids=a`)).json()).toEqual({ ids: ['a'] });
    const bad = await fetch(`${url}/?n=x&ids=a`);
    expect(bad.status).toBe(422);
    expect(((await bad.json()) as { detail: { loc: unknown[] }[] }).detail[0]!.loc).toEqual(['query', 'n']);
  });
});
