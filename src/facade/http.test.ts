// Cross-cutting HTTP behaviour: auth, unknown routes, wrong methods, malformed JSON, 422 shape, 500.
import Koa from 'koa';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import Type from 'typebox';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Conflict, TooManyRequests } from '../api/errors.ts';
import { createLogger } from '../util/log.ts';
import { errorMiddleware } from './errors.ts';
import { startHarness, type Harness } from './test-support.ts';
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
    expect(await h.call('GET', '/elsewhere', { key: null })).toMatchObject({ status: 404, body: { detail: 'Not Found' } });
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
