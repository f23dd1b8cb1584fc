// The official MCP SDK's OAuth client (discovery, dynamic client registration, PKCE, refresh) backed
// by the agent server's token store. Two modes: non-interactive (POST /api/mcp/test: only stored
// tokens, refreshed when expired; a server that needs consent fails the test) and interactive (an
// /api/mcp/oauth job: the authorization URL is handed to the client, whose browser gives consent).
import { randomBytes, randomInt } from 'node:crypto';
import type { OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import type { OAuthClientInformationMixed, OAuthClientMetadata, OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js';
import type { McpOAuthAuthentication, McpOAuthState } from '../../api/agent-server/mcp.ts';
import { serverKey, type McpOAuthStore } from './token-store.ts';

/** Thrown by a non-interactive provider where consent would be needed. */
export class McpAuthorizationRequired extends Error {}

export interface ProviderOptions {
  store: McpOAuthStore;
  serverUrl: string;
  authentication?: McpOAuthAuthentication | null;
  /** `auth.state` of the request (OpenHands clients keep it): its tokens are used for this probe if the store has none. */
  seed?: McpOAuthState | null;
  /** Interactive: called with the authorization URL instead of opening a browser. */
  onAuthorizationUrl?: (url: URL) => void;
  now?: () => number;
}

export class StoreOAuthProvider implements OAuthClientProvider {
  readonly #o: ProviderOptions;
  readonly #redirect: string;
  #verifier: string | undefined;
  readonly #state = randomBytes(16).toString('hex');
  authorizationUrl: URL | undefined;

  constructor(o: ProviderOptions) {
    this.#o = o;
    // OpenHands' loopback redirect (FastMCP: http://localhost:<port>/callback). Nothing listens on it:
    // the client posts the URL the browser was sent to, and we read the code from it. The port is
    // kept with the registration, which names this exact redirect URI.
    const stored = o.store.get(o.serverUrl)?.redirect_url;
    this.#redirect = stored ?? `http://localhost:${randomInt(20_000, 60_000)}/callback`;
  }

  get redirectUrl(): string {
    return this.#redirect;
  }

  /** The `state` parameter sent with the authorization request, checked in the callback. */
  get expectedState(): string {
    return this.#state;
  }

  state(): string {
    return this.#state;
  }

  get clientMetadata(): OAuthClientMetadata {
    const a = this.#o.authentication;
    const scope = Array.isArray(a?.scopes) ? a.scopes.join(' ') : (a?.scopes ?? undefined);
    return {
      ...(a?.additional_client_metadata ?? {}),
      redirect_uris: [this.#redirect],
      client_name: a?.client_name || 'agentyard',
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      // A public client unless told otherwise: it is never issued a secret to keep.
      token_endpoint_auth_method: a?.client_auth_method ?? 'none',
      ...(scope ? { scope } : {}),
    } as OAuthClientMetadata;
  }

  get clientMetadataUrl(): string | undefined {
    return this.#o.authentication?.client_metadata_url ?? undefined;
  }

  clientInformation(): OAuthClientInformationMixed | undefined {
    const a = this.#o.authentication;
    if (a?.client_id) return { client_id: a.client_id, ...(a.client_secret ? { client_secret: a.client_secret } : {}) };
    return this.#o.store.get(this.#o.serverUrl)?.client_info ?? (this.#o.seed?.client_info as OAuthClientInformationMixed | undefined);
  }

  saveClientInformation(info: OAuthClientInformationMixed): void {
    this.#o.store.update(this.#o.serverUrl, (e) => ({ ...e, client_info: info, redirect_url: this.#redirect }));
  }

  tokens(): OAuthTokens | undefined {
    const stored = this.#o.store.get(this.#o.serverUrl)?.tokens;
    if (stored) return stored;
    const seeded = this.#o.seed?.tokens;
    return typeof seeded?.['access_token'] === 'string' ? (seeded as unknown as OAuthTokens) : undefined;
  }

  saveTokens(tokens: OAuthTokens): void {
    const now = (this.#o.now ?? Date.now)();
    this.#o.store.update(this.#o.serverUrl, (e) => ({
      ...e,
      tokens,
      redirect_url: this.#redirect,
      ...(tokens.expires_in !== undefined ? { token_expires_at: Math.floor(now / 1000) + tokens.expires_in } : { token_expires_at: undefined }),
    }));
  }

  redirectToAuthorization(url: URL): void {
    if (!this.#o.onAuthorizationUrl) {
      throw new McpAuthorizationRequired(`MCP server ${serverKey(this.#o.serverUrl)} must be authorized: it has no stored OAuth tokens, or they could not be refreshed. Authorize it with POST /api/mcp/oauth/start.`);
    }
    this.authorizationUrl = url;
    this.#o.onAuthorizationUrl(url);
  }

  saveCodeVerifier(verifier: string): void {
    this.#verifier = verifier;
  }

  codeVerifier(): string {
    if (!this.#verifier) throw new Error('no PKCE code verifier: the authorization was not started by this job');
    return this.#verifier;
  }

  invalidateCredentials(scope: 'all' | 'client' | 'tokens' | 'verifier' | 'discovery'): void {
    if (scope === 'verifier') this.#verifier = undefined;
    if (scope === 'discovery') return;
    this.#o.store.update(this.#o.serverUrl, (e) => {
      const next = { ...e };
      if (scope === 'all' || scope === 'tokens') {
        delete next.tokens;
        delete next.token_expires_at;
      }
      if (scope === 'all' || scope === 'client') delete next.client_info;
      return next;
    });
  }

  /** The state as a response may show it: no access or refresh token, no client secret. */
  publicState(): McpOAuthState | undefined {
    const e = this.#o.store.get(this.#o.serverUrl);
    if (!e) return undefined;
    const out: McpOAuthState = {};
    if (e.client_info) {
      const { client_secret: _secret, ...rest } = e.client_info as Record<string, unknown>;
      out.client_info = rest;
    }
    if (e.token_expires_at !== undefined) out.token_expires_at = e.token_expires_at;
    return Object.keys(out).length ? out : undefined;
  }
}
