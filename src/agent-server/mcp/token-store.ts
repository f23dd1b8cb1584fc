// The OAuth state of MCP servers this agent server was authorized for (/api/mcp/oauth), by server
// URL as OpenHands keys it (FastMCP's token storage): the tokens, the client registered for them,
// their expiry. Where OpenHands hands the tokens to the client in `oauth_state` for it to store, we
// keep them here and never answer them (src/api/agent-server/mcp.ts says why).
//
// Persistence follows the conversation secrets' rule (secrets.ts): with OH_SECRET_KEY each server's
// state is written AES-256-GCM sealed (bound to its URL) to <dataDir>/mcp-oauth.json, mode 0600,
// so a restarted server still has it; without a key it lives in memory only. The data dir may sit
// in the workspace, where the agent can read files: never plain text on disk.
import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { OAuthClientInformationMixed, OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js';
import type { SecretSealer } from '../secrets.ts';
import type { Logger } from '../../util/log.ts';

export interface McpOAuthEntry {
  tokens?: OAuthTokens;
  client_info?: OAuthClientInformationMixed;
  /** Epoch seconds, from `expires_in` when the tokens were saved (OpenHands' token_expires_at). */
  token_expires_at?: number;
  /** The loopback redirect URI the client was registered with: kept so a stored registration stays valid. */
  redirect_url?: string;
}

/** The sealed tokens' file in the data dir, and each server's sealing context. */
export const MCP_OAUTH_FILE = 'mcp-oauth.json';
export const mcpSealContext = (url: string): string => `mcp-oauth:${url}`;

/** FastMCP keys by the server URL without a trailing slash. */
export const serverKey = (url: string) => url.replace(/\/+$/, '');

export class McpOAuthStore {
  readonly #entries = new Map<string, McpOAuthEntry>();
  readonly #path: string | undefined;
  readonly #sealer: SecretSealer | undefined;

  constructor(opts: { dataDir?: string; sealer?: SecretSealer; log?: Logger } = {}) {
    this.#sealer = opts.sealer;
    this.#path = opts.dataDir && opts.sealer ? join(opts.dataDir, MCP_OAUTH_FILE) : undefined;
    if (!this.#path || !existsSync(this.#path)) return;
    try {
      const stored = JSON.parse(readFileSync(this.#path, 'utf8')) as { servers?: Record<string, string> };
      for (const [url, sealed] of Object.entries(stored.servers ?? {})) {
        const opened = this.#sealer!.open(sealed, mcpSealContext(url));
        // A changed key (or a foreign file) cannot be opened: that server must be authorized again.
        if (opened?.secrets['state']) this.#entries.set(url, JSON.parse(opened.secrets['state']) as McpOAuthEntry);
        else opts.log?.warn({ server: url }, 'stored MCP OAuth state cannot be opened with this OH_SECRET_KEY (add the old key to OH_PREVIOUS_SECRET_KEYS); the server must be authorized again');
      }
    } catch (err) {
      opts.log?.warn({ err: err instanceof Error ? err.message : String(err) }, 'stored MCP OAuth state unreadable; MCP servers must be authorized again');
    }
  }

  get(url: string): McpOAuthEntry | undefined {
    const e = this.#entries.get(serverKey(url));
    return e ? structuredClone(e) : undefined;
  }

  update(url: string, change: (entry: McpOAuthEntry) => McpOAuthEntry): void {
    const key = serverKey(url);
    const next = change(structuredClone(this.#entries.get(key) ?? {}));
    const empty = !next.tokens && !next.client_info && next.token_expires_at === undefined && !next.redirect_url;
    if (empty) this.#entries.delete(key);
    else this.#entries.set(key, next);
    this.#write();
  }

  #write(): void {
    if (!this.#path || !this.#sealer) return;
    const servers: Record<string, string> = {};
    for (const [url, entry] of this.#entries) servers[url] = this.#sealer.seal({ secrets: { state: JSON.stringify(entry) } }, mcpSealContext(url));
    const tmp = `${this.#path}.tmp`;
    writeFileSync(tmp, JSON.stringify({ version: 1, servers }), { mode: 0o600 });
    renameSync(tmp, this.#path);
  }
}
