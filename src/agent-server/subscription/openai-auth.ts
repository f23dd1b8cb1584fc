// The issuer side of a ChatGPT sign-in (auth.openai.com, or what OH_OPENAI_AUTH_ISSUER names), as
// OpenHands 1.58 speaks to it: a device code for the Codex CLI's public client, a device token that
// carries an authorization code with its PKCE verifier once the user approved, the OAuth code
// exchange and refresh, and the access token checked against the issuer's JWKS before its account id
// is used. Loaded with the first sign-in or subscription call (jose is not needed at start).
import { createRemoteJWKSet, jwtVerify } from 'jose';
import { BadGateway } from '../../api/errors.ts';

/** OpenAI's public OAuth client id of the Codex CLI (OpenHands signs in as it). */
export const CLIENT_ID = 'app_EMoamEEZ73f0CkXaXp7hrann';
/** How long a device sign-in may wait for the user (OpenHands: 15 minutes). */
export const DEVICE_CODE_TIMEOUT_MS = 15 * 60_000;
/** A cached JWKS is fetched again after an hour (OpenHands), or at once for an unknown key id (jose). */
const JWKS_MAX_AGE_MS = 60 * 60_000;
const HTTP_TIMEOUT_MS = 30_000;

export interface DeviceCode {
  verificationUrl: string;
  userCode: string;
  deviceAuthId: string;
  intervalSeconds: number;
}

export interface TokenResponse {
  accessToken: string;
  refreshToken: string | undefined;
  expiresInSeconds: number;
}

/** What the verified access token says about the account. */
export interface AccountClaims {
  accountId: string | null;
  email: string | null;
}

export class OpenAiAuth {
  readonly issuer: string;
  readonly #now: () => number;
  readonly #jwks: ReturnType<typeof createRemoteJWKSet>;

  constructor(o: { issuer: string; now: () => number }) {
    this.issuer = o.issuer.replace(/\/+$/, '');
    this.#now = o.now;
    this.#jwks = createRemoteJWKSet(new URL(`${this.issuer}/.well-known/jwks.json`), { cacheMaxAge: JWKS_MAX_AGE_MS, timeoutDuration: HTTP_TIMEOUT_MS });
  }

  async requestDeviceCode(): Promise<DeviceCode> {
    const res = await this.#post('/api/accounts/deviceauth/usercode', { json: { client_id: CLIENT_ID } });
    if (res.status === 404) throw new BadGateway('The OpenAI sign-in server does not offer device-code sign-in (404)');
    if (!res.ok) throw new BadGateway(`The OpenAI sign-in server refused the device code request (HTTP ${res.status})`);
    const data = (await res.json().catch(() => ({}))) as { device_auth_id?: unknown; user_code?: unknown; usercode?: unknown; interval?: unknown };
    const userCode = data.user_code ?? data.usercode;
    const interval = Number.parseInt(String(data.interval ?? 5).trim(), 10);
    if (typeof data.device_auth_id !== 'string' || typeof userCode !== 'string' || !userCode || !Number.isFinite(interval)) {
      throw new BadGateway('The OpenAI sign-in server answered the device code request with an invalid body');
    }
    return { verificationUrl: `${this.issuer}/codex/device`, userCode, deviceAuthId: data.device_auth_id, intervalSeconds: Math.max(interval, 1) };
  }

  /** The authorization code and its PKCE verifier once the user approved; null while they have not (403/404). */
  async pollDeviceCode(dc: DeviceCode): Promise<{ code: string; verifier: string } | null> {
    const res = await this.#post('/api/accounts/deviceauth/token', { json: { device_auth_id: dc.deviceAuthId, user_code: dc.userCode } });
    if (res.status === 403 || res.status === 404) return null;
    if (!res.ok) throw new BadGateway(`The OpenAI sign-in server failed the device sign-in (HTTP ${res.status})`);
    const data = (await res.json().catch(() => ({}))) as { authorization_code?: unknown; code_verifier?: unknown };
    if (typeof data.authorization_code !== 'string' || typeof data.code_verifier !== 'string') throw new BadGateway('The OpenAI sign-in server answered the device sign-in with an invalid body');
    return { code: data.authorization_code, verifier: data.code_verifier };
  }

  exchangeCode(code: string, verifier: string): Promise<TokenResponse> {
    return this.#token({ grant_type: 'authorization_code', code, redirect_uri: `${this.issuer}/deviceauth/callback`, client_id: CLIENT_ID, code_verifier: verifier }, 'Token exchange');
  }

  refresh(refreshToken: string): Promise<TokenResponse> {
    return this.#token({ grant_type: 'refresh_token', refresh_token: refreshToken, client_id: CLIENT_ID }, 'Token refresh');
  }

  /**
   * The account of an access token whose signature the issuer's JWKS verifies and whose time claims
   * hold; null for any other token (OpenHands then sends no account id, and so do we).
   */
  async verify(accessToken: string): Promise<AccountClaims | null> {
    try {
      const { payload } = await jwtVerify(accessToken, this.#jwks, { currentDate: new Date(this.#now()) });
      const auth = payload['https://api.openai.com/auth'] as { chatgpt_account_id?: unknown } | undefined;
      const profile = payload['https://api.openai.com/profile'] as { email?: unknown } | undefined;
      return {
        accountId: typeof auth?.chatgpt_account_id === 'string' ? auth.chatgpt_account_id : null,
        email: typeof profile?.email === 'string' ? profile.email : typeof payload['email'] === 'string' ? payload['email'] : null,
      };
    } catch {
      return null;
    }
  }

  async #token(form: Record<string, string>, what: string): Promise<TokenResponse> {
    const res = await this.#post('/oauth/token', { form });
    // Never the body: an error answer may echo what was sent.
    if (!res.ok) throw new BadGateway(`${what} with the OpenAI sign-in server failed (HTTP ${res.status})`);
    const data = (await res.json().catch(() => ({}))) as { access_token?: unknown; refresh_token?: unknown; expires_in?: unknown };
    if (typeof data.access_token !== 'string' || !data.access_token) throw new BadGateway(`${what} with the OpenAI sign-in server returned no access token`);
    return {
      accessToken: data.access_token,
      refreshToken: typeof data.refresh_token === 'string' && data.refresh_token ? data.refresh_token : undefined,
      expiresInSeconds: typeof data.expires_in === 'number' && data.expires_in > 0 ? data.expires_in : 3600,
    };
  }

  async #post(path: string, body: { json: unknown } | { form: Record<string, string> }): Promise<Response> {
    const init: RequestInit = 'json' in body
      ? { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body.json) }
      : { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(body.form).toString() };
    try {
      return await fetch(`${this.issuer}${path}`, { ...init, signal: AbortSignal.timeout(HTTP_TIMEOUT_MS) });
    } catch (err) {
      throw new BadGateway(`The OpenAI sign-in server (${this.issuer}) could not be reached: ${(err as Error).message}`, { cause: err });
    }
  }
}
