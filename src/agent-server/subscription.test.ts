// ChatGPT subscription sign-in and use, through the agent server's HTTP API with the real agent,
// against the scripted stand-in of OpenAI's sign-in and Codex services (src/testing/openai-subscription):
// device start → the user approves → poll → status → a conversation's model calls reach the Codex
// endpoint with the bearer token → the token expires (the injected clock moves) → refreshed → logout.
// No token shows in a response, an event, a log line or the data files; stored ones are sealed.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createAgent } from '../agent/agent.ts';
import { startOpenAiSubscriptionStandIn, CODEX_CLIENT_ID, type OpenAiSubscriptionStandIn } from '../testing/openai-subscription/server.ts';
import { REDACT_PATHS } from '../util/log.ts';
import { eventually, startTestServer, tempDir, userText, type TestServer } from './test-support.ts';

const SECRET_KEY = 'subscription-test-secret-key';
let clock = Date.parse('2026-03-01T10:00:00Z');
const now = () => clock;

let openai: OpenAiSubscriptionStandIn;
let dir: ReturnType<typeof tempDir>;
let s: TestServer;
let logText = '';
/** Every body the API answered in these tests, to look for tokens in. */
const answered: string[] = [];

beforeAll(async () => void (openai = await startOpenAiSubscriptionStandIn([], { now })));
afterAll(() => openai.close());

async function start(secretKey: string | null = SECRET_KEY): Promise<TestServer> {
  const sink = new Writable({ write: (chunk, _enc, cb) => ((logText += String(chunk)), cb()) });
  const server = await startTestServer(dir.path, {
    createAgent,
    ...(secretKey ? { secretKey } : {}),
    subscription: { issuer: openai.issuer, codexBaseUrl: openai.codexBaseUrl, now },
    log: pino({ level: 'trace', redact: { paths: REDACT_PATHS, censor: '**********' } }, sink),
  });
  const api = server.api;
  server.api = async (path, init) => {
    const r = await api(path, init);
    answered.push(JSON.stringify(r.body));
    return r;
  };
  return server;
}

beforeEach(async () => {
  dir = tempDir('subscription-');
  logText = '';
  s = await start();
});
afterEach(async () => {
  await s.close();
  // A test signed out (or never in): nothing left for the next.
  expect(openai.remaining()).toBe(0);
  dir.remove();
});

const signIn = async (): Promise<any> => {
  const started = await s.api('/api/llm/subscription/openai/device/start', { method: 'POST' });
  expect(started.status).toBe(200);
  openai.approve(started.body.user_code);
  return (await s.api('/api/llm/subscription/openai/device/poll', { method: 'POST', body: { device_code: started.body.device_code } })).body;
};

const subscriptionLlm = { model: 'openai/gpt-5.5', auth_type: 'subscription', subscription_vendor: 'openai' };

async function runToEnd(id: string, n: number): Promise<any[]> {
  await eventually(async () => {
    const info = (await s.api(`/api/conversations/${id}`)).body;
    return info.execution_status !== 'running' && info.execution_status !== 'idle' && openai.requests.length >= n;
  }, 15_000);
  return (await s.api(`/api/conversations/${id}/events/search?limit=100`)).body.items as any[];
}

function expectNoTokenAnywhere(): void {
  expect(openai.issued.length).toBeGreaterThan(0);
  const files = ['agent-server.db', 'agent-server.db-wal'].map((f) => join(dir.path, 'data', f)).filter((f) => existsSync(f));
  expect(files.length).toBeGreaterThan(0);
  const disk = files.map((f) => readFileSync(f).toString('latin1')).join('');
  for (const token of openai.issued) {
    expect(logText).not.toContain(token);
    expect(disk).not.toContain(token);
    for (const body of answered) expect(body).not.toContain(token);
  }
}

describe('ChatGPT subscription sign-in', () => {
  it('signs in with a device code, calls the Codex endpoint with the token, refreshes it once expired, and signs out', async () => {
    const disconnected = { vendor: 'openai', connected: false, account_email: null, expires_at: null };
    expect(await s.api('/api/llm/subscription/openai/status')).toEqual({ status: 200, body: disconnected });

    // Start: a challenge for the user, an opaque poll token (not OpenAI's device id).
    const started = await s.api('/api/llm/subscription/openai/device/start', { method: 'POST' });
    expect(started).toEqual({ status: 200, body: { device_code: expect.any(String), user_code: expect.stringMatching(/^[0-9A-F]{4}-[0-9A-F]{6}$/), verification_uri: `${openai.issuer}/codex/device`, verification_uri_complete: null, expires_at: clock + 15 * 60_000, interval_seconds: 5 } });
    expect(openai.authRequests[0]).toMatchObject({ path: '/api/accounts/deviceauth/usercode', body: { client_id: CODEX_CLIENT_ID } });
    expect(JSON.stringify(started.body)).not.toContain('deviceauth_');

    // The user has not approved yet: not connected, and the poll token stays usable.
    const poll = () => s.api('/api/llm/subscription/openai/device/poll', { method: 'POST', body: { device_code: started.body.device_code } });
    expect(await poll()).toEqual({ status: 200, body: disconnected });
    openai.approve(started.body.user_code);
    const connected = { vendor: 'openai', connected: true, account_email: 'user@example.test', expires_at: clock + 3600_000 };
    expect(await poll()).toEqual({ status: 200, body: connected });
    // The code was exchanged as OpenHands does: the device callback as redirect URI, the PKCE verifier.
    expect(openai.authRequests.at(-1)).toMatchObject({ path: '/oauth/token', body: { grant_type: 'authorization_code', client_id: CODEX_CLIENT_ID, redirect_uri: `${openai.issuer}/deviceauth/callback`, code_verifier: expect.any(String) } });
    // A finished sign-in is gone.
    expect(await poll()).toEqual({ status: 404, body: { detail: 'Subscription device login not found or expired' } });
    expect(await s.api('/api/llm/subscription/openai/status')).toEqual({ status: 200, body: connected });

    // A conversation whose LLM uses the subscription: its calls go to the Codex endpoint.
    openai.push({ content: 'Looking.', toolCalls: [{ name: 'terminal', arguments: { command: 'echo codex-was-here' } }], usage: { prompt_tokens: 50, completion_tokens: 7 } }, { toolCalls: [{ name: 'finish', arguments: { message: 'done' } }] });
    const body = { workspace: { kind: 'LocalWorkspace', working_dir: join(dir.path, 'w') }, agent: { llm: { ...subscriptionLlm, stream: true }, tools: [{ name: 'terminal' }] }, initial_message: userText('say hello', true) };
    const created = await s.api('/api/conversations', { method: 'POST', body });
    expect(created.status).toBe(201);
    expect(created.body.agent.llm).toMatchObject({ auth_type: 'subscription', subscription_vendor: 'openai' });
    const id = created.body.id as string;
    let events = await runToEnd(id, 2);
    expect((await s.api(`/api/conversations/${id}`)).body.execution_status).toBe('finished');
    const [first, second] = openai.requests;
    const firstAccess = openai.issued[0]!;
    expect(first!.headers['authorization']).toBe(`Bearer ${firstAccess}`);
    expect(first!.headers).toMatchObject({ 'chatgpt-account-id': 'acct-standin-0001', originator: 'codex_cli_rs', 'openai-beta': 'responses=experimental' });
    expect(first!.body).toMatchObject({ model: 'gpt-5.5', stream: true, store: false, tool_choice: 'auto', instructions: expect.any(String) });
    // The system prompt travels in front of the first user message; the tools as Responses functions.
    const input = first!.body['input'] as any[];
    expect(input[0].role).toBe('user');
    expect(input[0].content[0].text).toMatch(/^Context \(system prompt\):\n/);
    expect(input[0].content.at(-1)).toEqual({ type: 'input_text', text: 'say hello' });
    expect((first!.body['tools'] as any[]).map((t) => t.name)).toContain('terminal');
    // The second call carries the first's call and its output.
    const items = second!.body['input'] as any[];
    const call = items.find((i) => i.type === 'function_call');
    expect(call).toMatchObject({ name: 'terminal', arguments: JSON.stringify({ command: 'echo codex-was-here' }) });
    expect(items.find((i) => i.type === 'function_call_output' && i.call_id === call.call_id)?.output).toContain('codex-was-here');
    expect(events.filter((e) => e.kind === 'ActionEvent').map((e) => e.tool_name)).toEqual(['terminal', 'finish']);
    expect(events.find((e) => e.kind === 'MessageEvent' && e.source === 'agent')?.llm_message?.content?.[0]?.text ?? events.find((e) => e.kind === 'ActionEvent')?.thought?.[0]?.text).toBe('Looking.');
    const stats = (await s.api(`/api/conversations/${id}`)).body.stats;
    expect(JSON.stringify(stats)).toContain('"prompt_tokens":50');

    // An hour later the access token has expired: the next call refreshes it first and uses the new one.
    clock += 3600_000;
    openai.push({ toolCalls: [{ name: 'finish', arguments: { message: 'again' } }] });
    expect((await s.api(`/api/conversations/${id}/events`, { method: 'POST', body: userText('once more', true) })).status).toBe(200);
    events = await runToEnd(id, 3);
    const refresh = openai.authRequests.at(-1)!;
    expect(refresh).toMatchObject({ path: '/oauth/token', body: { grant_type: 'refresh_token', client_id: CODEX_CLIENT_ID, refresh_token: openai.issued[1] } });
    expect(openai.issued).toHaveLength(4);
    expect(openai.requests[2]!.headers['authorization']).toBe(`Bearer ${openai.issued[2]}`);
    expect(await s.api('/api/llm/subscription/openai/status')).toEqual({ status: 200, body: { ...connected, expires_at: clock + 3600_000 } });
    expect(openai.refused).toEqual([]);

    // Signed out: the stored tokens are gone, and a model call says a sign-in is needed.
    expect(await s.api('/api/llm/subscription/openai/logout', { method: 'POST' })).toEqual({ status: 200, body: disconnected });
    expect(await s.api('/api/llm/subscription/openai/status')).toEqual({ status: 200, body: disconnected });
    await s.api(`/api/conversations/${id}/events`, { method: 'POST', body: userText('and now?', true) });
    await eventually(async () => (await s.api(`/api/conversations/${id}`)).body.execution_status === 'error', 15_000);
    events = (await s.api(`/api/conversations/${id}/events/search?limit=100`)).body.items as any[];
    expect(events.at(-1)?.kind === 'ConversationErrorEvent' ? events.at(-1) : events.findLast((e) => e.kind === 'ConversationErrorEvent')).toMatchObject({ code: 'LLMAuthenticationError', detail: expect.stringMatching(/subscription login is required/) });
    expect(openai.requests).toHaveLength(3);
    expectNoTokenAnywhere();
  }, 60_000);

  it("keeps the tokens sealed with OH_SECRET_KEY over a restart and a hand-over's new key; another key opens nothing; without a key they stay in memory", async () => {
    expect((await signIn()).connected).toBe(true);
    await s.close();
    s = await start();
    expect((await s.api('/api/llm/subscription/openai/status')).body.connected).toBe(true);
    // A warm-pool hand-over's new secret key seals them again: they open with it after a restart.
    expect((await s.api('/api/agentyard/hand-over', { method: 'POST', body: { session_key: 'the-users-new-session-key-0123456789', secret_key: 'handed-over-secret-key' } })).status).toBe(200);
    await s.close();
    s = await start('handed-over-secret-key');
    expect((await s.api('/api/llm/subscription/openai/status')).body.connected).toBe(true);
    await s.close();
    s = await start('another-secret-key');
    expect((await s.api('/api/llm/subscription/openai/status')).body.connected).toBe(false);
    expect(logText).toMatch(/cannot open the stored subscription credentials/);
    await s.close();
    // No secret key: signed in while the process lives, forgotten by a restart, never written.
    s = await start(null);
    expect((await s.api('/api/llm/subscription/openai/status')).body.connected).toBe(false);
    expect((await signIn()).connected).toBe(true);
    await s.close();
    s = await start(null);
    expect((await s.api('/api/llm/subscription/openai/status')).body.connected).toBe(false);
    expectNoTokenAnywhere();
  }, 30_000);

  it('validates a subscription profile draft through the subscription: not valid before the sign-in, valid after', async () => {
    const validate = () => s.api('/api/profiles/chatgpt/validate', { method: 'POST', body: { llm: subscriptionLlm } });
    expect(await validate()).toEqual({ status: 200, body: { valid: false, error: { type: 'LLMAuthenticationError', message: expect.stringMatching(/subscription login is required/) } } });
    expect((await signIn()).connected).toBe(true);
    openai.push({ content: 'pong' }, { content: 'pong' });
    expect(await validate()).toEqual({ status: 200, body: { valid: true, error: null } });
    // OpenHands' serialized flag alone says the same.
    expect(await s.api('/api/profiles/chatgpt/validate', { method: 'POST', body: { llm: { model: 'openai/gpt-5.5', is_subscription: true } } })).toEqual({ status: 200, body: { valid: true, error: null } });
    expect(openai.requests.at(-1)!.body).not.toHaveProperty('max_output_tokens');
    await s.api('/api/llm/subscription/openai/logout', { method: 'POST' });
    expectNoTokenAnywhere();
  });

  it('forgets pending sign-ins at logout, refuses a failed refresh as not connected, and answers 422 for a poll without device_code', async () => {
    const started = (await s.api('/api/llm/subscription/openai/device/start', { method: 'POST' })).body;
    await s.api('/api/llm/subscription/openai/logout', { method: 'POST' });
    expect((await s.api('/api/llm/subscription/openai/device/poll', { method: 'POST', body: { device_code: started.device_code } })).status).toBe(404);

    expect((await signIn()).connected).toBe(true);
    // Two callers that find the token expired share one refresh (a refresh token is good once).
    clock += 2 * 3600_000;
    const grants = () => openai.authRequests.filter((r) => r.body['grant_type'] === 'refresh_token').length;
    const before = grants();
    const both = await Promise.all([s.api('/api/llm/subscription/openai/status'), s.api('/api/llm/subscription/openai/status')]);
    expect(both.map((r) => r.body.connected)).toEqual([true, true]);
    expect(grants()).toBe(before + 1);
    // The stand-in no longer knows the refresh token (used elsewhere): the refresh fails, status says so.
    const refreshToken = openai.issued.at(-1)!;
    openai.revoke(refreshToken);
    clock += 2 * 3600_000;
    expect((await s.api('/api/llm/subscription/openai/status')).body).toEqual({ vendor: 'openai', connected: false, account_email: null, expires_at: null });
    expect(logText).toMatch(/subscription token refresh failed/);

    const bad = await s.api('/api/llm/subscription/openai/device/poll', { method: 'POST', body: {} });
    expect(bad.status).toBe(422);
    expect(bad.body.detail).toEqual([expect.objectContaining({ loc: ['body', 'device_code'], type: 'missing' })]);
    await s.api('/api/llm/subscription/openai/logout', { method: 'POST' });
    expectNoTokenAnywhere();
  });

  it('answers 502 naming the issuer when it cannot be reached', async () => {
    await s.close();
    s = await startTestServer(dir.path, { createAgent, subscription: { issuer: 'http://127.0.0.1:9', codexBaseUrl: openai.codexBaseUrl, now } });
    const r = await s.api('/api/llm/subscription/openai/device/start', { method: 'POST' });
    expect(r).toEqual({ status: 502, body: { detail: expect.stringMatching(/^The OpenAI sign-in server \(http:\/\/127\.0\.0\.1:9\) could not be reached/) } });
  });
});
