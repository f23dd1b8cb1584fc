import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BadGateway, BadRequest, Conflict, Invalid, NotFound, Unavailable } from '../api/errors.ts';
import { AgentServerClient } from './agent-server-client.ts';

/** A loopback agent server that answers from a table and records what it was asked. */
const calls: { method: string; url: string; key: string | undefined; body: string }[] = [];
const answers = new Map<string, [number, unknown]>();
let server: Server;
let url: string;

beforeAll(async () => {
  server = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      calls.push({ method: req.method!, url: req.url!, key: req.headers['x-session-api-key'] as string | undefined, body });
      const [status, answer] = answers.get(`${req.method} ${req.url}`) ?? [404, { detail: 'Not Found' }];
      if (answer === undefined) return void res.writeHead(status).end();
      res.writeHead(status, { 'content-type': 'application/json' }).end(typeof answer === 'string' ? answer : JSON.stringify(answer));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));

const ID = '0123456789abcdef0123456789abcdef';
const info = { id: ID, execution_status: 'idle' };

describe('AgentServerClient', () => {
  it('sends the session key and JSON bodies on every call', async () => {
    answers.set('POST /api/conversations', [201, info]);
    answers.set(`GET /api/conversations/${ID}`, [200, info]);
    answers.set(`POST /api/conversations/${ID}/events`, [200, { success: true }]);
    answers.set(`POST /api/conversations/${ID}/run`, [200, { success: true }]);
    answers.set(`POST /api/conversations/${ID}/pause`, [200, { success: true }]);
    answers.set(`DELETE /api/conversations/${ID}`, [200, { success: true }]);
    const client = new AgentServerClient(`${url}/`, 'sk');
    calls.length = 0;
    expect(await client.createConversation({ conversation_id: ID, workspace: { kind: 'LocalWorkspace', working_dir: '.' } })).toEqual(info);
    expect(await client.getConversation(ID)).toEqual(info);
    await client.sendMessage(ID, { role: 'user', content: [{ type: 'text', text: 'hi' }], run: true });
    await client.run(ID);
    await client.pause(ID);
    await client.deleteConversation(ID);
    expect(calls.map((c) => `${c.method} ${c.url}`)).toEqual([
      'POST /api/conversations',
      `GET /api/conversations/${ID}`,
      `POST /api/conversations/${ID}/events`,
      `POST /api/conversations/${ID}/run`,
      `POST /api/conversations/${ID}/pause`,
      `DELETE /api/conversations/${ID}`,
    ]);
    expect(calls.every((c) => c.key === 'sk')).toBe(true);
    expect(JSON.parse(calls[2]!.body)).toEqual({ role: 'user', content: [{ type: 'text', text: 'hi' }], run: true });
  });

  it('sends no key header when it has none, and passes query parameters', async () => {
    answers.set('GET /api/git/changes?path=%2Fw+s', [200, []]);
    calls.length = 0;
    expect(await new AgentServerClient(url, undefined).getJson('/api/git/changes', { path: '/w s' })).toEqual([]);
    expect(calls[0]?.key).toBeUndefined();
  });

  it.each([
    [400, { detail: 'bad' }, BadRequest],
    [404, { detail: 'Conversation not found' }, NotFound],
    [409, { detail: 'already running' }, Conflict],
    [422, { detail: [{ loc: ['body', 'workspace'], msg: 'Field required', type: 'missing' }] }, Invalid],
    [422, 'not json at all', Invalid],
    [401, { detail: 'Unauthorized' }, BadGateway],
    [500, 'Internal Server Error', BadGateway],
    [502, undefined, BadGateway],
    [503, { detail: 'starting' }, Unavailable],
  ])('maps %i to %o', async (status, answer, want) => {
    answers.set(`POST /api/conversations/${ID}/run`, [status, answer]);
    const err = await new AgentServerClient(url, 'sk').run(ID).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(want);
    if (err instanceof Invalid) expect(err.detail[0]).toHaveProperty('loc');
  });

  it('getConversation answers undefined for an unknown id', async () => {
    expect(await new AgentServerClient(url, 'sk').getConversation('ffffffffffffffffffffffffffffffff')).toBeUndefined();
  });

  it('maps a refused connection and a timeout to Unavailable, and health() to false', async () => {
    const closed = createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
    const deadUrl = `http://127.0.0.1:${(closed.address() as AddressInfo).port}`;
    await new Promise<void>((r) => closed.close(() => r()));
    const dead = new AgentServerClient(deadUrl, 'sk');
    await expect(dead.run(ID)).rejects.toBeInstanceOf(Unavailable);
    expect(await dead.health()).toBe(false);

    // A server that accepts and never answers.
    const silent = createServer(() => undefined);
    await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
    try {
      const slow = new AgentServerClient(`http://127.0.0.1:${(silent.address() as AddressInfo).port}`, 'sk', { timeoutMs: 100 });
      await expect(slow.run(ID)).rejects.toBeInstanceOf(Unavailable);
      expect(await slow.health()).toBe(false);
    } finally {
      silent.closeAllConnections();
      await new Promise<void>((r) => silent.close(() => r()));
    }
  });

  it('health() is true when /health answers 200', async () => {
    answers.set('GET /health', [200, 'OK']);
    expect(await new AgentServerClient(url, undefined).health()).toBe(true);
  });
});
