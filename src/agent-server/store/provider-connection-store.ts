// LLM provider connections in the agent server's SQLite file. The API key is held as the named
// secrets are (settings-store.ts): sealed with the secret key on disk, in memory only without one,
// so after a restart without a key a connection reads `api_key_set: false` rather than leaking.
import { randomUUID } from 'node:crypto';
import type { ProviderConnectionResponse } from '../../api/agent-server/provider-connections.ts';
import type { Logger } from '../../util/log.ts';
import type { SecretSealer } from '../secrets.ts';
import type { Db } from './db.ts';

interface Row {
  id: string;
  display_name: string;
  provider: string;
  base_url: string | null;
  sealed_api_key: string | null;
  created_at: number;
  updated_at: number;
}

export interface ConnectionFields {
  display_name: string;
  provider: string;
  base_url: string | null;
}

export const sealContext = (id: string) => `provider-connection:${id}`;

export class ProviderConnectionStore {
  readonly #db: Db;
  readonly #log: Logger;
  readonly #now: () => number;
  #sealer: SecretSealer | undefined;
  /** Keys while there is no secret key, by connection id. */
  readonly #memory = new Map<string, string>();

  constructor(db: Db, sealer: SecretSealer | undefined, log: Logger, now: () => number = () => Math.floor(Date.now() / 1000)) {
    this.#db = db;
    this.#sealer = sealer;
    this.#log = log;
    this.#now = now;
  }

  /** In the order created. */
  list(): ProviderConnectionResponse[] {
    return (this.#db.prepare('SELECT * FROM provider_connections ORDER BY rowid').all() as Row[]).map((r) => this.#response(r));
  }

  count(): number {
    return (this.#db.prepare('SELECT count(*) AS n FROM provider_connections').get() as { n: number }).n;
  }

  get(id: string): ProviderConnectionResponse | undefined {
    const row = this.#row(id);
    return row && this.#response(row);
  }

  create(fields: ConnectionFields, apiKey: string): ProviderConnectionResponse {
    const id = randomUUID().replaceAll('-', '');
    const now = this.#now();
    this.#db
      .prepare('INSERT INTO provider_connections (id, display_name, provider, base_url, sealed_api_key, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?)')
      .run(id, fields.display_name, fields.provider, fields.base_url, this.#seal(id, apiKey), now, now);
    return this.get(id)!;
  }

  /** Undefined when there is no such connection. `apiKey` replaces the key when given. */
  update(id: string, fields: Partial<ConnectionFields>, apiKey: string | undefined): ProviderConnectionResponse | undefined {
    const row = this.#row(id);
    if (!row) return undefined;
    const next = { ...row, ...fields, updated_at: this.#now(), ...(apiKey !== undefined ? { sealed_api_key: this.#seal(id, apiKey) } : {}) };
    this.#db.prepare('UPDATE provider_connections SET display_name = ?, provider = ?, base_url = ?, sealed_api_key = ?, updated_at = ? WHERE id = ?').run(next.display_name, next.provider, next.base_url, next.sealed_api_key, next.updated_at, id);
    return this.get(id);
  }

  /** The connection as it was (undefined when there was none). */
  delete(id: string): ProviderConnectionResponse | undefined {
    const before = this.get(id);
    if (!before) return undefined;
    this.#db.prepare('DELETE FROM provider_connections WHERE id = ?').run(id);
    this.#memory.delete(id);
    return before;
  }

  /** The key, for whatever comes to use a connection (undefined: none, or it cannot be opened). */
  apiKey(id: string): string | undefined {
    const row = this.#row(id);
    if (!row) return undefined;
    if (!this.#sealer || row.sealed_api_key === null) return this.#memory.get(id);
    const opened = this.#sealer.open(row.sealed_api_key, sealContext(id))?.secrets['api_key'];
    if (opened === undefined) this.#log.warn({ connectionId: id }, 'cannot open a stored provider connection key (OH_SECRET_KEY changed? add the old key to OH_PREVIOUS_SECRET_KEYS)');
    return opened;
  }

  /** A hand-over's new secret key: every key sealed again with it (and memory-held keys written). */
  setSealer(next: SecretSealer): void {
    const keys = new Map(this.list().map((c) => [c.id, this.apiKey(c.id)] as const));
    this.#sealer = next;
    this.#db.transaction(() => {
      for (const [id, key] of keys) this.#db.prepare('UPDATE provider_connections SET sealed_api_key = ? WHERE id = ?').run(key === undefined ? null : this.#seal(id, key), id);
    })();
    this.#memory.clear();
  }

  #seal(id: string, apiKey: string): string | null {
    if (this.#sealer) return this.#sealer.seal({ secrets: { api_key: apiKey } }, sealContext(id));
    this.#memory.set(id, apiKey);
    return null;
  }

  #row(id: string): Row | undefined {
    return this.#db.prepare('SELECT * FROM provider_connections WHERE id = ?').get(id) as Row | undefined;
  }

  #response(r: Row): ProviderConnectionResponse {
    return { id: r.id, display_name: r.display_name, provider: r.provider, base_url: r.base_url, created_at: r.created_at, updated_at: r.updated_at, api_key_set: this.apiKey(r.id) !== undefined };
  }
}
