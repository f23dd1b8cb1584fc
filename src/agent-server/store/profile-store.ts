// LLM profiles (OpenHands `/api/profiles`) in the agent server's SQLite file, beside the
// conversations, so they outlive a restart. The LLM settings are stored as JSON without the API key;
// the key is stored AES-256-GCM sealed with the server's secret key (OH_SECRET_KEY), bound to the
// profile's name, never in plain text (the data dir may sit inside the workspace the agent reads).
// Without a secret key the key is held in memory only, as every secret this server keeps is
// (settings secrets, provider connections, MCP tokens, conversation secrets): the profile is
// stored, and after a restart its key reads as not set and a use of it asks for it again.
import type { LLM } from '../../api/agent-server/index.ts';
import { BadRequest, Conflict, NotFound } from '../../api/errors.ts';
import type { SecretSealer } from '../secrets.ts';
import type { Db } from './db.ts';
import type { ProviderConnectionStore } from './provider-connection-store.ts';

const DDL = `
CREATE TABLE IF NOT EXISTS llm_profiles (
  name           TEXT PRIMARY KEY,
  -- The LLM settings with api_key removed.
  llm            TEXT NOT NULL,
  -- The API key sealed with the server's secret key (context llm-profile:<name>); NULL: none;
  -- '' (MEMORY_HELD): one was given without a secret key and is held in this process's memory only.
  sealed_api_key TEXT,
  updated_at     TEXT NOT NULL
) STRICT;
-- Server-wide settings this agent server keeps: active_profile.
CREATE TABLE IF NOT EXISTS server_settings (
  key   TEXT PRIMARY KEY,
  value TEXT NOT NULL
) STRICT;
`;

export interface StoredProfile {
  name: string;
  /** Without api_key. */
  llm: LLM;
  /** A key is stored, its own or its provider connection's (whether or not this server's secret key can open it). */
  apiKeySet: boolean;
  /** It names a provider connection that does not exist. */
  connectionBroken: boolean;
}

/** What a profile runs with: its settings, the key and base URL of its provider connection when it has one. */
export interface RunnableProfile {
  llm: LLM;
  apiKey: string | undefined;
}

/** `foo.json` addresses profile `foo` (OpenHands names profiles by file). */
export function canonicalProfileName(name: string): string {
  return name.endsWith('.json') ? name.slice(0, -'.json'.length) : name;
}

export const profileSealContext = (name: string) => `llm-profile:${name}`;
const context = profileSealContext;
/** The column's value for a key held in memory (no secret key to seal it with). */
const MEMORY_HELD = '';

interface Raw {
  name: string;
  llm: string;
  sealed_api_key: string | null;
}

export class ProfileStore {
  readonly #db: Db;
  /** A warm-pool hand-over replaces it (setSealer), sealing the stored keys again. */
  #sealer: SecretSealer | undefined;
  readonly #now: () => Date;

  readonly #connections: ProviderConnectionStore | undefined;
  /** Keys while there is no secret key, by profile name. */
  readonly #memory = new Map<string, string>();

  constructor(db: Db, sealer: SecretSealer | undefined, o: { now?: () => Date; connections?: ProviderConnectionStore } = {}) {
    db.exec(DDL);
    this.#db = db;
    this.#sealer = sealer;
    this.#now = o.now ?? (() => new Date());
    this.#connections = o.connections;
  }

  list(): StoredProfile[] {
    const rows = this.#db.prepare('SELECT name, llm, sealed_api_key FROM llm_profiles ORDER BY name').all() as Raw[];
    return rows.map((r) => this.#stored(r));
  }

  get(name: string): StoredProfile | undefined {
    const r = this.#row(name);
    return r && this.#stored(r);
  }

  /** Names of the profiles that use provider connection `id`, sorted. */
  linkedTo(id: string): string[] {
    return this.list().filter((p) => p.llm.provider_connection_id === id).map((p) => p.name);
  }

  /**
   * The profile's LLM as it runs now: a linked provider connection's key and base URL (read at use,
   * so a rotated key applies), else its own key. Undefined for a missing profile; a connection that
   * no longer exists is a 400 naming it, never a call made without a key.
   */
  runnable(name: string): RunnableProfile | undefined {
    const p = this.get(name);
    if (!p) return undefined;
    const id = p.llm.provider_connection_id;
    if (!id) return { llm: p.llm, apiKey: this.apiKey(name) };
    const connection = this.#connections?.get(id);
    if (!connection) throw new BadRequest(`Profile '${p.name}' references provider connection '${id}', which does not exist. Update the profile or recreate the connection.`);
    const apiKey = this.#connections!.apiKey(id);
    if (apiKey === undefined) throw new Conflict(`The API key of provider connection '${id}' is not available (it cannot be opened with this agent server's secret key, or was held in memory before a restart): give the connection its key again`);
    return { llm: { ...p.llm, base_url: connection.base_url }, apiKey };
  }

  /**
   * The profile's API key; undefined when none is stored. A key this server's secret key cannot open
   * (the key changed) is an error, never silently dropped: the model would be called without it.
   */
  apiKey(name: string): string | undefined {
    const r = this.#row(name);
    if (!r || r.sealed_api_key === null) return undefined;
    if (r.sealed_api_key === MEMORY_HELD) {
      const held = this.#memory.get(r.name);
      if (held === undefined) throw new Conflict(`The API key of profile '${name}' was held in memory only (no OH_SECRET_KEY) and the agent server restarted since: save the profile again`);
      return held;
    }
    const opened = this.#sealer?.open(r.sealed_api_key, context(r.name));
    if (opened?.llmApiKey === undefined) throw new Conflict(`The API key of profile '${name}' cannot be opened with this agent server's secret key (OH_SECRET_KEY changed?): save the profile again, or add the old key to OH_PREVIOUS_SECRET_KEYS`);
    return opened.llmApiKey;
  }

  /** Overwrites a profile of that name; a new one past `max` is a Conflict. */
  save(name: string, llm: LLM, apiKey: string | undefined, max: number): void {
    const key = canonicalProfileName(name);
    let sealed: string | null = null;
    const held = apiKey !== undefined && !llm.provider_connection_id && !this.#sealer;
    if (apiKey !== undefined && !llm.provider_connection_id) sealed = this.#sealer ? this.#sealer.seal({ secrets: {}, llmApiKey: apiKey }, context(key)) : MEMORY_HELD;
    // A profile linked to a provider connection owns no key or base URL: the connection's are used.
    if (llm.provider_connection_id) {
      sealed = null;
      llm = { ...llm, base_url: null };
    }
    const { api_key: _dropped, ...settings } = llm;
    this.#db.transaction(() => {
      if (!this.#row(key)) {
        const { n } = this.#db.prepare('SELECT count(*) AS n FROM llm_profiles').get() as { n: number };
        if (n >= max) throw new Conflict(`Profile limit reached (${max}). Delete a profile before saving a new one.`);
      }
      this.#db
        .prepare('INSERT INTO llm_profiles (name, llm, sealed_api_key, updated_at) VALUES (?, ?, ?, ?) ON CONFLICT (name) DO UPDATE SET llm = excluded.llm, sealed_api_key = excluded.sealed_api_key, updated_at = excluded.updated_at')
        .run(key, JSON.stringify(settings), sealed, this.#now().toISOString());
    })();
    if (held && apiKey !== undefined) this.#memory.set(key, apiKey);
    else this.#memory.delete(key);
  }

  /** Idempotent; clears the active profile when it was this one. */
  delete(name: string): void {
    const key = canonicalProfileName(name);
    this.#db.transaction(() => {
      this.#db.prepare('DELETE FROM llm_profiles WHERE name = ?').run(key);
      this.#memory.delete(key);
      if (this.activeProfile() !== null && canonicalProfileName(this.activeProfile()!) === key) this.setActiveProfile(null);
    })();
  }

  /** NotFound for a missing source, Conflict for a taken target; the same name is a checked no-op. The key is sealed again for its new name. */
  rename(from: string, to: string): void {
    const src = canonicalProfileName(from);
    const dst = canonicalProfileName(to);
    this.#db.transaction(() => {
      const row = this.#row(src);
      if (!row) throw new NotFound(`Profile '${from}' not found`);
      if (src === dst) return;
      if (this.#row(dst)) throw new Conflict(`Profile '${to}' already exists`);
      let sealed = row.sealed_api_key;
      if (sealed === MEMORY_HELD) {
        const held = this.#memory.get(src);
        this.#memory.delete(src);
        if (held !== undefined) this.#memory.set(dst, held);
      } else if (sealed !== null) {
        const sealer = this.#sealer;
        const opened = sealer?.open(sealed, context(src));
        // A key this server cannot open stays as it was: it still cannot be opened, and says so at use.
        if (sealer && opened) sealed = sealer.seal(opened, context(dst));
      }
      this.#db.prepare('UPDATE llm_profiles SET name = ?, sealed_api_key = ?, updated_at = ? WHERE name = ?').run(dst, sealed, this.#now().toISOString(), src);
      const active = this.activeProfile();
      if (active !== null && canonicalProfileName(active) === src) this.setActiveProfile(dst);
    })();
  }

  /**
   * A hand-over's new secret key: every stored key sealed again with it (one the old key cannot open
   * stays as it was), and the keys held in memory sealed and written (one lost to a restart: none).
   */
  setSealer(next: SecretSealer): void {
    const old = this.#sealer;
    this.#db.transaction(() => {
      for (const r of this.#db.prepare('SELECT name, sealed_api_key FROM llm_profiles WHERE sealed_api_key IS NOT NULL').all() as { name: string; sealed_api_key: string }[]) {
        if (r.sealed_api_key === MEMORY_HELD) {
          const held = this.#memory.get(r.name);
          this.#db.prepare('UPDATE llm_profiles SET sealed_api_key = ? WHERE name = ?').run(held === undefined ? null : next.seal({ secrets: {}, llmApiKey: held }, context(r.name)), r.name);
          continue;
        }
        const opened = old?.open(r.sealed_api_key, context(r.name));
        if (opened) this.#db.prepare('UPDATE llm_profiles SET sealed_api_key = ? WHERE name = ?').run(next.seal(opened, context(r.name)), r.name);
      }
    })();
    this.#memory.clear();
    this.#sealer = next;
  }

  activeProfile(): string | null {
    const r = this.#db.prepare("SELECT value FROM server_settings WHERE key = 'active_profile'").get() as { value: string } | undefined;
    return r ? r.value : null;
  }

  setActiveProfile(name: string | null): void {
    if (name === null) this.#db.prepare("DELETE FROM server_settings WHERE key = 'active_profile'").run();
    else this.#db.prepare("INSERT INTO server_settings (key, value) VALUES ('active_profile', ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value").run(canonicalProfileName(name));
  }

  #stored(r: Raw): StoredProfile {
    const llm = JSON.parse(r.llm) as LLM;
    const id = llm.provider_connection_id;
    const connection = id ? this.#connections?.get(id) : undefined;
    const ownKey = r.sealed_api_key === MEMORY_HELD ? this.#memory.has(r.name) : r.sealed_api_key !== null;
    return { name: r.name, llm, apiKeySet: ownKey || (connection?.api_key_set ?? false), connectionBroken: Boolean(id) && !connection };
  }

  #row(name: string): Raw | undefined {
    return this.#db.prepare('SELECT name, llm, sealed_api_key FROM llm_profiles WHERE name = ?').get(canonicalProfileName(name)) as Raw | undefined;
  }
}
