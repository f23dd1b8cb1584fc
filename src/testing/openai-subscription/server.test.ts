// The stand-in of OpenAI's subscription services refuses what the real ones refuse, so a client
// that gets the contract wrong fails against it: the client id, the redirect URI and PKCE verifier of
// the code exchange, a code or refresh token used twice, a token past its expiry, a missing account
// header, a call that is not streamed or carries parameters Codex refuses. Its JWTs verify with its JWKS.
import { createRemoteJWKSet, jwtVerify } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CODEX_CLIENT_ID, startOpenAiSubscriptionStandIn, type OpenAiSubscriptionStandIn } from './server.ts';

let clock = Date.parse('2026-03-01T10:00:00Z');
let o: OpenAiSubscriptionStandIn;
beforeAll(async () => void (o = await startOpenAiSubscriptionStandIn([], { now: () => clock })));
afterAll(() => o.close());

const postJson = async (path: string, body: unknown) => {
  const r = await fetch(o.issuer + path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return { status: r.status, body: (await r.json()) as any };
};
const postForm = async (form: Record<string, string>) => {
  const r = await fetch(`${o.issuer}/oauth/token`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(form).toString() });
  return { status: r.status, body: (await r.json()) as any };
};

/** A device sign-in up to the tokens. */
async function signIn(): Promise<any> {
  const code = (await postJson('/api/accounts/deviceauth/usercode', { client_id: CODEX_CLIENT_ID })).body;
  o.approve(code.user_code);
  const approved = (await postJson('/api/accounts/deviceauth/token', { device_auth_id: code.device_auth_id, user_code: code.user_code })).body;
  return (await postForm({ grant_type: 'authorization_code', code: approved.authorization_code, redirect_uri: `${o.issuer}/deviceauth/callback`, client_id: CODEX_CLIENT_ID, code_verifier: approved.code_verifier })).body;
}

const codex = (token: string, body: Record<string, unknown>, headers: Record<string, string> = {}) =>
  fetch(`${o.codexBaseUrl}/responses`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'chatgpt-account-id': 'acct-standin-0001', originator: 'codex_cli_rs', 'openai-beta': 'responses=experimental', ...headers },
    body: JSON.stringify({ model: 'gpt-5.5', instructions: 'x', input: [], stream: true, store: false, ...body }),
  });

describe('OpenAI subscription stand-in', () => {
  it('runs the device sign-in: a foreign client is refused, pending is 403, the code exchange checks PKCE and is used once', async () => {
    expect((await postJson('/api/accounts/deviceauth/usercode', { client_id: 'someone-else' })).status).toBe(400);
    const code = (await postJson('/api/accounts/deviceauth/usercode', { client_id: CODEX_CLIENT_ID })).body;
    expect(code).toEqual({ device_auth_id: expect.any(String), user_code: expect.any(String), interval: '5' });
    const poll = () => postJson('/api/accounts/deviceauth/token', { device_auth_id: code.device_auth_id, user_code: code.user_code });
    expect((await poll()).status).toBe(403);
    o.approve(code.user_code);
    const approved = (await poll()).body;
    expect(approved).toEqual({ authorization_code: expect.any(String), code_challenge: expect.any(String), code_verifier: expect.any(String) });
    const exchange = (over: Record<string, string>) => postForm({ grant_type: 'authorization_code', code: approved.authorization_code, redirect_uri: `${o.issuer}/deviceauth/callback`, client_id: CODEX_CLIENT_ID, code_verifier: approved.code_verifier, ...over });
    expect((await exchange({ code_verifier: 'wrong' })).status).toBe(400);
    // A refused exchange used the code up, as an authorization server must; a fresh sign-in works.
    expect((await exchange({})).status).toBe(400);
    const tokens = await signIn();
    expect(tokens).toMatchObject({ access_token: expect.any(String), refresh_token: expect.any(String), id_token: expect.any(String), expires_in: 3600 });
    const { payload } = await jwtVerify(tokens.access_token, createRemoteJWKSet(new URL(`${o.issuer}/.well-known/jwks.json`)), { currentDate: new Date(clock) });
    expect(payload['https://api.openai.com/auth']).toMatchObject({ chatgpt_account_id: 'acct-standin-0001' });
  });

  it('rotates refresh tokens and refuses a reused one', async () => {
    const tokens = await signIn();
    const refresh = () => postForm({ grant_type: 'refresh_token', refresh_token: tokens.refresh_token, client_id: CODEX_CLIENT_ID });
    const next = await refresh();
    expect(next.status).toBe(200);
    expect(next.body.refresh_token).not.toBe(tokens.refresh_token);
    expect((await refresh()).status).toBe(401);
  });

  it('answers a Codex call only with a live token, its account header, streaming on, store off and no refused parameter', async () => {
    const { access_token: token } = await signIn();
    o.push({ content: 'hello there' });
    const ok = await codex(token, {});
    expect(ok.status).toBe(200);
    const text = await ok.text();
    expect(text).toContain('event: response.output_text.delta');
    expect(text).toMatch(/event: response.completed\ndata: .*"output":\[\]/);
    expect((await codex(token, { stream: false })).status).toBe(400);
    expect((await codex(token, { store: true })).status).toBe(400);
    expect((await codex(token, { max_output_tokens: 5 })).status).toBe(400);
    expect((await codex(token, {}, { 'chatgpt-account-id': 'acct-other' })).status).toBe(403);
    expect((await codex('not-a-jwt', {})).status).toBe(401);
    clock += 3600_000;
    expect((await codex(token, {})).status).toBe(401);
    expect(o.refused.map((r) => r.status)).toEqual([400, 400, 400, 403, 401, 401]);
    expect(o.remaining()).toBe(0);
  });
});
