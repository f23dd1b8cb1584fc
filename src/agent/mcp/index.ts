// The MCP servers of one conversation (public face of src/agent/mcp):
//   McpSource                 servers from one place (agent.mcp_config, a plugin's .mcp.json) with its variables
//   ConversationMcp.connect   fills placeholders, opens every server, lists tools as agent tools
//   ConversationMcp.close     ends every connection (stdio children stop)
// Tool names follow OpenHands (fastmcp): the MCP tool's own name with one server, and
// `<server>_<tool>` when several servers are configured (fastmcp prefixes mounted servers).
import { createLogger } from '../../util/log.ts';
import type { AgentTool } from '../tools/tool.ts';
import type { OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import { agentMcpServers, McpConfigError, mergeServers, resolveServer, serversOf, type McpOAuthConfig, type McpServerConfig, type McpServers } from './config.ts';
import { McpConnectError, McpConnection } from './connection.ts';
import { mcpTool } from './tool.ts';

export { agentMcpServers, authHeaders, McpConfigError, mergeServers, resolveServer, serversOf, fillPlaceholders, type McpOAuthConfig, type McpServerConfig, type McpServers } from './config.ts';
export { McpConnectError, McpConnection } from './connection.ts';
export { expandSecrets, mcpTool } from './tool.ts';

const log = createLogger('mcp');

export interface McpSource {
  /** Where the servers come from, for messages (`agent.mcp_config`, `plugin 'x' .mcp.json`). */
  origin: string;
  servers: McpServers;
  /** Variables filled before secrets (a plugin's root directory). */
  vars?: Readonly<Record<string, string>>;
}

/** `agent.mcp_config` of a start request as a source (none when absent); throws McpConfigError for a wrong shape. */
export function requestMcpSource(mcpConfig: unknown): McpSource[] {
  const servers = agentMcpServers(mcpConfig);
  return Object.keys(servers).length ? [{ origin: 'agent.mcp_config', servers }] : [];
}

/**
 * Resolves every server of the sources (later sources override earlier ones by server name) with
 * its placeholders filled. Throws McpConfigError before anything connects.
 */
export function resolveSources(sources: readonly McpSource[], secrets: Readonly<Record<string, string>>): Map<string, McpServerConfig> {
  const byName = new Map<string, { spec: Record<string, unknown>; source: McpSource }>();
  for (const source of sources) for (const [name, spec] of Object.entries(mergeServers(source.servers))) byName.set(name, { spec, source });
  const out = new Map<string, McpServerConfig>();
  for (const [name, { spec, source }] of byName) {
    try {
      out.set(name, resolveServer(name, spec, (n) => (Object.hasOwn(secrets, n) ? secrets[n] : undefined), source.vars));
    } catch (err) {
      if (err instanceof McpConfigError) throw new McpConfigError(`${source.origin}: ${err.message}`);
      throw err;
    }
  }
  return out;
}

/** Model APIs accept function names of [A-Za-z0-9_-], at most 64 long (OpenAI); the call still uses the MCP name. */
export function modelToolName(name: string): string {
  return name.replace(/[^A-Za-z0-9_-]/g, '_').slice(0, 64);
}

/** The OAuth client for a server with `auth.strategy: "oauth2"` (the host's token store, no consent asked). */
export type McpOAuthProviders = (serverUrl: string, oauth: McpOAuthConfig) => OAuthClientProvider;

export class ConversationMcp {
  readonly #secrets: () => Readonly<Record<string, string>>;
  readonly #cwd: string;
  readonly #oauth: McpOAuthProviders | undefined;
  #connections: McpConnection[] = [];
  #tools: AgentTool[] = [];

  /** `oauth`: absent (a host without a token store), an oauth2 server is reached without tokens and refuses. */
  constructor(opts: { cwd: string; secrets: () => Readonly<Record<string, string>>; oauth?: McpOAuthProviders | undefined }) {
    this.#cwd = opts.cwd;
    this.#secrets = opts.secrets;
    this.#oauth = opts.oauth;
  }

  get connected(): boolean {
    return this.#connections.length > 0 && this.#connections.every((c) => !c.closed);
  }

  get tools(): readonly AgentTool[] {
    return this.#tools;
  }

  /**
   * Opens every server of the sources and returns their tools. Throws McpConfigError (bad
   * configuration, unknown placeholder) or McpConnectError (a server that cannot be started or
   * reached); then nothing stays open. Messages may contain secret values: mask before showing.
   */
  async connect(sources: readonly McpSource[], signal?: AbortSignal): Promise<AgentTool[]> {
    await this.close();
    const servers = resolveSources(sources, this.#secrets());
    if (servers.size === 0) return [];
    const authProvider = (cfg: McpServerConfig) => (cfg.kind !== 'stdio' && cfg.oauth && this.#oauth ? { authProvider: this.#oauth(cfg.url, cfg.oauth) } : {});
    const opened = await Promise.allSettled([...servers].map(([name, cfg]) => McpConnection.open(name, cfg, { cwd: this.#cwd, ...(signal ? { signal } : {}), ...authProvider(cfg) })));
    const ok = opened.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
    const failed = opened.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (failed) {
      await Promise.all(ok.map((c) => c.close()));
      throw failed.reason instanceof McpConnectError ? failed.reason : new McpConnectError(String(failed.reason));
    }
    this.#connections = ok;
    const prefixed = ok.length > 1;
    const tools: AgentTool[] = [];
    for (const conn of ok) {
      for (const tool of conn.tools) {
        const name = modelToolName(prefixed ? `${conn.name}_${tool.name}` : tool.name);
        if (tools.some((t) => t.name === name)) {
          log.warn({ server: conn.name, tool: name }, 'MCP tool name already taken; skipped');
          continue;
        }
        tools.push(mcpTool({ name, tool, connection: conn, secrets: this.#secrets }) as AgentTool);
      }
    }
    this.#tools = tools;
    return tools;
  }

  async close(): Promise<void> {
    const conns = this.#connections;
    this.#connections = [];
    await Promise.all(conns.map((c) => c.close()));
  }
}
