// MCP server configuration as OpenHands (and Claude Code's .mcp.json) write it:
//   { "mcpServers": { "<name>": { command, args?, env?, cwd? } | { url, headers?, transport? } } }
// plus `${NAME}` / `${NAME:-default}` placeholders, filled from the conversation's secrets (and
// provided variables such as the plugin root) before any connection opens (spec secret rule 3).

/** A configuration the agent cannot use: unknown placeholder, wrong shape. The message names the server and field, never a secret value. */
export class McpConfigError extends Error {}

export interface StdioServer {
  kind: 'stdio';
  command: string;
  args: string[];
  env: Record<string, string>;
  cwd?: string;
}

export interface RemoteServer {
  kind: 'http' | 'sse';
  url: string;
  headers: Record<string, string>;
  /** `auth.strategy: "oauth2"`: tokens come from the agent server's store (authorized with /api/mcp/oauth). */
  oauth?: McpOAuthConfig;
}

/** What an oauth2 `auth` gives beyond the URL: the client to use, OAuth state an OpenHands client may carry. */
export interface McpOAuthConfig {
  authentication?: Record<string, unknown>;
  state?: Record<string, unknown>;
}

export type McpServerConfig = StdioServer | RemoteServer;

/** Servers by name, as given (placeholders not yet filled). */
export type McpServers = Record<string, Record<string, unknown>>;

/** The `mcpServers` map of an `mcp_config` / `.mcp.json` (empty for none); throws McpConfigError for a wrong shape. */
export function serversOf(config: unknown, where: string): McpServers {
  if (config == null) return {};
  if (typeof config !== 'object' || Array.isArray(config)) throw new McpConfigError(`${where} must be an object with "mcpServers"`);
  const servers = (config as Record<string, unknown>).mcpServers;
  if (servers == null) return {};
  if (typeof servers !== 'object' || Array.isArray(servers)) throw new McpConfigError(`${where}.mcpServers must be an object of servers by name`);
  const out: McpServers = {};
  for (const [name, spec] of Object.entries(servers as Record<string, unknown>)) {
    if (!spec || typeof spec !== 'object' || Array.isArray(spec)) throw new McpConfigError(`${where}.mcpServers.${name} must be an object`);
    out[name] = spec as Record<string, unknown>;
  }
  return out;
}

/**
 * The servers of a conversation's `agent.mcp_config`, in either form a client sends: OpenHands 1.58's
 * server map itself (`{name: server}`, what its Agent takes) or the `{"mcpServers": {...}}` form of
 * 1.44 and its clients (the TypeScript client is generated from 1.44). A server with `enabled: false`
 * is left out (1.58's enabled_mcp_servers). Throws McpConfigError for a wrong shape.
 */
export function agentMcpServers(config: unknown): McpServers {
  if (config == null) return {};
  if (typeof config !== 'object' || Array.isArray(config)) throw new McpConfigError('agent.mcp_config must be an object of servers by name');
  const wrapped = 'mcpServers' in config;
  const servers = serversOf(wrapped ? config : { mcpServers: config }, 'agent.mcp_config');
  return Object.fromEntries(Object.entries(servers).filter(([, spec]) => spec['enabled'] !== false));
}

/** Later sources override earlier ones by server name (OpenHands merges plugin MCP servers by key). */
export function mergeServers(...sources: McpServers[]): McpServers {
  return Object.assign({}, ...sources) as McpServers;
}

const PLACEHOLDER = /\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g;

/**
 * Fills `${NAME}` and `${NAME:-default}` in a string: provided variables first, then secrets, then
 * the default. The agent server's own environment is never read (it holds the model key and the
 * session key). An unknown name without a default is an McpConfigError naming `where` and the name.
 */
export function fillPlaceholders(text: string, lookup: (name: string) => string | undefined, where: string): string {
  return text.replace(PLACEHOLDER, (_m, name: string, fallback: string | undefined) => {
    const v = lookup(name);
    if (v !== undefined) return v;
    if (fallback !== undefined) return fallback;
    throw new McpConfigError(`${where} uses \${${name}}, which is neither a secret of this conversation nor a known variable. Send it in the start request's secrets.`);
  });
}

function stringMap(value: unknown, where: string): Record<string, string> {
  if (value == null) return {};
  if (typeof value !== 'object' || Array.isArray(value)) throw new McpConfigError(`${where} must be an object of strings`);
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
    if (typeof v !== 'string' && typeof v !== 'number' && typeof v !== 'boolean') throw new McpConfigError(`${where}.${k} must be a string`);
    out[k] = String(v);
  }
  return out;
}

/**
 * The headers an `auth` credential of a remote server adds (OpenHands MCPAuthCredential): api_key,
 * bearer, basic, header; none and oauth2 add none (oauth2 goes through the OAuth client).
 */
export function authHeaders(auth: unknown): Record<string, string> {
  if (!auth || typeof auth !== 'object') return {};
  const a = auth as Record<string, unknown>;
  const str = (v: unknown) => (typeof v === 'string' && v ? v : undefined);
  switch (a['strategy']) {
    case 'api_key': {
      const value = str(a['value']);
      const header = str(a['header_name']);
      return value ? (header ? { [header]: value } : { Authorization: `Bearer ${value}` }) : {};
    }
    case 'bearer': {
      const value = str(a['value']);
      return value ? { Authorization: `Bearer ${value}` } : {};
    }
    case 'basic':
      return typeof a['password'] === 'string' ? { Authorization: `Basic ${Buffer.from(`${String(a['username'] ?? '')}:${a['password']}`).toString('base64')}` } : {};
    case 'header':
      return a['headers'] && typeof a['headers'] === 'object' ? Object.fromEntries(Object.entries(a['headers'] as Record<string, unknown>).filter(([, v]) => typeof v === 'string')) as Record<string, string> : {};
    default:
      return {};
  }
}

/** Every string of a JSON value with `fill` applied (the placeholders of an `auth`). */
function fillDeep(value: unknown, fill: (text: string, field: string) => string, field: string): unknown {
  if (typeof value === 'string') return fill(value, field);
  if (Array.isArray(value)) return value.map((v, i) => fillDeep(v, fill, `${field}[${i}]`));
  if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, fillDeep(v, fill, `${field}.${k}`)]));
  return value;
}

/** One server's configuration with its placeholders filled; throws McpConfigError. */
export function resolveServer(name: string, spec: Record<string, unknown>, lookup: (name: string) => string | undefined, vars: Readonly<Record<string, string>> = {}): McpServerConfig {
  const where = `mcpServers.${name}`;
  const look = (n: string) => vars[n] ?? lookup(n);
  const fill = (text: string, field: string) => fillPlaceholders(text, look, `${where}.${field}`);
  const fillMap = (m: Record<string, string>, field: string) => Object.fromEntries(Object.entries(m).map(([k, v]) => [k, fill(v, `${field}.${k}`)]));
  if (typeof spec.command === 'string' && spec.command) {
    const args = spec.args ?? [];
    if (!Array.isArray(args) || args.some((a) => typeof a !== 'string')) throw new McpConfigError(`${where}.args must be an array of strings`);
    return {
      kind: 'stdio',
      command: fill(spec.command, 'command'),
      args: (args as string[]).map((a, i) => fill(a, `args[${i}]`)),
      env: fillMap(stringMap(spec.env, `${where}.env`), 'env'),
      ...(typeof spec.cwd === 'string' ? { cwd: fill(spec.cwd, 'cwd') } : {}),
    };
  }
  if (typeof spec.url === 'string' && spec.url) {
    const transport = spec.transport ?? spec.type ?? 'http';
    if (transport !== 'http' && transport !== 'streamable-http' && transport !== 'sse') throw new McpConfigError(`${where}.transport must be "http", "streamable-http" or "sse"`);
    const url = fill(spec.url, 'url');
    try {
      new URL(url);
    } catch {
      throw new McpConfigError(`${where}.url is not a valid URL`);
    }
    if (spec.auth != null && (typeof spec.auth !== 'object' || Array.isArray(spec.auth))) throw new McpConfigError(`${where}.auth must be an object with "strategy"`);
    const auth = spec.auth == null ? undefined : (fillDeep(spec.auth, fill, 'auth') as Record<string, unknown>);
    const headers = { ...fillMap(stringMap(spec.headers, `${where}.headers`), 'headers'), ...authHeaders(auth) };
    const oauth: McpOAuthConfig | undefined =
      auth?.['strategy'] === 'oauth2'
        ? {
            ...(auth['authentication'] && typeof auth['authentication'] === 'object' ? { authentication: auth['authentication'] as Record<string, unknown> } : {}),
            ...(auth['state'] && typeof auth['state'] === 'object' ? { state: auth['state'] as Record<string, unknown> } : {}),
          }
        : undefined;
    return { kind: transport === 'sse' ? 'sse' : 'http', url, headers, ...(oauth ? { oauth } : {}) };
  }
  throw new McpConfigError(`${where} needs either "command" (a local server over stdio) or "url" (a remote server)`);
}
