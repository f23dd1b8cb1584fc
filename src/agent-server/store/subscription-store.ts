// ChatGPT subscription credentials (the OAuth access and refresh tokens of a device-code sign-in), in
// the agent server's SQLite file. The tokens are held as the other stored secrets are: AES-256-GCM
// sealed with the secret key (OH_SECRET_KEY), bound to the vendor; without a secret key in memory
// only, so a restart asks for a new sign-in rather than writing them in clear (the data dir may sit
// inside the workspace the agent reads). Only the expiry is stored in clear.
import type { Logger } from '../../util/log.ts';
import type { SecretSealer } from '../secrets.ts';
import type { Db } from './db.ts';

const DDL = `
CREATE TABLE IF NOT EXISTS subscription_credentials (
  vendor     TEXT PRIMARY KEY,
  -- access_token and refresh_token, sealed with the secret key (context subscription:<vendor>).
  sealed     TEXT NOT NULL,
  -- When the access token expires, Unix milliseconds.
  expires_at INTEGER NOT NULL
) STRICT;
`;

export interface OAuthCredentials {
  accessToken: string;
  refreshToken: string;
  /** Unix milliseconds. */
  expiresAt: number;
}

export const sealContext = (vendor: string) => `subscription:${vendor}`;

export class SubscriptionStore {
  readonly #db: Db;
  readonly #log: Logger;
  #sealer: SecretSealer | undefined;
  /** Credentials while there is no secret key, by vendor. */
  readonly #memory = new Map<string, OAuthCredentials>();

  constructor(db: Db, sealer: SecretSealer | undefined, log: Logger) {
    db.exec(DDL);
    this.#db = db;
    this.#sealer = sealer;
    this.#log = log;
  }

  /** Undefined: none stored, or they cannot be opened with this secret key (a new sign-in is needed). */
  get(vendor: string): OAuthCredentials | undefined {
    if (!this.#sealer) return this.#memory.get(vendor);
    const row = this.#db.prepare('SELECT sealed, expires_at FROM subscription_credentials WHERE vendor = ?').get(vendor) as { sealed: string; expires_at: number } | undefined;
    if (!row) return undefined;
    const opened = this.#sealer.open(row.sealed, sealContext(vendor))?.secrets;
    if (!opened?.['access_token'] || !opened['refresh_token']) {
      this.#log.warn({ vendor }, 'cannot open the stored subscription credentials (OH_SECRET_KEY changed? add the old key to OH_PREVIOUS_SECRET_KEYS): sign in again');
      return undefined;
    }
    return { accessToken: opened['access_token'], refreshToken: opened['refresh_token'], expiresAt: row.expires_at };
  }

  save(vendor: string, c: OAuthCredentials): void {
    if (!this.#sealer) {
      this.#memory.set(vendor, c);
      return;
    }
    const sealed = this.#sealer.seal({ secrets: { access_token: c.accessToken, refresh_token: c.refreshToken } }, sealContext(vendor));
    this.#db
      .prepare('INSERT INTO subscription_credentials (vendor, sealed, expires_at) VALUES (?, ?, ?) ON CONFLICT (vendor) DO UPDATE SET sealed = excluded.sealed, expires_at = excluded.expires_at')
      .run(vendor, sealed, c.expiresAt);
  }

  /** True when something was removed. */
  delete(vendor: string): boolean {
    const inMemory = this.#memory.delete(vendor);
    return this.#db.prepare('DELETE FROM subscription_credentials WHERE vendor = ?').run(vendor).changes > 0 || inMemory;
  }

  /** A hand-over's new secret key: the stored credentials sealed again with it (and memory-held ones written). */
  setSealer(next: SecretSealer): void {
    const vendors = new Set([...this.#memory.keys(), ...(this.#db.prepare('SELECT vendor FROM subscription_credentials').all() as { vendor: string }[]).map((r) => r.vendor)]);
    const held = [...vendors].map((v) => [v, this.get(v)] as const);
    this.#sealer = next;
    this.#db.transaction(() => {
      for (const [vendor, c] of held) {
        if (c) this.save(vendor, c);
        else this.#db.prepare('DELETE FROM subscription_credentials WHERE vendor = ?').run(vendor);
      }
    })();
    this.#memory.clear();
  }
}
