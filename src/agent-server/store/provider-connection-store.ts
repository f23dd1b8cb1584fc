// Shared LLM provider connections in the agent server's SQLite file, the API key sealed with the
// server's secret key (bound to the connection's id) like an LLM profile's key.
import { randomUUID } from 'node:crypto';
import { Conflict, NotFound, Unavailable } from '../../api/errors.ts';
import type { SecretSealer } from '../secrets.ts';
import type { Db } from './db.ts';

const DDL = `
CREATE TABLE IF NOT EXISTS provider_connections (
  id             TEXT PRIMARY KEY,
  display_name   TEXT NOT NULL,
  provider       TEXT NOT NULL,
  base_url       TEXT,
  -- The API key sealed with the server's secret key (context provider-connection:<id>).
  sealed_api_key TEXT NOT NULL,
  created_at     INTEGER NOT NULL,
  updated_at     INTEGER NOT NULL
) STRICT;
`;

export interface ProviderConnection {
  id: string;
  displayName: string;
  provider: string;
  baseUrl: string | null;
  createdAt: number;
  updatedAt: number;
}

interface Raw {
  id: string;
  display_name: string;
  provider: string;
  base_url: string | null;
  sealed_api_key: string;
  created_at: number;
  updated_at: number;
}

const context = (id: string) => `provider-connection:${id}`;
const fromRaw = (r: Raw): ProviderConnection => ({ id: r.id, displayName: r.display_name, provider: r.provider, baseUrl: r.base_url, createdAt: r.created_at, updatedAt: r.updated_at });

export class ProviderConnectionStore {
  readonly #db: Db;
  readonly #sealer: () => SecretSealer | undefined;
  readonly #now: () => Date;

  constructor(db: Db, sealer: () => SecretSealer | undefined, now: () => Date = () => new Date()) {
    db.exec(DDL);
    this.#db = db;
    this.#sealer = sealer;
    this.#now = now;
  }

  list(): ProviderConnection[] {
    return (this.#db.prepare('SELECT * FROM provider_connections ORDER BY created_at, id').all() as Raw[]).map(fromRaw);
  }

  get(id: string): ProviderConnection | undefined {
    const r = this.#row(id);
    return r && fromRaw(r);
  }

  /** The connection's key; a key this server's secret key cannot open is an error, never an empty key. */
  apiKey(id: string): string {
    const r = this.#row(id);
    if (!r) throw new NotFound(`Provider connection '${id}' not found`);
    const opened = this.#sealer()?.open(r.sealed_api_key, context(r.id));
    if (opened?.llmApiKey === undefined) throw new Conflict(`The API key of provider connection '${id}' cannot be opened with this agent server's secret key (OH_SECRET_KEY changed?): give it a new key`);
    return opened.llmApiKey;
  }

  create(c: { displayName: string; provider: string; baseUrl: string | null; apiKey: string }, max: number): ProviderConnection {
    const id = randomUUID().replaceAll('-', '');
    const sealed = this.#seal(c.apiKey, id);
    const now = Math.floor(this.#now().getTime() / 1000);
    this.#db.transaction(() => {
      const { n } = this.#db.prepare('SELECT count(*) AS n FROM provider_connections').get() as { n: number };
      if (n >= max) throw new Conflict(`Provider connection limit reached (${max}). Delete one before adding another.`);
      this.#db.prepare('INSERT INTO provider_connections (id, display_name, provider, base_url, sealed_api_key, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?)').run(id, c.displayName, c.provider, c.baseUrl, sealed, now, now);
    })();
    return this.get(id)!;
  }

  /** Only the fields given change; NotFound for an unknown id. */
  update(id: string, patch: { displayName?: string; provider?: string; baseUrl?: string | null; apiKey?: string }): ProviderConnection {
    const r = this.#row(id);
    if (!r) throw new NotFound(`Provider connection '${id}' not found`);
    const sealed = patch.apiKey !== undefined ? this.#seal(patch.apiKey, id) : r.sealed_api_key;
    this.#db
      .prepare('UPDATE provider_connections SET display_name = ?, provider = ?, base_url = ?, sealed_api_key = ?, updated_at = ? WHERE id = ?')
      .run(patch.displayName ?? r.display_name, patch.provider ?? r.provider, patch.baseUrl !== undefined ? patch.baseUrl : r.base_url, sealed, Math.floor(this.#now().getTime() / 1000), id);
    return this.get(id)!;
  }

  delete(id: string): void {
    this.#db.prepare('DELETE FROM provider_connections WHERE id = ?').run(id);
  }

  #seal(apiKey: string, id: string): string {
    const sealer = this.#sealer();
    if (!sealer) throw new Unavailable('Encryption not available: OH_SECRET_KEY is not configured. Cannot store the API key.');
    return sealer.seal({ secrets: {}, llmApiKey: apiKey }, context(id));
  }

  #row(id: string): Raw | undefined {
    return this.#db.prepare('SELECT * FROM provider_connections WHERE id = ?').get(id) as Raw | undefined;
  }
}
