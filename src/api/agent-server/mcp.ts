// /api/mcp (OpenHands agent_server/mcp_router.py): test one candidate MCP server configuration
// (connect, list its tools, optionally call one read-only tool) and authorize an OAuth MCP server.
// Schema and type share a name.
//
// Deliberate difference: OpenHands returns the OAuth tokens it acquired in `oauth_state` (plain text
// without OH_SECRET_KEY) for the client to store. This agent server keeps them itself (sealed, see
// src/agent-server/mcp/token-store.ts) and `oauth_state` carries only what is not secret (the
// registered client's public metadata, the expiry): a sandbox is hostile, and an HTTP response
// passes through logs and UIs.
import Type, { type Static } from 'typebox';
import { Nullable } from '../events/common.ts';

const StringMap = Type.Record(Type.String(), Type.String(), { default: {} });

export const McpStdioServerSpec = Type.Object({
  type: Type.Literal('stdio'),
  command: Type.String({ minLength: 1, description: 'Executable to invoke' }),
  args: Type.Optional(Type.Array(Type.String(), { default: [] })),
  env: Type.Optional(StringMap),
  cwd: Nullable(Type.String()),
});
export type McpStdioServerSpec = Static<typeof McpStdioServerSpec>;

/** `auth` of a remote server, by `strategy` (OpenHands MCPAuthCredential). Secrets are never echoed. */
export const McpOAuthAuthentication = Type.Object(
  {
    type: Type.Literal('oauth'),
    client_auth_method: Nullable(Type.Union([Type.Literal('none'), Type.Literal('client_secret_post'), Type.Literal('client_secret_basic'), Type.Literal('private_key_jwt')])),
    scopes: Nullable(Type.Union([Type.String(), Type.Array(Type.String())])),
    client_name: Nullable(Type.String()),
    client_metadata_url: Nullable(Type.String()),
    client_id: Nullable(Type.String()),
    client_secret: Nullable(Type.String()),
    additional_client_metadata: Nullable(Type.Record(Type.String(), Type.Unknown())),
  },
  { additionalProperties: false },
);
export type McpOAuthAuthentication = Static<typeof McpOAuthAuthentication>;

/** OAuth state: what OpenHands keeps under `auth.state` (tokens, registered client, expiry in epoch seconds). */
export const McpOAuthState = Type.Object({
  tokens: Nullable(Type.Record(Type.String(), Type.Unknown())),
  client_info: Nullable(Type.Record(Type.String(), Type.Unknown())),
  token_expires_at: Nullable(Type.Number()),
});
export type McpOAuthState = Static<typeof McpOAuthState>;

export const McpAuthCredential = Type.Union([
  Type.Object({ strategy: Type.Literal('none') }),
  Type.Object({ strategy: Type.Literal('api_key'), value: Nullable(Type.String()), header_name: Nullable(Type.String()) }),
  Type.Object({ strategy: Type.Literal('bearer'), value: Nullable(Type.String()) }),
  Type.Object({ strategy: Type.Literal('basic'), username: Type.String(), password: Nullable(Type.String()) }),
  Type.Object({ strategy: Type.Literal('header'), headers: Type.Optional(StringMap) }),
  Type.Object({ strategy: Type.Literal('oauth2'), authentication: Nullable(McpOAuthAuthentication), state: Nullable(McpOAuthState) }),
]);
export type McpAuthCredential = Static<typeof McpAuthCredential>;

export const McpRemoteServerSpec = Type.Object({
  type: Type.Union([Type.Literal('http'), Type.Literal('shttp'), Type.Literal('streamable-http'), Type.Literal('sse')]),
  url: Type.String({ minLength: 1 }),
  headers: Type.Optional(StringMap),
  auth: Nullable(McpAuthCredential),
  timeout: Nullable(Type.Number()),
  sse_read_timeout: Nullable(Type.Number()),
  keep_alive: Nullable(Type.Boolean()),
});
export type McpRemoteServerSpec = Static<typeof McpRemoteServerSpec>;

export const McpToolCallSpec = Type.Object({
  name: Type.String({ minLength: 1, description: 'Name of the tool to invoke' }),
  arguments: Type.Optional(Type.Record(Type.String(), Type.Unknown(), { default: {}, description: 'Arguments passed to the tool unchanged.' })),
});
export type McpToolCallSpec = Static<typeof McpToolCallSpec>;

/**
 * Body of `POST /api/mcp/test` and `/api/mcp/oauth/start`. `server` is the legacy spec (`type`) or
 * an OpenHands settings MCPServer (`transport`, or none: stdio with `command`, else http), which
 * the route turns into the legacy spec before it is checked (as mcp_router.py does).
 */
export const McpTestRequest = Type.Object({
  name: Type.Optional(Type.String({ minLength: 1, maxLength: 128, default: 'test-server', description: 'Name of the server in messages only' })),
  server: Type.Union([McpStdioServerSpec, McpRemoteServerSpec]),
  timeout: Type.Optional(Type.Number({ exclusiveMinimum: 0, maximum: 120, default: 15, description: 'Seconds to wait for connection + tools/list to complete.' })),
  tool_call: Nullable(McpToolCallSpec),
});
export type McpTestRequest = Static<typeof McpTestRequest>;

export const McpToolCallResult = Type.Object({
  is_error: Type.Boolean({ description: 'The MCP-level isError flag of the result.' }),
  text: Type.String({ description: 'Concatenated text content of the result.' }),
});
export type McpToolCallResult = Static<typeof McpToolCallResult>;

export const McpErrorKind = Type.Union([Type.Literal('timeout'), Type.Literal('connection'), Type.Literal('unknown')]);
export type McpErrorKind = Static<typeof McpErrorKind>;

export const McpTestSuccess = Type.Object({
  ok: Type.Literal(true),
  tools: Type.Array(Type.String()),
  tool_result: Type.Optional(McpToolCallResult),
  /** Without secrets here: the tokens stay with the agent server (see the head of this file). */
  oauth_state: Type.Optional(McpOAuthState),
});
export type McpTestSuccess = Static<typeof McpTestSuccess>;

export const McpTestFailure = Type.Object({
  ok: Type.Literal(false),
  error: Type.String({ description: 'Human-readable error message.' }),
  error_kind: McpErrorKind,
});
export type McpTestFailure = Static<typeof McpTestFailure>;

/** Always 200: a failure is the expected outcome of validating a user-supplied configuration. */
export const McpTestResponse = Type.Union([McpTestSuccess, McpTestFailure]);
export type McpTestResponse = Static<typeof McpTestResponse>;

export const McpOAuthStartResponse = Type.Object({
  ok: Type.Boolean(),
  job_id: Type.Optional(Type.String()),
  authorization_url: Type.Optional(Type.String()),
  error: Type.Optional(Type.String()),
  error_kind: Type.Optional(McpErrorKind),
});
export type McpOAuthStartResponse = Static<typeof McpOAuthStartResponse>;

export const McpOAuthJobStatus = Type.Union([Type.Literal('pending'), Type.Literal('authorizing'), Type.Literal('succeeded'), Type.Literal('failed')]);
export type McpOAuthJobStatus = Static<typeof McpOAuthJobStatus>;

export const McpOAuthStatusResponse = Type.Object({
  ok: Type.Boolean(),
  status: McpOAuthJobStatus,
  job_id: Type.String(),
  authorization_url: Type.Optional(Type.String()),
  callback_ready: Type.Boolean(),
  tools: Type.Optional(Type.Array(Type.String())),
  tool_result: Type.Optional(McpToolCallResult),
  oauth_state: Type.Optional(McpOAuthState),
  error: Type.Optional(Type.String()),
  error_kind: Type.Optional(McpErrorKind),
});
export type McpOAuthStatusResponse = Static<typeof McpOAuthStatusResponse>;

/** The URL the browser was redirected to after consent (copied from its address bar). */
export const McpOAuthCallbackRequest = Type.Object({ callback_url: Type.String({ minLength: 1 }) });
export type McpOAuthCallbackRequest = Static<typeof McpOAuthCallbackRequest>;
