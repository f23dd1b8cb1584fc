// A scripted stand-in for OpenAI's ChatGPT-subscription services, over real HTTP: the device-code
// sign-in of auth.openai.com (user code, device token, OAuth token endpoint with PKCE and refresh,
// JWKS) and the Codex Responses endpoint of chatgpt.com. Those are OpenAI's model service, which
// tests cannot reach; this plays it the way OpenHands 1.58 expects it to answer (it is the model
// provider's stand-in, beside scripted-llm, whose replies it plays in the Responses format).
//
// What it checks, as the real service refuses otherwise: the public OAuth client id, the device
// callback redirect URI, the PKCE verifier against the challenge, one-time codes and rotating
// refresh tokens, and on the Codex endpoint a live signed bearer token with its account id header,
// `stream: true`, `store: false`, and none of the parameters Codex refuses (temperature,
// max_output_tokens, include, reasoning). Tokens are real RS256 JWTs signed with a key it makes,
// published at /.well-known/jwks.json. Time comes from `now`, so a test can let a token expire.
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, jwtVerify, SignJWT, type CryptoKey, type JWK } from 'jose';
import { json, pieces, readBody, type ScriptedReply } from '../scripted-llm/server.ts';

/** OpenAI's public OAuth client id of the Codex CLI, which OpenHands signs in as. */
export const CODEX_CLIENT_ID = 'app_EMoamEEZ73f0CkXaXp7hrann';

export interface CodexRequest {
  body: Record<string, unknown>;
  headers: Record<string, string | string[] | undefined>;
  /** The claims of the bearer token the call carried (verified). */
  claims: Record<string, unknown>;
}

export type CodexStep = ScriptedReply | ((request: CodexRequest) => ScriptedReply | Promise<ScriptedReply>);

export interface Account {
  accountId: string;
  email: string;
}

export interface AuthRequest {
  path: string;
  body: Record<string, string>;
  headers: Record<string, string | string[] | undefined>;
}

export interface OpenAiSubscriptionStandIn {
  /** What replaces https://auth.openai.com. */
  issuer: string;
  /** What replaces https://chatgpt.com/backend-api/codex. */
  codexBaseUrl: string;
  /** Requests to the sign-in endpoints, in order (device code, device token, OAuth token). */
  authRequests: AuthRequest[];
  /** Codex calls that passed the checks, in order. */
  requests: CodexRequest[];
  /** Codex calls refused (status and why), in order. */
  refused: { status: number; reason: string }[];
  /** Every access and refresh token handed out: none may show up in clear anywhere. */
  issued: string[];
  /** The user enters `userCode` at the verification page and approves, as `account`. */
  approve(userCode: string, account?: Account): void;
  /** The issuer forgets a refresh token (revoked, or used by another client): refreshing with it fails. */
  revoke(refreshToken: string): void;
  push(...steps: CodexStep[]): void;
  remaining(): number;
  close(): Promise<void>;
}

export interface StandInOptions {
  /** Milliseconds since the epoch (default Date.now): token lifetimes and checks use it. */
  now?: () => number;
  /** Access token lifetime in seconds (default 3600). */
  expiresIn?: number;
  /** Polling interval it asks for, in seconds (default 5), sent as a string as OpenAI does. */
  interval?: number;
}

const DEFAULT_ACCOUNT: Account = { accountId: 'acct-standin-0001', email: 'user@example.test' };
/** Parameters the Codex endpoint refuses (OpenHands 1.58 leaves them out for a subscription). */
const REFUSED_PARAMS = ['temperature', 'max_output_tokens', 'include', 'reasoning', 'prompt_cache_retention'];

interface Pending {
  userCode: string;
  approved?: Account;
  /** Set once approved: the code the device token answer carries, with its PKCE pair. */
  code?: string;
  verifier?: string;
}

export async function startOpenAiSubscriptionStandIn(script: CodexStep[] = [], opts: StandInOptions = {}): Promise<OpenAiSubscriptionStandIn> {
  const now = opts.now ?? (() => Date.now());
  const expiresIn = opts.expiresIn ?? 3600;
  const steps = [...script];
  const authRequests: AuthRequest[] = [];
  const requests: CodexRequest[] = [];
  const refused: { status: number; reason: string }[] = [];
  const issued: string[] = [];
  const { privateKey, publicKey } = await generateKeyPair('RS256');
  const kid = randomUUID();
  const jwk: JWK = { ...(await exportJWK(publicKey)), kid, alg: 'RS256', use: 'sig' };
  const devices = new Map<string, Pending>();
  /** Authorization code → account and PKCE challenge; each is used once. */
  const codes = new Map<string, { account: Account; challenge: string }>();
  /** Live refresh tokens → account; a used one is gone (rotation). */
  const refreshTokens = new Map<string, Account>();
  let issuer = '';

  const mint = async (account: Account) => {
    const iat = Math.floor(now() / 1000);
    const access = await sign(privateKey, kid, {
      iss: issuer,
      aud: ['https://api.openai.com/v1'],
      sub: `user-${account.accountId}`,
      client_id: CODEX_CLIENT_ID,
      scp: ['openid', 'profile', 'email', 'offline_access'],
      'https://api.openai.com/auth': { chatgpt_account_id: account.accountId, chatgpt_plan_type: 'plus' },
      'https://api.openai.com/profile': { email: account.email, email_verified: true },
      iat,
      exp: iat + expiresIn,
    });
    const idToken = await sign(privateKey, kid, { iss: issuer, aud: CODEX_CLIENT_ID, sub: `user-${account.accountId}`, email: account.email, iat, exp: iat + expiresIn });
    const refresh = `rt_${randomBytes(24).toString('base64url')}`;
    refreshTokens.set(refresh, account);
    issued.push(access, refresh);
    return { id_token: idToken, access_token: access, refresh_token: refresh, expires_in: expiresIn, token_type: 'Bearer', scope: 'openid profile email offline_access' };
  };

  const refuse = (res: ServerResponse, status: number, reason: string, body: unknown) => {
    refused.push({ status, reason });
    json(res, status, body);
  };

  const server = createServer(async (req, res) => {
    const path = new URL(req.url ?? '/', 'http://localhost').pathname;
    try {
      if (req.method === 'GET' && path === '/.well-known/jwks.json') return json(res, 200, { keys: [jwk] });
      if (req.method !== 'POST') return json(res, 404, { error: 'not_found' });
      const text = await readBody(req);
      if (path === '/backend-api/codex/responses') return await codex(res, req.headers, text);
      const form = (req.headers['content-type'] ?? '').startsWith('application/x-www-form-urlencoded');
      const body = form ? Object.fromEntries(new URLSearchParams(text)) : (JSON.parse(text || '{}') as Record<string, string>);
      authRequests.push({ path, body, headers: req.headers });
      if (path === '/api/accounts/deviceauth/usercode') {
        if (body['client_id'] !== CODEX_CLIENT_ID) return json(res, 400, { error: 'invalid_client' });
        const deviceAuthId = `deviceauth_${randomUUID()}`;
        const userCode = `${randomBytes(2).toString('hex')}-${randomBytes(3).toString('hex')}`.toUpperCase();
        devices.set(deviceAuthId, { userCode });
        return json(res, 200, { device_auth_id: deviceAuthId, user_code: userCode, interval: String(opts.interval ?? 5) });
      }
      if (path === '/api/accounts/deviceauth/token') {
        const pending = devices.get(body['device_auth_id'] ?? '');
        if (!pending || pending.userCode !== body['user_code']) return json(res, 404, { error: 'deviceauth_not_found' });
        if (!pending.approved) return json(res, 403, { error: 'deviceauth_authorization_pending' });
        devices.delete(body['device_auth_id']!);
        return json(res, 200, { authorization_code: pending.code, code_challenge: challengeOf(pending.verifier!), code_verifier: pending.verifier });
      }
      if (path === '/oauth/token') {
        if (!form) return json(res, 400, { error: 'invalid_request', error_description: 'form-encoded body expected' });
        if (body['client_id'] !== CODEX_CLIENT_ID) return json(res, 401, { error: 'invalid_client' });
        if (body['grant_type'] === 'authorization_code') {
          const grant = codes.get(body['code'] ?? '');
          codes.delete(body['code'] ?? '');
          if (!grant) return json(res, 400, { error: 'invalid_grant', error_description: 'unknown or used code' });
          if (body['redirect_uri'] !== `${issuer}/deviceauth/callback`) return json(res, 400, { error: 'invalid_grant', error_description: 'redirect_uri mismatch' });
          if (challengeOf(body['code_verifier'] ?? '') !== grant.challenge) return json(res, 400, { error: 'invalid_grant', error_description: 'PKCE verification failed' });
          return json(res, 200, await mint(grant.account));
        }
        if (body['grant_type'] === 'refresh_token') {
          const account = refreshTokens.get(body['refresh_token'] ?? '');
          if (!account) return json(res, 401, { error: 'invalid_grant', error_description: 'refresh token unknown or already used' });
          refreshTokens.delete(body['refresh_token']!);
          return json(res, 200, await mint(account));
        }
        return json(res, 400, { error: 'unsupported_grant_type' });
      }
      return json(res, 404, { error: 'not_found' });
    } catch (err) {
      if (!res.headersSent) json(res, 500, { error: 'stand_in_failed', message: (err as Error).message });
    }
  });

  async function codex(res: ServerResponse, headers: Record<string, string | string[] | undefined>, text: string): Promise<void> {
    const auth = String(headers.authorization ?? '');
    if (!auth.startsWith('Bearer ')) return refuse(res, 401, 'no bearer token', { detail: 'Unauthorized' });
    let claims: Record<string, unknown>;
    try {
      ({ payload: claims } = await jwtVerify(auth.slice('Bearer '.length), publicKey, { issuer, currentDate: new Date(now()) }));
    } catch (err) {
      return refuse(res, 401, `token refused: ${(err as Error).message}`, { detail: 'Could not validate credentials' });
    }
    const account = (claims['https://api.openai.com/auth'] as { chatgpt_account_id?: string } | undefined)?.chatgpt_account_id;
    if (headers['chatgpt-account-id'] !== account) return refuse(res, 403, 'chatgpt-account-id does not match the token', { detail: 'Forbidden' });
    if (headers['originator'] !== 'codex_cli_rs' || headers['openai-beta'] !== 'responses=experimental') return refuse(res, 400, 'originator / OpenAI-Beta headers missing', { detail: 'Unsupported client' });
    const body = JSON.parse(text) as Record<string, unknown>;
    if (body['stream'] !== true) return refuse(res, 400, 'stream not true', { detail: 'Stream must be set to true' });
    if (body['store'] !== false) return refuse(res, 400, 'store not false', { detail: 'Store must be set to false' });
    const extra = REFUSED_PARAMS.find((p) => p in body);
    if (extra) return refuse(res, 400, `unsupported parameter ${extra}`, { detail: `Unsupported parameter: ${extra}` });
    if (typeof body['model'] !== 'string' || typeof body['instructions'] !== 'string' || !Array.isArray(body['input'])) return refuse(res, 400, 'model, instructions, input required', { detail: 'Invalid request' });
    const recorded: CodexRequest = { body, headers, claims };
    requests.push(recorded);
    const step = steps.shift();
    if (!step) return json(res, 500, { error: { message: 'The scripted model has no more responses', type: 'script_exhausted' } }, { 'x-should-retry': 'false' });
    const reply = typeof step === 'function' ? await step(recorded) : step;
    if (reply.status) return json(res, reply.status, { error: { message: reply.errorMessage ?? `Scripted status ${reply.status}`, type: 'scripted', code: reply.errorCode ?? null } }, reply.retryAfterMs !== undefined ? { 'retry-after-ms': String(reply.retryAfterMs) } : {});
    streamResponse(res, body['model'] as string, reply, Math.floor(now() / 1000));
  }

  const host = '127.0.0.1';
  await new Promise<void>((ok) => server.listen(0, host, ok));
  issuer = `http://${host}:${(server.address() as AddressInfo).port}`;
  return {
    issuer,
    codexBaseUrl: `${issuer}/backend-api/codex`,
    authRequests,
    requests,
    refused,
    issued,
    approve: (userCode, account = DEFAULT_ACCOUNT) => {
      const pending = [...devices.values()].find((p) => p.userCode === userCode);
      if (!pending) throw new Error(`No device sign-in waits for user code ${userCode}`);
      pending.approved = account;
      pending.code = `ac_${randomBytes(16).toString('base64url')}`;
      pending.verifier = randomBytes(32).toString('base64url');
      codes.set(pending.code, { account, challenge: challengeOf(pending.verifier) });
    },
    revoke: (refreshToken) => void refreshTokens.delete(refreshToken),
    push: (...more) => steps.push(...more),
    remaining: () => steps.length,
    close: () =>
      new Promise<void>((ok) => {
        server.close(() => ok());
        server.closeAllConnections();
      }),
  };
}

const challengeOf = (verifier: string) => createHash('sha256').update(verifier).digest('base64url');

function sign(key: CryptoKey, kid: string, claims: Record<string, unknown>): Promise<string> {
  return new SignJWT(claims).setProtectedHeader({ alg: 'RS256', kid, typ: 'JWT' }).sign(key);
}

/** A scripted reply as the Codex endpoint streams it: items in events, and a completed response with an empty `output`. */
function streamResponse(res: ServerResponse, model: string, reply: ScriptedReply, createdAt: number): void {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  let seq = 0;
  const send = (type: string, data: Record<string, unknown>) => res.write(`event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: seq++, ...data })}\n\n`);
  const id = `resp_${randomUUID().replaceAll('-', '')}`;
  const response = { id, object: 'response', created_at: createdAt, model, status: 'in_progress', output: [] as unknown[] };
  send('response.created', { response });
  send('response.in_progress', { response });
  let index = 0;
  if (reply.reasoning) {
    const item = { type: 'reasoning', id: `rs_${randomUUID().replaceAll('-', '')}`, summary: [] as unknown[] };
    send('response.output_item.added', { output_index: index, item });
    for (const p of pieces(reply.reasoning)) send('response.reasoning_summary_text.delta', { item_id: item.id, output_index: index, summary_index: 0, delta: p });
    send('response.output_item.done', { output_index: index, item: { ...item, summary: [{ type: 'summary_text', text: reply.reasoning }] } });
    index++;
  }
  if (reply.content) {
    const item = { type: 'message', id: `msg_${randomUUID().replaceAll('-', '')}`, role: 'assistant', status: 'in_progress', content: [] as unknown[] };
    send('response.output_item.added', { output_index: index, item });
    send('response.content_part.added', { item_id: item.id, output_index: index, content_index: 0, part: { type: 'output_text', text: '', annotations: [] } });
    for (const p of pieces(reply.content)) send('response.output_text.delta', { item_id: item.id, output_index: index, content_index: 0, delta: p });
    send('response.output_text.done', { item_id: item.id, output_index: index, content_index: 0, text: reply.content });
    const part = { type: 'output_text', text: reply.content, annotations: [] };
    send('response.content_part.done', { item_id: item.id, output_index: index, content_index: 0, part });
    send('response.output_item.done', { output_index: index, item: { ...item, status: 'completed', content: [part] } });
    index++;
  }
  for (const call of reply.toolCalls ?? []) {
    const args = typeof call.arguments === 'string' ? call.arguments : JSON.stringify(call.arguments);
    const item = { type: 'function_call', id: `fc_${randomUUID().replaceAll('-', '')}`, call_id: call.id ?? `call_${randomUUID().replaceAll('-', '').slice(0, 24)}`, name: call.name, arguments: '', status: 'in_progress' };
    send('response.output_item.added', { output_index: index, item });
    for (const p of pieces(args)) send('response.function_call_arguments.delta', { item_id: item.id, output_index: index, delta: p });
    send('response.function_call_arguments.done', { item_id: item.id, output_index: index, arguments: args });
    send('response.output_item.done', { output_index: index, item: { ...item, arguments: args, status: 'completed' } });
    index++;
  }
  const u = reply.usage ?? {};
  const input = u.prompt_tokens ?? 0;
  const output = u.completion_tokens ?? 0;
  send('response.completed', {
    response: {
      ...response,
      status: 'completed',
      usage: { input_tokens: input, input_tokens_details: { cached_tokens: u.cached_tokens ?? 0 }, output_tokens: output, output_tokens_details: { reasoning_tokens: u.reasoning_tokens ?? 0 }, total_tokens: input + output },
    },
  });
  res.end();
}
