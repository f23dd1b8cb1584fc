// POST /api/mcp/test's work (OpenHands mcp_router.py _probe_mcp_server): open one candidate MCP
// server with the client conversations use (src/agent/mcp), list its tools, optionally call one
// caller-chosen tool, close it again. Nothing is stored but OAuth state (token-store.ts).
//
// A sandbox is hostile, and the server tested may be anyone's: the request goes out from here with
// only what the request itself gives (a stdio child gets the SDK's safe environment plus the
// request's `env`, never this server's; an HTTP server gets the request's headers only, never the
// session key or the model key).
import { Invalid } from '../../api/errors.ts';
import { parseBody } from '../../api/agent-server/index.ts';
import { McpTestRequest, type McpErrorKind, type McpTestResponse, type McpToolCallResult } from '../../api/agent-server/mcp.ts';
import { authHeaders, McpConnection, type McpServerConfig } from '../../agent/mcp/index.ts';
import { McpAuthorizationRequired, type StoreOAuthProvider } from './oauth-provider.ts';

/**
 * The request body checked as mcp_router.py does: a settings-style `server` (with `transport`, or
 * neither `type` nor `transport`) is first turned into the legacy spec with `type`; then the schema;
 * then the rules across fields.
 */
export function parseMcpTestRequest(body: unknown): McpTestRequest {
  if (body && typeof body === 'object' && !Array.isArray(body)) {
    const server = (body as Record<string, unknown>)['server'];
    if (server && typeof server === 'object' && !Array.isArray(server)) {
      const s = server as Record<string, unknown>;
      if ('authentication' in s) throw new Invalid([{ loc: ['body'], msg: 'Value error, OAuth authentication metadata belongs under auth.authentication.', type: 'value_error' }]);
      if (!('type' in s)) {
        const { transport, ...rest } = s;
        body = { ...body, server: { ...rest, type: transport ?? ('command' in s ? 'stdio' : 'http') } };
      }
    }
  }
  const req = parseBody(McpTestRequest, body);
  req.name = req.name?.trim() || 'test-server';
  const server = req.server;
  if (server.type !== 'stdio' && server.auth && Object.keys(server.headers ?? {}).some((h) => h.toLowerCase() === 'authorization')) {
    throw new Invalid([{ loc: ['body', 'server', server.type], msg: "Value error, 'auth' cannot be combined with an explicit top-level 'Authorization' header; use auth.strategy='header' instead.", type: 'value_error' }]);
  }
  return req;
}

export function serverConfig(req: McpTestRequest): McpServerConfig {
  const s = req.server;
  if (s.type === 'stdio') return { kind: 'stdio', command: s.command, args: s.args ?? [], env: s.env ?? {}, ...(s.cwd ? { cwd: s.cwd } : {}) };
  return { kind: s.type === 'sse' ? 'sse' : 'http', url: s.url, headers: { ...s.headers, ...authHeaders(s.auth) } };
}

export const isOAuth = (req: McpTestRequest) => req.server.type !== 'stdio' && req.server.auth?.strategy === 'oauth2';

function classify(err: unknown): { error: string; error_kind: McpErrorKind } {
  const cause = (err as { cause?: unknown })?.cause;
  const root = cause ?? err;
  if (root instanceof McpAuthorizationRequired) return { error: root.message, error_kind: 'connection' };
  // The SDK's request timeout (McpError RequestTimeout, -32001).
  if ((root as { code?: unknown })?.code === -32001) return { error: `Timed out connecting to the MCP server: ${(root as Error).message}`, error_kind: 'timeout' };
  const message = err instanceof Error ? err.message : String(err);
  return { error: message || 'Failed to connect to MCP server', error_kind: 'connection' };
}

async function callTool(conn: McpConnection, spec: NonNullable<McpTestRequest['tool_call']>, timeoutSeconds: number): Promise<McpToolCallResult> {
  const names = conn.tools.map((t) => t.name);
  if (!names.includes(spec.name)) return { is_error: true, text: `Tool '${spec.name}' not advertised by server (available: ${names.join(', ') || 'none'})` };
  const signal = AbortSignal.timeout(timeoutSeconds * 1000);
  try {
    const result = await conn.call(spec.name, spec.arguments ?? {}, signal);
    const text = (result.content ?? []).flatMap((b) => (b.type === 'text' ? [b.text] : [])).join('\n');
    return { is_error: Boolean(result.isError), text };
  } catch (err) {
    if (signal.aborted || (err as { code?: unknown })?.code === -32001) return { is_error: true, text: `Tool '${spec.name}' call timed out after ${timeoutSeconds} seconds` };
    throw err;
  }
}

export type ProbeResult = McpTestResponse | { needsAuthorization: true };

/**
 * Connects, lists, calls the tool asked for, closes. Never throws: a failure is `ok: false` (200).
 * With an interactive OAuth provider, a server that wants consent gives `needsAuthorization`
 * (the provider then holds the authorization URL).
 */
export async function probeMcpServer(req: McpTestRequest, opts: { cwd: string; oauth?: StoreOAuthProvider }): Promise<ProbeResult> {
  const timeout = req.timeout ?? 15;
  let conn: McpConnection | undefined;
  try {
    conn = await McpConnection.open(req.name ?? 'test-server', serverConfig(req), { cwd: opts.cwd, timeoutMs: timeout * 1000, ...(opts.oauth ? { authProvider: opts.oauth } : {}) });
    const tool_result = req.tool_call ? await callTool(conn, req.tool_call, timeout) : undefined;
    const oauth_state = opts.oauth?.publicState();
    return { ok: true, tools: conn.tools.map((t) => t.name), ...(tool_result ? { tool_result } : {}), ...(oauth_state ? { oauth_state } : {}) };
  } catch (err) {
    if (opts.oauth?.authorizationUrl) return { needsAuthorization: true };
    return { ok: false, ...classify(err) };
  } finally {
    await conn?.close();
  }
}
