// The MCP servers' `env` and `headers` values of a conversation's `agent.mcp_config` are secrets
// (1.58's MCPServer keeps them as SecretStr; /api/settings masks them): like the request's secrets
// and the LLM key they never reach the database unsealed. The stored request carries them as null;
// the values go into the sealed secrets (with OH_SECRET_KEY) and the runtime puts them back
// (ConversationRuntime.request). Without a key they live in memory only, and after a restart the
// null values make the MCP connection fail saying which field is missing, never a silent run
// without them. Both forms of `mcp_config` (the server map, `{"mcpServers": ...}`).
type Json = Record<string, unknown>;
const isMap = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

function servers(config: Json): Json {
  return isMap(config['mcpServers']) ? config['mcpServers'] : config;
}

/** `config` as stored (env and header values null) and, when it had any value, the whole of it for sealing. */
export function splitMcpSecrets(config: Json | undefined): { stored: Json | undefined; sealed: Json | undefined } {
  if (!config) return { stored: config, sealed: undefined };
  const copy = structuredClone(config);
  let found = false;
  for (const server of Object.values(servers(copy))) {
    if (!isMap(server)) continue;
    for (const f of ['env', 'headers']) {
      const m = server[f];
      if (!isMap(m)) continue;
      for (const k of Object.keys(m)) if (typeof m[k] === 'string') [m[k], found] = [null, true];
    }
  }
  return found ? { stored: copy, sealed: config } : { stored: config, sealed: undefined };
}

/** Names (server.env.NAME) of values the stored request lacks: what a restart without the sealed secrets lost. */
export function lostMcpSecrets(stored: Json | undefined): string[] {
  if (!stored) return [];
  const out: string[] = [];
  for (const [name, server] of Object.entries(servers(stored))) {
    if (!isMap(server)) continue;
    for (const f of ['env', 'headers']) if (isMap(server[f])) for (const [k, v] of Object.entries(server[f] as Json)) if (v === null) out.push(`${name}.${f}.${k}`);
  }
  return out;
}
