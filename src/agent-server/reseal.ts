// Key rotation at start (1.58's reencrypt_stale_stores, for every place this server seals a secret):
// a value an earlier key (OH_PREVIOUS_SECRET_KEYS) sealed is sealed again with OH_SECRET_KEY, so the
// old key can leave the configuration once this start is done. 1.58 rewrites only its settings and
// secrets files and leaves the rest until next saved; here every sealed value is done at once, so no
// row stays readable only through a key the operator believes retired.
//
// A value that no configured key opens is left exactly as stored (the right key may come back) and
// the log names where it is, never what it holds; the stores then treat it as missing (a settings
// PATCH refuses to write over it, as 1.58 answers 409).
import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Logger } from '../util/log.ts';
import { MCP_OAUTH_FILE, mcpSealContext } from './mcp/token-store.ts';
import { UNOPENABLE_HINT, type SecretSealer } from './secrets.ts';
import type { Db } from './store/db.ts';
import { profileSealContext } from './store/profile-store.ts';
import { sealContext as connectionContext } from './store/provider-connection-store.ts';
import { sealContext as settingsSecretContext, SETTINGS_SEAL_CONTEXT } from './store/settings-store.ts';
import { sealContext as subscriptionContext } from './store/subscription-store.ts';

/** A table column of sealed values, its row key, and the sealing context of a row. */
interface SealedColumn {
  what: string;
  table: string;
  key: string;
  column: string;
  context: (key: string) => string;
}

const COLUMNS: SealedColumn[] = [
  { what: 'conversation secrets', table: 'conversations', key: 'id', column: 'sealed_secrets', context: (id) => id },
  { what: 'settings secrets', table: 'settings_secrets', key: 'name', column: 'sealed', context: settingsSecretContext },
  { what: 'provider connection keys', table: 'provider_connections', key: 'id', column: 'sealed_api_key', context: connectionContext },
  { what: 'LLM profile keys', table: 'llm_profiles', key: 'name', column: 'sealed_api_key', context: profileSealContext },
  { what: 'subscription credentials', table: 'subscription_credentials', key: 'vendor', column: 'sealed', context: subscriptionContext },
];

export interface ResealReport {
  /** Values sealed again with the current key, by store. */
  resealed: Record<string, number>;
  /** Values no configured key opens, by store: their row keys (names and ids, never values). */
  unopenable: Record<string, string[]>;
}

export function resealStores(o: { db: Db; dataDir: string; sealer: SecretSealer; log: Logger }): ResealReport {
  const report: ResealReport = { resealed: {}, unopenable: {} };
  const count = (what: string, key: string, next: string | undefined, sealed: string) => {
    if (next === undefined) (report.unopenable[what] ??= []).push(key);
    else if (next !== sealed) report.resealed[what] = (report.resealed[what] ?? 0) + 1;
  };
  const tables = new Set((o.db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all() as { name: string }[]).map((r) => r.name));
  o.db.transaction(() => {
    for (const c of COLUMNS) {
      if (!tables.has(c.table)) continue;
      const rows = o.db.prepare(`SELECT ${c.key} AS k, ${c.column} AS v FROM ${c.table} WHERE ${c.column} IS NOT NULL AND ${c.column} != ''`).all() as { k: string; v: string }[];
      const update = o.db.prepare(`UPDATE ${c.table} SET ${c.column} = ? WHERE ${c.key} = ?`);
      for (const { k, v } of rows) {
        const next = o.sealer.reseal(v, c.context(k));
        count(c.what, k, next, v);
        if (next !== undefined && next !== v) update.run(next, k);
      }
    }
    // The stored settings document keeps its secrets sealed in one part of its JSON.
    const doc = tables.has('settings_documents') ? (o.db.prepare("SELECT json FROM settings_documents WHERE name = 'settings'").get() as { json: string } | undefined) : undefined;
    if (doc) {
      const stored = JSON.parse(doc.json) as { sealed?: string | null };
      if (stored.sealed) {
        const next = o.sealer.reseal(stored.sealed, SETTINGS_SEAL_CONTEXT);
        count('stored settings', 'agent_settings', next, stored.sealed);
        if (next !== undefined && next !== stored.sealed) o.db.prepare("UPDATE settings_documents SET json = ? WHERE name = 'settings'").run(JSON.stringify({ ...stored, sealed: next }));
      }
    }
  })();
  resealMcpTokens(o, count);
  for (const [what, n] of Object.entries(report.resealed)) o.log.info({ store: what, values: n }, 'sealed again with the current OH_SECRET_KEY (they were sealed with a key in OH_PREVIOUS_SECRET_KEYS)');
  for (const [what, keys] of Object.entries(report.unopenable)) o.log.error({ store: what, keys }, `stored secrets that no configured key opens are left as they are and treated as missing: ${UNOPENABLE_HINT}`);
  return report;
}

/** The MCP OAuth tokens' file (mcp/token-store.ts), rewritten in place when a value changed. */
function resealMcpTokens(o: { dataDir: string; sealer: SecretSealer; log: Logger }, count: (what: string, key: string, next: string | undefined, sealed: string) => void): void {
  const path = join(o.dataDir, MCP_OAUTH_FILE);
  if (!existsSync(path)) return;
  let stored: { servers?: Record<string, string> };
  try {
    stored = JSON.parse(readFileSync(path, 'utf8')) as { servers?: Record<string, string> };
  } catch {
    return; // the store itself says the file is unreadable
  }
  let changed = false;
  for (const [url, sealed] of Object.entries(stored.servers ?? {})) {
    const next = o.sealer.reseal(sealed, mcpSealContext(url));
    count('MCP OAuth tokens', url, next, sealed);
    if (next !== undefined && next !== sealed) {
      stored.servers![url] = next;
      changed = true;
    }
  }
  if (!changed) return;
  writeFileSync(`${path}.tmp`, JSON.stringify(stored), { mode: 0o600 });
  renameSync(`${path}.tmp`, path);
}
