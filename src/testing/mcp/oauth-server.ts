// An OAuth-protected MCP server for tests, on 127.0.0.1: the official MCP SDK's authorization server
// (mcpAuthRouter: RFC 8414 metadata, RFC 9728 protected-resource metadata, dynamic client
// registration, an authorize endpoint, a token endpoint that checks PKCE, refresh) over an in-memory
// grant store, in front of the test tools at /mcp (requireBearerAuth: 401 with the resource
// metadata URL, as a real MCP server answers). The "user" always consents: GET of the authorization
// URL answers a redirect to the client's redirect URI with a code, as a browser would be sent.
//
// Why not Keycloak (which the login tests run): a JVM that takes tens of seconds to start on these
// machines, one at a time (its dev mode holds a machine-wide lock), and it refuses the anonymous
// dynamic client registration MCP clients rely on unless its Trusted Hosts policy is changed.
// The SDK's router is the reference implementation of the MCP authorization spec, starts in
// milliseconds, and every step of the flow (discovery, registration, PKCE, code, refresh) is real.
import { randomUUID } from 'node:crypto';
import type { Server as HttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createMcpExpressApp } from '@modelcontextprotocol/sdk/server/express.js';
import { InvalidGrantError, InvalidTokenError } from '@modelcontextprotocol/sdk/server/auth/errors.js';
import { requireBearerAuth } from '@modelcontextprotocol/sdk/server/auth/middleware/bearerAuth.js';
import type { OAuthServerProvider } from '@modelcontextprotocol/sdk/server/auth/provider.js';
import { getOAuthProtectedResourceMetadataUrl, mcpAuthRouter } from '@modelcontextprotocol/sdk/server/auth/router.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { OAuthClientInformationFull } from '@modelcontextprotocol/sdk/shared/auth.js';
import { mcpServer } from './server.ts';

export interface OAuthMcpServer {
  /** The MCP endpoint. */
  url: string;
  /** Every access and refresh token issued, for leak checks. */
  issued: string[];
  /** Grants the token endpoint honoured, in order. */
  grants: ('authorization_code' | 'refresh_token')[];
  /** Clients registered (dynamic client registration). */
  clients: Map<string, OAuthClientInformationFull>;
  /** Forgets every access token (refresh tokens stay valid): the next MCP request gets a 401. */
  expireAccessTokens(): void;
  close(): Promise<void>;
}

export async function startOAuthMcpServer(opts: { accessTokenSeconds?: number } = {}): Promise<OAuthMcpServer> {
  const lifetime = opts.accessTokenSeconds ?? 3600;
  const clients = new Map<string, OAuthClientInformationFull>();
  const codes = new Map<string, { clientId: string; challenge: string; redirectUri: string }>();
  const access = new Map<string, { clientId: string; expiresAt: number }>();
  const refresh = new Map<string, string>();
  const issued: string[] = [];
  const grants: OAuthMcpServer['grants'] = [];

  const issue = (clientId: string) => {
    const accessToken = `at-${randomUUID()}`;
    const refreshToken = `rt-${randomUUID()}`;
    access.set(accessToken, { clientId, expiresAt: Math.floor(Date.now() / 1000) + lifetime });
    refresh.set(refreshToken, clientId);
    issued.push(accessToken, refreshToken);
    return { access_token: accessToken, token_type: 'Bearer', expires_in: lifetime, refresh_token: refreshToken };
  };

  const provider: OAuthServerProvider = {
    clientsStore: {
      getClient: (id) => clients.get(id),
      registerClient: (client) => {
        const full = client as OAuthClientInformationFull;
        clients.set(full.client_id, full);
        return full;
      },
    },
    async authorize(client, params, res) {
      const code = randomUUID();
      codes.set(code, { clientId: client.client_id, challenge: params.codeChallenge, redirectUri: params.redirectUri });
      const to = new URL(params.redirectUri);
      to.searchParams.set('code', code);
      if (params.state) to.searchParams.set('state', params.state);
      res.redirect(302, to.href);
    },
    async challengeForAuthorizationCode(_client, code) {
      const c = codes.get(code);
      if (!c) throw new InvalidGrantError('unknown authorization code');
      return c.challenge;
    },
    async exchangeAuthorizationCode(client, code, _verifier, redirectUri) {
      const c = codes.get(code);
      if (!c || c.clientId !== client.client_id) throw new InvalidGrantError('unknown authorization code');
      if (redirectUri !== undefined && redirectUri !== c.redirectUri) throw new InvalidGrantError('redirect_uri differs from the authorization request');
      codes.delete(code);
      grants.push('authorization_code');
      return issue(client.client_id);
    },
    async exchangeRefreshToken(client, refreshToken) {
      if (refresh.get(refreshToken) !== client.client_id) throw new InvalidGrantError('unknown refresh token');
      refresh.delete(refreshToken); // rotated, as many providers do
      grants.push('refresh_token');
      return issue(client.client_id);
    },
    async verifyAccessToken(token) {
      const a = access.get(token);
      if (!a) throw new InvalidTokenError('unknown or expired access token');
      return { token, clientId: a.clientId, scopes: [], expiresAt: a.expiresAt };
    },
  };

  const app = createMcpExpressApp({ host: '127.0.0.1' });
  const http: HttpServer = await new Promise((resolve) => {
    const s = app.listen(0, '127.0.0.1', () => resolve(s));
  });
  const base = `http://127.0.0.1:${(http.address() as AddressInfo).port}`;
  const mcpUrl = new URL('/mcp', base);
  app.use(mcpAuthRouter({ provider, issuerUrl: new URL(base), resourceServerUrl: mcpUrl }));
  app.post('/mcp', requireBearerAuth({ verifier: provider, resourceMetadataUrl: getOAuthProtectedResourceMetadataUrl(mcpUrl) }), (req, res) => {
    const server = mcpServer(() => (req.headers.authorization ?? '').replace(/^Bearer /, '') || undefined);
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
    res.on('close', () => {
      void transport.close();
      void server.close();
    });
    void server.connect(transport).then(() => transport.handleRequest(req, res, req.body));
  });
  return {
    url: mcpUrl.href,
    issued,
    grants,
    clients,
    expireAccessTokens: () => access.clear(),
    close: () =>
      new Promise<void>((resolve) => {
        http.closeAllConnections();
        http.close(() => resolve());
      }),
  };
}
