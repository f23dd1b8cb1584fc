// Open connections to a conversation's MCP servers (official SDK client): a child process over
// stdio, or a remote server over streamable HTTP (or legacy SSE). Each lists its tools once when
// it connects; close() ends every transport, which stops stdio children (no leaked processes).
// The SDK (with zod and ajv, ≈ 200 modules) is loaded when a conversation first opens an MCP
// server, not at the agent server's start (issue #16: start-up is module loading).
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { CallToolResult, Tool } from '@modelcontextprotocol/sdk/types.js';
import { createLogger } from '../../util/log.ts';
import type { McpServerConfig } from './config.ts';

const log = createLogger('mcp');

/** Connecting and listing tools: OpenHands waits 30 s by default. */
export const CONNECT_TIMEOUT_MS = 30_000;
/** One tool call (OpenHands MCP_TOOL_TIMEOUT_SECONDS). */
export const CALL_TIMEOUT_MS = 300_000;
/** Keep this much of a stdio server's stderr for error messages. */
const STDERR_TAIL = 2000;

/** A server could not be reached or did not answer the handshake. The message is masked by the caller. */
export class McpConnectError extends Error {}

export interface ServerTool {
  server: string;
  tool: Tool;
}

export class McpConnection {
  readonly name: string;
  readonly #client: Client;
  readonly #transport: Transport;
  #stderr = '';
  #closed = false;
  tools: Tool[] = [];

  private constructor(name: string, client: Client, transport: Transport) {
    this.name = name;
    this.#client = client;
    this.#transport = transport;
  }

  /** Connects and lists the tools; on failure everything opened is closed again and McpConnectError thrown. */
  static async open(name: string, cfg: McpServerConfig, opts: { cwd: string; signal?: AbortSignal; timeoutMs?: number; authProvider?: OAuthClientProvider }): Promise<McpConnection> {
    const { Client } = await import('@modelcontextprotocol/sdk/client/index.js');
    const transport = await makeTransport(cfg, opts.cwd, opts.authProvider);
    const client = new Client({ name: 'agentyard', version: '1.0.0' });
    const conn = new McpConnection(name, client, transport);
    if (cfg.kind === 'stdio') {
      (transport as StdioClientTransport).stderr?.on('data', (chunk: Buffer) => {
        conn.#stderr = (conn.#stderr + chunk.toString('utf8')).slice(-STDERR_TAIL);
      });
    }
    const timeout = opts.timeoutMs ?? CONNECT_TIMEOUT_MS;
    try {
      await client.connect(transport, { timeout, ...(opts.signal ? { signal: opts.signal } : {}) });
      const listed: Tool[] = [];
      let cursor: string | undefined;
      do {
        const page = await client.listTools(cursor ? { cursor } : {}, { timeout, ...(opts.signal ? { signal: opts.signal } : {}) });
        listed.push(...page.tools);
        cursor = page.nextCursor;
      } while (cursor);
      conn.tools = listed;
      return conn;
    } catch (err) {
      await conn.close();
      const stderr = conn.#stderr.trim();
      throw new McpConnectError(`MCP server '${name}' could not be started or reached: ${err instanceof Error ? err.message : String(err)}${stderr ? ` (stderr: ${stderr})` : ''}`, { cause: err });
    }
  }

  get closed(): boolean {
    return this.#closed;
  }

  /** Calls one tool. Throws on transport or protocol failures; a tool's own failure comes back with isError. */
  async call(tool: string, args: Record<string, unknown>, signal?: AbortSignal): Promise<CallToolResult> {
    if (this.#closed) throw new McpConnectError(`MCP server '${this.name}' is not connected`);
    const result = await this.#client.callTool({ name: tool, arguments: args }, undefined, { timeout: CALL_TIMEOUT_MS, ...(signal ? { signal } : {}) });
    return result as CallToolResult;
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    try {
      await this.#client.close();
    } catch (err) {
      log.debug({ err: err instanceof Error ? err.message : String(err), server: this.name }, 'closing MCP client failed');
    }
    // The client closes its transport; closing again is a no-op, and covers a connect that never finished.
    await this.#transport.close().catch(() => undefined);
  }
}

/** `authProvider`: OAuth for a remote server (the SDK refreshes and authorizes with it on a 401). */
async function makeTransport(cfg: McpServerConfig, cwd: string, authProvider?: OAuthClientProvider): Promise<Transport> {
  if (cfg.kind === 'stdio') {
    const { getDefaultEnvironment, StdioClientTransport } = await import('@modelcontextprotocol/sdk/client/stdio.js');
    // Only the SDK's safe defaults (PATH, HOME, ...) plus what the configuration sets: never the
    // agent server's own environment, which holds the model and session keys.
    return new StdioClientTransport({ command: cfg.command, args: cfg.args, env: { ...getDefaultEnvironment(), ...cfg.env }, cwd: cfg.cwd ?? cwd, stderr: 'pipe' });
  }
  const requestInit: RequestInit = { headers: cfg.headers };
  if (cfg.kind === 'sse') {
    const { SSEClientTransport } = await import('@modelcontextprotocol/sdk/client/sse.js');
    return new SSEClientTransport(new URL(cfg.url), { requestInit, ...(authProvider ? { authProvider } : {}), eventSourceInit: { fetch: (u, init) => fetch(u, { ...init, headers: { ...(init?.headers as Record<string, string>), ...cfg.headers } }) } });
  }
  const { StreamableHTTPClientTransport } = await import('@modelcontextprotocol/sdk/client/streamableHttp.js');
  return new StreamableHTTPClientTransport(new URL(cfg.url), { requestInit, ...(authProvider ? { authProvider } : {}) });
}
