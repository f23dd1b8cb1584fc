// ChatGPT subscription sign-in and use (OpenHands 1.58 `/api/llm/subscription/openai`): a
// device-code sign-in the client drives (start, then poll until the user approved), the tokens kept
// sealed (store/subscription-store.ts), refreshed when about to expire, and handed to the model calls
// of conversations whose LLM has `auth_type: "subscription"` (agent/llm/codex.ts). No answer, event
// or log line carries a token: a client gets `connected`, the expiry and the account's e-mail.
//
// Pending sign-ins live in memory, named by an opaque poll token (OpenAI's device id never leaves the
// server), for 15 minutes. A logout forgets them all, and a poll that was already talking to OpenAI
// when the logout came does not sign in afterwards (an epoch counter, as OpenHands keeps).
import { randomBytes } from 'node:crypto';
import type { SubscriptionDeviceStartResponse, SubscriptionStatusResponse } from '../../api/agent-server/llm.ts';
import { BadGateway, NotFound } from '../../api/errors.ts';
import type { SubscriptionAccess } from '../../agent/llm/codex.ts';
import { ModelCallError } from '../../agent/llm/errors.ts';
import type { Logger } from '../../util/log.ts';
import type { OAuthCredentials, SubscriptionStore } from '../store/subscription-store.ts';
import type { DeviceCode, OpenAiAuth } from './openai-auth.ts';
import { OPENAI_AUTH_ISSUER_ENV, OPENAI_CODEX_BASE_URL_ENV } from './endpoints-env.ts';

export const OPENAI_ISSUER = 'https://auth.openai.com';
export const OPENAI_CODEX_BASE_URL = 'https://chatgpt.com/backend-api/codex';
/** A token this close to its expiry counts as expired, so it cannot lapse during a call (OpenHands: 60 s). */
const EXPIRY_MARGIN_MS = 60_000;
const VENDOR = 'openai';

export interface SubscriptionSettings {
  /** The OAuth issuer (default OPENAI_ISSUER). */
  issuer: string;
  /** The Codex Responses base URL (default OPENAI_CODEX_BASE_URL). */
  codexBaseUrl: string;
}

/** OH_OPENAI_AUTH_ISSUER and OH_OPENAI_CODEX_BASE_URL replace OpenAI's addresses (a proxy, or the tests' stand-in). */
export function subscriptionSettingsFromEnv(env: NodeJS.ProcessEnv): SubscriptionSettings {
  return { issuer: env[OPENAI_AUTH_ISSUER_ENV] || OPENAI_ISSUER, codexBaseUrl: env[OPENAI_CODEX_BASE_URL_ENV] || OPENAI_CODEX_BASE_URL };
}

interface PendingLogin {
  device: DeviceCode;
  expiresAt: number;
  epoch: number;
}

const disconnected = (): SubscriptionStatusResponse => ({ vendor: VENDOR, connected: false, account_email: null, expires_at: null });

export class SubscriptionService {
  readonly #store: SubscriptionStore;
  readonly #settings: SubscriptionSettings;
  readonly #now: () => number;
  readonly #log: Logger;
  #auth: Promise<OpenAiAuth> | undefined;
  readonly #pending = new Map<string, PendingLogin>();
  readonly #inFlight = new Set<string>();
  #epoch = 0;
  /** One refresh at a time: a second caller waits for the first one's tokens (a refresh token is used once). */
  #refreshing: Promise<OAuthCredentials | undefined> | undefined;

  constructor(o: { store: SubscriptionStore; settings: SubscriptionSettings; log: Logger; now?: () => number }) {
    this.#store = o.store;
    this.#settings = o.settings;
    this.#log = o.log;
    this.#now = o.now ?? (() => Date.now());
  }

  /** The issuer client, loaded with the first use (it brings jose). */
  #client(): Promise<OpenAiAuth> {
    return (this.#auth ??= import('./openai-auth.ts').then((m) => new m.OpenAiAuth({ issuer: this.#settings.issuer, now: this.#now })));
  }

  async start(): Promise<SubscriptionDeviceStartResponse> {
    const { DEVICE_CODE_TIMEOUT_MS } = await import('./openai-auth.ts');
    const device = await (await this.#client()).requestDeviceCode();
    const token = randomBytes(32).toString('base64url');
    const expiresAt = this.#now() + DEVICE_CODE_TIMEOUT_MS;
    this.#dropExpired();
    this.#pending.set(token, { device, expiresAt, epoch: this.#epoch });
    this.#log.info({ vendor: VENDOR }, 'subscription device sign-in started');
    return { device_code: token, user_code: device.userCode, verification_uri: device.verificationUrl, verification_uri_complete: null, expires_at: expiresAt, interval_seconds: device.intervalSeconds };
  }

  /** Connected once the user approved; not connected while they have not; 404 for an unknown or expired sign-in. */
  async poll(token: string): Promise<SubscriptionStatusResponse> {
    this.#dropExpired();
    const pending = this.#pending.get(token);
    if (!pending) {
      if (this.#inFlight.has(token)) return disconnected();
      throw new NotFound('Subscription device login not found or expired');
    }
    this.#pending.delete(token);
    this.#inFlight.add(token);
    let credentials: OAuthCredentials | undefined;
    try {
      const auth = await this.#client();
      const approved = await auth.pollDeviceCode(pending.device);
      if (approved) {
        const t = await auth.exchangeCode(approved.code, approved.verifier);
        if (!t.refreshToken) throw new BadGateway('The OpenAI sign-in server returned no refresh token');
        credentials = { accessToken: t.accessToken, refreshToken: t.refreshToken, expiresAt: this.#now() + t.expiresInSeconds * 1000 };
      }
    } finally {
      this.#inFlight.delete(token);
      // Still pending, or the call failed before tokens came: the poll token stays usable (unless a logout came meanwhile).
      if (!credentials && pending.epoch === this.#epoch) this.#pending.set(token, pending);
    }
    if (!credentials || pending.epoch !== this.#epoch) return disconnected();
    this.#store.save(VENDOR, credentials);
    this.#log.info({ vendor: VENDOR }, 'subscription signed in');
    return this.#connected(credentials);
  }

  /** The state now; an expired token is refreshed first, and a refresh that fails reads as not connected. */
  async status(): Promise<SubscriptionStatusResponse> {
    let c: OAuthCredentials | undefined;
    try {
      c = await this.#usable();
    } catch (err) {
      this.#log.warn({ vendor: VENDOR, err: (err as Error).message }, 'subscription token refresh failed');
      return disconnected();
    }
    return c && !this.#expired(c) ? this.#connected(c) : disconnected();
  }

  logout(): SubscriptionStatusResponse {
    this.#epoch++;
    this.#pending.clear();
    if (this.#store.delete(VENDOR)) this.#log.info({ vendor: VENDOR }, 'subscription signed out');
    return disconnected();
  }

  /** What a conversation's model calls use (LlmConfig.subscription). */
  access(): SubscriptionAccess {
    return { vendor: VENDOR, baseUrl: this.#settings.codexBaseUrl, credentials: () => this.#forCall() };
  }

  async #forCall(): Promise<{ accessToken: string; accountId: string | null }> {
    let c: OAuthCredentials | undefined;
    try {
      c = await this.#usable();
    } catch (err) {
      throw new ModelCallError('LLMAuthenticationError', `The ChatGPT subscription token could not be refreshed: ${(err as Error).message}. Sign in again (POST /api/llm/subscription/openai/device/start)`, { cause: err });
    }
    if (!c) throw new ModelCallError('LLMAuthenticationError', 'OpenAI subscription login is required: sign in with POST /api/llm/subscription/openai/device/start');
    const claims = await (await this.#client()).verify(c.accessToken);
    if (!claims?.accountId) this.#log.warn({ vendor: VENDOR }, 'the subscription access token did not verify against the issuer JWKS or names no account: calling without chatgpt-account-id');
    return { accessToken: c.accessToken, accountId: claims?.accountId ?? null };
  }

  /** The stored credentials, refreshed when expired; undefined when nobody is signed in. Throws when a refresh fails. */
  async #usable(): Promise<OAuthCredentials | undefined> {
    const c = this.#store.get(VENDOR);
    if (!c || !this.#expired(c)) return c;
    const epoch = this.#epoch;
    this.#refreshing ??= (async () => {
      try {
        const t = await (await this.#client()).refresh(c.refreshToken);
        const next = { accessToken: t.accessToken, refreshToken: t.refreshToken ?? c.refreshToken, expiresAt: this.#now() + t.expiresInSeconds * 1000 };
        // A logout during the refresh wins: nothing is stored again.
        if (epoch !== this.#epoch) return undefined;
        this.#store.save(VENDOR, next);
        this.#log.info({ vendor: VENDOR }, 'subscription access token refreshed');
        return next;
      } finally {
        this.#refreshing = undefined;
      }
    })();
    return this.#refreshing;
  }

  #expired(c: OAuthCredentials): boolean {
    return c.expiresAt < this.#now() + EXPIRY_MARGIN_MS;
  }

  async #connected(c: OAuthCredentials): Promise<SubscriptionStatusResponse> {
    const claims = await (await this.#client()).verify(c.accessToken);
    return { vendor: VENDOR, connected: true, account_email: claims?.email ?? null, expires_at: c.expiresAt };
  }

  #dropExpired(): void {
    const now = this.#now();
    for (const [token, p] of this.#pending) if (p.expiresAt <= now) this.#pending.delete(token);
  }
}
