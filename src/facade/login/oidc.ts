// The relying party: openid-client (OpenID-certified) does discovery, the authorization code flow
// with PKCE, the ID token's checks (signature, issuer, audience, nonce, expiry) and the end-session
// URL. This file only holds the Configuration and turns claims into an identity.
import * as oidc from 'openid-client';
import { Unavailable } from '../../api/errors.ts';
import type { Logger } from '../../util/log.ts';
import { untrustedTlsCode } from '../../util/tls-errors.ts';
import type { LoginRequest, OidcIdentity } from '../db/logins.ts';
import { isLoopbackHttp, type LoginSettings } from './config.ts';

export const CALLBACK_PATH = '/auth/callback';

/** What the callback learned: who signed in, and the ID token (the hint of a later RP-initiated logout). */
export interface LoginResult {
  identity: OidcIdentity;
  idToken: string | null;
}

export class OidcClient {
  readonly settings: LoginSettings;
  readonly #log: Logger;
  #config: Promise<oidc.Configuration> | undefined;

  constructor(settings: LoginSettings, log: Logger) {
    this.settings = settings;
    this.#log = log;
  }

  get redirectUri(): string {
    if (!this.settings.publicUrl) throw new Error('login: publicUrl is not set (AGENTYARD_PUBLIC_URL)');
    return `${this.settings.publicUrl}${CALLBACK_PATH}`;
  }

  /**
   * Discovery on first use, not at start-up: the provider may come up after this service. A failed
   * discovery is not kept, so the next login tries again.
   */
  async #configuration(): Promise<oidc.Configuration> {
    const s = this.settings;
    this.#config ??= oidc
      .discovery(new URL(s.issuer), s.clientId, s.clientSecret, s.clientSecret ? oidc.ClientSecretBasic(s.clientSecret) : oidc.None(), {
        // Plain http only for a provider on this machine (config.ts refuses it elsewhere).
        ...(isLoopbackHttp(new URL(s.issuer)) ? { execute: [oidc.allowInsecureRequests] } : {}),
        timeout: 10,
      })
      .catch((err: unknown) => {
        this.#config = undefined;
        this.#log.warn({ err, issuer: s.issuer }, 'login: OpenID provider discovery failed');
        // Reached but not trusted (a private CA, usually): no retry helps, the setting does.
        const tls = untrustedTlsCode(err);
        if (tls) {
          throw new Unavailable(
            `The identity provider at ${s.issuer} is not trusted: its TLS certificate could not be verified (${tls}). If it comes from a private CA, give this service that CA (chart value api.caBundle, or NODE_EXTRA_CA_CERTS)`,
            { retryAfterSeconds: 60 },
          );
        }
        throw new Unavailable(`The identity provider at ${s.issuer} cannot be reached; try again shortly`, { retryAfterSeconds: 5 });
      });
    return this.#config;
  }

  /** A fresh request (state, nonce, PKCE verifier) and the provider's URL to send the browser to. */
  async start(returnTo: string): Promise<{ request: LoginRequest; url: URL }> {
    const config = await this.#configuration();
    const codeVerifier = oidc.randomPKCECodeVerifier();
    const request: LoginRequest = { state: oidc.randomState(), nonce: oidc.randomNonce(), codeVerifier, returnTo };
    const url = oidc.buildAuthorizationUrl(config, {
      redirect_uri: this.redirectUri,
      scope: this.settings.scopes,
      code_challenge: await oidc.calculatePKCECodeChallenge(codeVerifier),
      code_challenge_method: 'S256',
      state: request.state,
      nonce: request.nonce,
    });
    return { request, url };
  }

  /** Redeems the code of the callback URL; throws (openid-client's errors) when any check fails. */
  async finish(callbackUrl: URL, request: LoginRequest): Promise<LoginResult> {
    const config = await this.#configuration();
    const tokens = await oidc.authorizationCodeGrant(config, callbackUrl, {
      pkceCodeVerifier: request.codeVerifier,
      expectedState: request.state,
      expectedNonce: request.nonce,
      idTokenExpected: true,
    });
    const claims = tokens.claims()!;
    return { identity: identityOf(claims, this.settings), idToken: tokens.id_token ?? null };
  }

  /** The provider's end-session URL (RP-initiated logout), when it offers one. */
  async endSessionUrl(idToken: string | null, postLogoutRedirect: string): Promise<string | undefined> {
    const config = await this.#configuration().catch(() => undefined);
    if (!config?.serverMetadata().end_session_endpoint) return undefined;
    return oidc
      .buildEndSessionUrl(config, {
        post_logout_redirect_uri: postLogoutRedirect,
        client_id: this.settings.clientId,
        ...(idToken ? { id_token_hint: idToken } : {}),
      })
      .toString();
  }
}

/** A claim by its dotted path (`groups`, `realm_access.roles`). */
function claimAt(claims: Record<string, unknown>, path: string): unknown {
  let v: unknown = claims;
  for (const part of path.split('.')) v = v !== null && typeof v === 'object' ? (v as Record<string, unknown>)[part] : undefined;
  return v;
}

/**
 * The identity of an ID token's claims. The role claim may be a list or one string; a value
 * matches the admin group as written or with a leading "/" (Keycloak's group paths).
 */
export function identityOf(claims: Record<string, unknown>, s: Pick<LoginSettings, 'issuer' | 'roleClaim' | 'adminGroup'>): OidcIdentity {
  const str = (k: string) => (typeof claims[k] === 'string' && claims[k] !== '' ? (claims[k] as string) : undefined);
  const subject = str('sub')!;
  const email = str('email') ?? null;
  let admin: boolean | undefined;
  if (s.adminGroup !== undefined) {
    const raw = claimAt(claims, s.roleClaim);
    const values = (Array.isArray(raw) ? raw : [raw]).filter((v): v is string => typeof v === 'string');
    admin = values.some((v) => v === s.adminGroup || v.replace(/^\//, '') === s.adminGroup);
  }
  return { issuer: str('iss') ?? s.issuer, subject, name: str('name') ?? str('preferred_username') ?? email ?? subject, email, admin };
}
