// The MCP OAuth install flow through the real agent server against a real OAuth-protected MCP
// server over HTTP (the MCP SDK's authorization server: discovery, dynamic registration, PKCE,
// refresh; src/testing/mcp/oauth-server.ts). The test plays the browser: it follows the
// authorization URL, which redirects to the loopback callback, and hands that URL in. Tokens stay
// with the agent server (sealed, across a restart) and never show in responses or the log.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createAgent } from '../../agent/agent.ts';
import { startOAuthMcpServer, type OAuthMcpServer } from '../../testing/mcp/oauth-server.ts';
import { startScriptedLlm } from '../../testing/scripted-llm/server.ts';
import { eventually, startTestServer, tempDir, userText, type TestServer } from '../test-support.ts';
import { parseMcpTestRequest } from './probe.ts';
import { OAuthJobs } from './oauth-jobs.ts';
import { McpOAuthStore } from './token-store.ts';

const TOOLS = ['echo', 'whoami', 'fail', 'crash'];
let oauth: OAuthMcpServer;
let dir: ReturnType<typeof tempDir>;
let s: TestServer | undefined;
let logText = '';

async function start(secretKey: string | undefined = 'sealing-key-1'): Promise<TestServer> {
  await s?.close();
  const sink = new Writable({ write: (chunk, _enc, cb) => ((logText += String(chunk)), cb()) });
  s = await startTestServer(dir.path, { ...(secretKey ? { secretKey } : {}), log: pino({ level: 'trace' }, sink) });
  return s;
}

beforeEach(async () => {
  oauth = await startOAuthMcpServer();
  dir = tempDir('mcp-oauth-');
  logText = '';
});
afterEach(async () => {
  await s?.close();
  s = undefined;
  await oauth.close();
  dir.remove();
});

const server = () => ({ type: 'http', url: oauth.url, auth: { strategy: 'oauth2', authentication: { type: 'oauth', client_name: 'agentyard tests' } } });

/** The browser: GET of the authorization URL, which the authorization server answers with a redirect to the callback. */
async function consent(authorizationUrl: string): Promise<string> {
  const r = await fetch(authorizationUrl, { redirect: 'manual' });
  expect(r.status).toBe(302);
  return r.headers.get('location')!;
}

/** Every response body and the log so far, checked for every token the authorization server issued. */
function expectNoToken(...bodies: unknown[]): void {
  const text = JSON.stringify(bodies) + logText;
  for (const t of oauth.issued) expect(text).not.toContain(t);
}

async function authorize(a: TestServer): Promise<{ start: any; status: any; done: any }> {
  const start = await a.api('/api/mcp/oauth/start', { method: 'POST', body: { name: 'linear', server: server() } });
  expect(start.status).toBe(200);
  expect(start.body).toMatchObject({ ok: true, job_id: expect.any(String), authorization_url: expect.stringContaining('/authorize?') });
  const auth = new URL(start.body.authorization_url);
  expect(auth.searchParams.get('code_challenge_method')).toBe('S256');
  expect(auth.searchParams.get('redirect_uri')).toMatch(/^http:\/\/localhost:\d+\/callback$/);
  const status = await a.api(`/api/mcp/oauth/status/${start.body.job_id}`);
  const callbackUrl = await consent(start.body.authorization_url);
  const done = await a.api(`/api/mcp/oauth/callback/${start.body.job_id}`, { method: 'POST', body: { callback_url: callbackUrl } });
  return { start, status, done };
}

describe('MCP OAuth install flow', () => {
  it('authorizes a server in the browser, then tests it with the stored tokens, also after a restart', async () => {
    let a = await start();
    // Before consent a test fails: there are no tokens, and /mcp/test asks for none.
    const before = await a.api('/api/mcp/test', { method: 'POST', body: { server: server() } });
    expect(before.body).toMatchObject({ ok: false, error_kind: 'connection' });
    expect(before.body.error).toContain('/api/mcp/oauth/start');

    const { status, done } = await authorize(a);
    expect(status.body).toMatchObject({ ok: true, status: 'authorizing', callback_ready: true });
    expect(done.body).toMatchObject({ ok: true, status: 'succeeded', tools: TOOLS, callback_ready: true });
    // What a client may keep: the registered client's public metadata and the expiry, no token, no secret.
    expect(done.body.oauth_state.client_info.client_id).toBe([...oauth.clients.keys()][0]);
    expect(done.body.oauth_state.token_expires_at).toBeGreaterThan(Date.now() / 1000);
    expect(done.body.oauth_state.tokens).toBeUndefined();
    expect(oauth.grants).toEqual(['authorization_code']);
    expect((await a.api(`/api/mcp/oauth/status/${done.body.job_id}`)).body).toEqual(done.body);

    const after = await a.api('/api/mcp/test', { method: 'POST', body: { server: server() }, });
    expect(after.body).toMatchObject({ ok: true, tools: TOOLS });

    // Restarted with the same sealing key: the tokens are still there, sealed on disk.
    a = await start();
    const restarted = await a.api('/api/mcp/test', { method: 'POST', body: { server: server() } });
    expect(restarted.body).toMatchObject({ ok: true, tools: TOOLS });
    const file = readFileSync(join(dir.path, 'data', 'mcp-oauth.json'), 'utf8');
    for (const t of oauth.issued) expect(file).not.toContain(t);
    // A start needs no consent now: the job ends at once, its outcome on the status route.
    const again = await a.api('/api/mcp/oauth/start', { method: 'POST', body: { server: server() } });
    expect(again.body).toEqual({ ok: true, job_id: expect.any(String) });
    expect((await a.api(`/api/mcp/oauth/status/${again.body.job_id}`)).body).toMatchObject({ ok: true, status: 'succeeded', tools: TOOLS, callback_ready: false });
    expectNoToken(before.body, status.body, done.body, after.body, restarted.body, again.body);
  });

  it('refreshes an access token the server no longer accepts, and keeps the new one', async () => {
    const a = await start();
    await authorize(a);
    oauth.expireAccessTokens();
    const r = await a.api('/api/mcp/test', { method: 'POST', body: { server: server() }, });
    expect(r.body).toMatchObject({ ok: true, tools: TOOLS });
    expect(oauth.grants).toEqual(['authorization_code', 'refresh_token']);
    // The rotated refresh token was stored: another expiry refreshes again with it.
    oauth.expireAccessTokens();
    expect((await a.api('/api/mcp/test', { method: 'POST', body: { server: server() } })).body.ok).toBe(true);
    expect(oauth.grants).toEqual(['authorization_code', 'refresh_token', 'refresh_token']);
    expectNoToken(r.body);
  });

  it('forgets the tokens when restarted with another sealing key, or without one', async () => {
    await authorize(await start('key-a'));
    expect((await (await start('key-b')).api('/api/mcp/test', { method: 'POST', body: { server: server() } })).body.ok).toBe(false);
    expect((await (await start(undefined)).api('/api/mcp/test', { method: 'POST', body: { server: server() } })).body.ok).toBe(false);
  });

  it('checks the callback URL: loopback http (400), the job\'s port and path (400), its state; a job waits until ready', async () => {
    const a = await start();
    const start_ = await a.api('/api/mcp/oauth/start', { method: 'POST', body: { server: server() } });
    const id = start_.body.job_id as string;
    const callback = new URL(await consent(start_.body.authorization_url));
    const post = (callback_url: string) => a.api(`/api/mcp/oauth/callback/${id}`, { method: 'POST', body: { callback_url } });
    expect(await post('https://evil.example/callback')).toEqual({ status: 400, body: { detail: 'Invalid OAuth callback URL' } });
    expect(await post(`http://localhost:${Number(callback.port) + 1}/callback?code=x`)).toEqual({ status: 400, body: { detail: 'Unexpected OAuth callback URL' } });
    const forged = new URL(callback);
    forged.searchParams.set('state', 'forged');
    expect((await post(forged.href)).body).toMatchObject({ ok: false, status: 'failed', error: 'OAuth callback returned HTTP 400', error_kind: 'connection' });
    // The job still waits for the real one.
    expect((await a.api(`/api/mcp/oauth/status/${id}`)).body.status).toBe('authorizing');
    expect((await post(callback.href)).body).toMatchObject({ ok: true, status: 'succeeded' });
  });
});

describe('a conversation with an oauth2 MCP server', () => {
  it('uses the tokens authorized through /api/mcp/oauth (refreshed when expired); without them the run ends with MCPConnectionError', async () => {
    const llm = await startScriptedLlm();
    try {
      const sink = new Writable({ write: (chunk, _enc, cb) => ((logText += String(chunk)), cb()) });
      const a = await startTestServer(dir.path, { createAgent, secretKey: 'k', llmDefaults: { model: 'openai/scripted', baseUrl: llm.url, apiKey: 'sk-default' }, log: pino({ level: 'trace' }, sink) });
      s = a;
      const run = async (text: string) => {
        const body = { workspace: { kind: 'LocalWorkspace', working_dir: join(dir.path, 'wd') }, agent: { llm: { model: 'openai/scripted' }, mcp_config: { mcpServers: { linear: { url: oauth.url, auth: { strategy: 'oauth2' } } } } } };
        const id = (await a.api('/api/conversations', { method: 'POST', body })).body.id as string;
        await a.api(`/api/conversations/${id}/events`, { method: 'POST', body: userText(text, true) });
        const status = await eventually(async () => {
          const st = (await a.api(`/api/conversations/${id}`)).body.execution_status;
          return st === 'finished' || st === 'error' ? st : undefined;
        }, 20_000);
        return { status, items: (await a.api(`/api/conversations/${id}/events/search?limit=100`)).body.items as unknown[] };
      };
      const refused = await run('before consent');
      expect(refused.status).toBe('error');
      expect(JSON.stringify(refused.items)).toContain('MCPConnectionError');

      await authorize(a);
      oauth.expireAccessTokens();
      llm.push({ toolCalls: [{ name: 'echo', arguments: { text: 'hi' } }] }, { toolCalls: [{ name: 'finish', arguments: { message: 'done' } }] });
      const ok = await run('use linear');
      expect(ok.status).toBe('finished');
      expect(JSON.stringify(ok.items)).toContain('echo: hi');
      expect(oauth.grants).toEqual(['authorization_code', 'refresh_token']);
      expectNoToken(refused.items, ok.items);
    } finally {
      await llm.close();
    }
  });
});

describe('OAuth jobs', () => {
  it('are forgotten 15 minutes after they started (injected clock)', async () => {
    let now = 1_000_000;
    const jobs = new OAuthJobs({ store: new McpOAuthStore(), cwd: dir.path, now: () => now, callbackTimeoutMs: 2000 });
    const job = jobs.start(parseMcpTestRequest({ server: server() }));
    await job.authorizationReady;
    expect(job.status).toBe('authorizing');
    now += 15 * 60_000;
    expect(jobs.get(job.id)).toBe(job);
    now += 1;
    expect(jobs.get(job.id)).toBeUndefined();
    await job.done;
    expect(job.result).toMatchObject({ ok: false, error_kind: 'timeout' });
  });
});
