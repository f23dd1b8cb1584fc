// POST /api/mcp/test through the real agent server, against real MCP servers: the test tools'
// server as a child process over stdio, and over streamable HTTP on loopback. Also the request
// checks (422 with locations, 400/404 of the OAuth routes). The OAuth flow is in mcp-oauth.test.ts.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startHttpMcpServer, STDIO_SERVER, type HttpMcpServer } from '../../testing/mcp/server.ts';
import { startTestServer, tempDir, TEST_KEY, type TestServer } from '../test-support.ts';

let remote: HttpMcpServer;
let dir: ReturnType<typeof tempDir>;
let s: TestServer;
const TOOLS = ['echo', 'whoami', 'fail', 'crash'];

beforeAll(async () => {
  remote = await startHttpMcpServer();
});
afterAll(async () => {
  await remote.close();
});
beforeEach(async () => {
  dir = tempDir('mcp-routes-');
  s = await startTestServer(dir.path);
});
afterEach(async () => {
  await s.close();
  dir.remove();
});

const stdio = (extra: Record<string, unknown> = {}) => ({ type: 'stdio', command: process.execPath, args: [STDIO_SERVER], ...extra });
const test = (body: unknown) => s.api('/api/mcp/test', { method: 'POST', body });

describe('POST /api/mcp/test', () => {
  it('connects to a stdio server, lists its tools and calls the one asked for', async () => {
    const r = await test({ server: stdio(), tool_call: { name: 'echo', arguments: { text: 'hi' } } });
    expect(r).toEqual({ status: 200, body: { ok: true, tools: TOOLS, tool_result: { is_error: false, text: 'echo: hi' } } });
    // A tool error is reported as data, without failing the test; an unknown tool names the ones there are.
    expect((await test({ server: stdio(), tool_call: { name: 'fail' } })).body.tool_result).toEqual({ is_error: true, text: 'this tool always fails' });
    expect((await test({ server: stdio(), tool_call: { name: 'nope' } })).body.tool_result).toEqual({ is_error: true, text: `Tool 'nope' not advertised by server (available: ${TOOLS.join(', ')})` });
  });

  it('accepts the settings form of a server (transport, or neither type nor transport)', async () => {
    const { type: _t, ...native } = stdio();
    expect((await test({ server: native })).body).toEqual({ ok: true, tools: TOOLS });
    expect((await test({ server: { ...native, transport: 'stdio' } })).body).toEqual({ ok: true, tools: TOOLS });
    expect((await test({ server: { url: remote.url } })).body).toEqual({ ok: true, tools: TOOLS });
  });

  it("gives a stdio server the request's env and never the agent server's own environment", async () => {
    process.env['API_TOKEN'] = 'the-service-own-credential';
    try {
      expect((await test({ server: stdio(), tool_call: { name: 'whoami' } })).body.tool_result.text).toBe('token=(none)');
      expect((await test({ server: stdio({ env: { API_TOKEN: 'given' } }), tool_call: { name: 'whoami' } })).body.tool_result.text).toBe('token=given');
    } finally {
      delete process.env['API_TOKEN'];
    }
  });

  it("sends a remote server the request's credentials only, never the session key", async () => {
    const seen: Record<string, string | string[] | undefined>[] = [];
    const spy: Server = createServer((req, res) => {
      seen.push(req.headers);
      res.writeHead(401).end();
    });
    await new Promise<void>((r) => spy.listen(0, '127.0.0.1', r));
    try {
      const url = `http://127.0.0.1:${(spy.address() as AddressInfo).port}/mcp`;
      const r = await test({ server: { type: 'http', url, headers: { 'X-Team': 'blue' } } });
      expect(r.body).toMatchObject({ ok: false, error_kind: 'connection' });
      expect(seen.length).toBeGreaterThan(0);
      for (const h of seen) {
        expect(JSON.stringify(h)).not.toContain(TEST_KEY);
        expect(h['x-team']).toBe('blue');
      }
    } finally {
      spy.closeAllConnections();
      spy.close();
    }
    const before = remote.authorizations.length;
    const bearer = await test({ server: { type: 'shttp', url: remote.url, auth: { strategy: 'bearer', value: 'tok-1' } }, tool_call: { name: 'whoami' } });
    expect(bearer.body).toEqual({ ok: true, tools: TOOLS, tool_result: { is_error: false, text: 'token=tok-1' } });
    const basic = await test({ server: { type: 'http', url: remote.url, auth: { strategy: 'basic', username: 'u', password: 'p' } } });
    expect(basic.body.ok).toBe(true);
    expect(remote.authorizations.slice(before)).toContain(`Basic ${Buffer.from('u:p').toString('base64')}`);
  });

  it('answers 200 with ok=false and a kind for a server that cannot be started, reached or does not answer in time', async () => {
    const missing = await test({ name: 'gone', server: { type: 'stdio', command: '/nonexistent/mcp-server' } });
    expect(missing.status).toBe(200);
    expect(missing.body).toMatchObject({ ok: false, error_kind: 'connection' });
    expect(missing.body.error).toContain('gone');
    const refused = await test({ server: { type: 'http', url: 'http://127.0.0.1:1/mcp' } });
    expect(refused.body).toMatchObject({ ok: false, error_kind: 'connection' });
    // A server that accepts the connection and never answers.
    const silent: Server = createServer(() => undefined);
    await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
    try {
      const t0 = Date.now();
      const r = await test({ timeout: 0.5, server: { type: 'http', url: `http://127.0.0.1:${(silent.address() as AddressInfo).port}/mcp` } });
      expect(r.body).toMatchObject({ ok: false, error_kind: 'timeout' });
      expect(Date.now() - t0).toBeLessThan(10_000);
    } finally {
      silent.closeAllConnections();
      silent.close();
    }
  });

  it('refuses a malformed request with 422 and the field paths', async () => {
    const locs = async (body: unknown) => (await test(body)).body.detail.map((d: { loc: unknown[] }) => d.loc);
    expect(await locs({})).toContainEqual(['body', 'server']);
    expect((await test({ server: stdio(), timeout: 0 })).status).toBe(422);
    expect((await test({ server: stdio(), timeout: 121 })).status).toBe(422);
    expect((await test({ server: { type: 'stdio', command: '' } })).status).toBe(422);
    const both = await test({ server: { type: 'http', url: remote.url, headers: { Authorization: 'Bearer x' }, auth: { strategy: 'bearer', value: 'y' } } });
    expect(both.status).toBe(422);
    expect(both.body.detail[0].msg).toContain("'auth' cannot be combined");
    expect((await test({ server: { url: remote.url, authentication: { type: 'oauth' } } })).status).toBe(422);
  });
});

describe('the MCP OAuth routes, without a flow', () => {
  it('start refuses a server without auth.strategy oauth2 (400); an unknown job is a 404; a bad callback body a 422', async () => {
    expect(await s.api('/api/mcp/oauth/start', { method: 'POST', body: { server: stdio() } })).toEqual({ status: 400, body: { detail: "MCP OAuth start requires auth.strategy='oauth2'" } });
    expect(await s.api('/api/mcp/oauth/status/0123abc')).toEqual({ status: 404, body: { detail: 'MCP OAuth job not found' } });
    expect((await s.api('/api/mcp/oauth/callback/0123abc', { method: 'POST', body: { callback_url: 'http://localhost:1/callback' } })).status).toBe(404);
    expect((await s.api('/api/mcp/oauth/callback/0123abc', { method: 'POST', body: {} })).status).toBe(422);
  });

  it('are behind the session key', async () => {
    expect((await s.api('/api/mcp/test', { method: 'POST', body: { server: stdio() }, key: null })).status).toBe(401);
  });
});
