// What OpenID Connect login keeps in the app store (README, "Login"): users by their identity at the
// provider, browser sessions and login requests in flight. One implementation over the same SQL for
// both stores (SQLite and PostgreSQL, through a small executor), so behaviour cannot drift apart.
// Secrets are kept as hashes: the session cookie's value and the login cookie's value.
import type { Clock } from '../../controller/clock.ts';
import { newUserId } from './keys.ts';
import { SingleUserInstallation, type AppUser } from './types.ts';

/** Runs one statement; `?` placeholders (the PostgreSQL executor numbers them). */
export interface SqlExec {
  all<T>(sql: string, params: unknown[]): Promise<T[]>;
}

/** Who the provider says signed in, and what this installation makes of it. */
export interface OidcIdentity {
  issuer: string;
  subject: string;
  /** Display name (name, else preferred_username, else email, else the subject). */
  name: string;
  email: string | null;
  /** The role from the configured claim; undefined when no admin group is configured (roles are then managed through the API). */
  admin: boolean | undefined;
}

export interface SessionRecord {
  user: AppUser;
  csrfToken: string;
  idToken: string | null;
  createdAt: string;
  lastSeenAt: string;
  expiresAt: string;
}

export interface LoginRequest {
  state: string;
  codeVerifier: string;
  nonce: string;
  returnTo: string;
}

export interface LoginStore {
  /**
   * The user of this identity: created at its first login, its name, email and (when the provider
   * decides roles) role updated at every login. `disabled` users must not get a session. Refused
   * (SingleUserInstallation) when the installation serves one user only and this would be a second.
   */
  userForIdentity(identity: OidcIdentity): Promise<{ user: AppUser; disabled: boolean }>;
  createSession(idHash: string, s: { userId: string; csrfToken: string; idToken: string | null; expiresAt: string }): Promise<void>;
  /** The session when it is neither past its absolute expiry nor idle longer than `idleMs`, and its user is enabled; seen now. */
  findSession(idHash: string, idleMs: number): Promise<SessionRecord | undefined>;
  /** Removes the session; what it was (its ID token is the hint of RP-initiated logout). */
  deleteSession(idHash: string): Promise<SessionRecord | undefined>;
  saveLoginRequest(idHash: string, r: LoginRequest & { expiresAt: string }): Promise<void>;
  /** Takes (removes) the login request; undefined when there is none or it expired. */
  takeLoginRequest(idHash: string): Promise<LoginRequest | undefined>;
}

interface SessionRow {
  user_id: string;
  name: string;
  disabled_at: string | null;
  csrf_token: string;
  id_token: string | null;
  created_at: string;
  last_seen_at: string;
  expires_at: string;
}

const SESSION_SELECT =
  'SELECT s.user_id, u.name, u.disabled_at, s.csrf_token, s.id_token, s.created_at, s.last_seen_at, s.expires_at FROM sessions s JOIN users u ON u.id = s.user_id WHERE s.id_hash = ?';

/** A session's last-seen time is written at most this often (a write per request would be wasteful). */
const TOUCH_EVERY_MS = 30_000;

const record = (r: SessionRow): SessionRecord => ({
  user: { id: r.user_id, name: r.name },
  csrfToken: r.csrf_token,
  idToken: r.id_token,
  createdAt: r.created_at,
  lastSeenAt: r.last_seen_at,
  expiresAt: r.expires_at,
});

export class Logins implements LoginStore {
  readonly #sql: SqlExec;
  readonly #clock: Clock;

  constructor(sql: SqlExec, clock: Clock) {
    this.#sql = sql;
    this.#clock = clock;
  }

  #now(): string {
    return this.#clock.now().toUTC().toISO()!;
  }

  async userForIdentity(i: OidcIdentity): Promise<{ user: AppUser; disabled: boolean }> {
    // One statement: create or update, under the same single-user rule as createUser. A login of a
    // known identity always passes the rule (it adds no user). Without a configured admin group the
    // role stays what administrators set through the API.
    const manageRole = i.admin === undefined ? 0 : 1;
    const rows = await this.#sql.all<{ id: string; name: string; disabled_at: string | null }>(
      `INSERT INTO users (id, name, created_at, oidc_issuer, oidc_subject, email, is_admin)
       SELECT ?, ?, ?, ?, ?, ?, (? = 1)
       WHERE NOT EXISTS (SELECT 1 FROM installation WHERE key = 'single_user') OR NOT EXISTS (SELECT 1 FROM users)
          OR EXISTS (SELECT 1 FROM users WHERE oidc_issuer = ? AND oidc_subject = ?)
       ON CONFLICT (oidc_issuer, oidc_subject) DO UPDATE SET name = excluded.name, email = excluded.email,
          is_admin = CASE WHEN ? = 1 THEN excluded.is_admin ELSE users.is_admin END
       RETURNING id, name, disabled_at`,
      [newUserId(), i.name, this.#now(), i.issuer, i.subject, i.email, i.admin ? 1 : 0, i.issuer, i.subject, manageRole],
    );
    const row = rows[0];
    if (!row) {
      const reason = (await this.#sql.all<{ value: string }>("SELECT value FROM installation WHERE key = 'single_user'", []))[0]?.value;
      throw new SingleUserInstallation(reason ?? 'single-user');
    }
    return { user: { id: row.id, name: row.name }, disabled: row.disabled_at !== null };
  }

  async createSession(idHash: string, s: { userId: string; csrfToken: string; idToken: string | null; expiresAt: string }): Promise<void> {
    const now = this.#now();
    // Expired sessions and login requests go when new ones come: no background loop needed.
    await this.#sql.all('DELETE FROM sessions WHERE expires_at < ?', [now]);
    await this.#sql.all('INSERT INTO sessions (id_hash, user_id, csrf_token, id_token, created_at, last_seen_at, expires_at) VALUES (?, ?, ?, ?, ?, ?, ?)', [
      idHash,
      s.userId,
      s.csrfToken,
      s.idToken,
      now,
      now,
      s.expiresAt,
    ]);
  }

  async findSession(idHash: string, idleMs: number): Promise<SessionRecord | undefined> {
    const row = (await this.#sql.all<SessionRow>(SESSION_SELECT, [idHash]))[0];
    if (!row) return undefined;
    const now = this.#clock.now().toUTC();
    const idleUntil = Date.parse(row.last_seen_at) + idleMs;
    if (row.expires_at <= now.toISO()! || idleUntil <= now.toMillis()) {
      await this.#sql.all('DELETE FROM sessions WHERE id_hash = ?', [idHash]);
      return undefined;
    }
    if (row.disabled_at !== null) return undefined;
    if (now.toMillis() - Date.parse(row.last_seen_at) >= TOUCH_EVERY_MS) {
      await this.#sql.all('UPDATE sessions SET last_seen_at = ? WHERE id_hash = ?', [now.toISO(), idHash]);
      row.last_seen_at = now.toISO()!;
    }
    return record(row);
  }

  async deleteSession(idHash: string): Promise<SessionRecord | undefined> {
    const row = (await this.#sql.all<SessionRow>(SESSION_SELECT, [idHash]))[0];
    await this.#sql.all('DELETE FROM sessions WHERE id_hash = ?', [idHash]);
    return row && record(row);
  }

  async saveLoginRequest(idHash: string, r: LoginRequest & { expiresAt: string }): Promise<void> {
    await this.#sql.all('DELETE FROM login_requests WHERE expires_at < ?', [this.#now()]);
    await this.#sql.all('INSERT INTO login_requests (id_hash, state, code_verifier, nonce, return_to, expires_at) VALUES (?, ?, ?, ?, ?, ?)', [
      idHash,
      r.state,
      r.codeVerifier,
      r.nonce,
      r.returnTo,
      r.expiresAt,
    ]);
  }

  async takeLoginRequest(idHash: string): Promise<LoginRequest | undefined> {
    const rows = await this.#sql.all<{ state: string; code_verifier: string; nonce: string; return_to: string; expires_at: string }>(
      'DELETE FROM login_requests WHERE id_hash = ? RETURNING state, code_verifier, nonce, return_to, expires_at',
      [idHash],
    );
    const r = rows[0];
    if (!r || r.expires_at <= this.#now()) return undefined;
    return { state: r.state, codeVerifier: r.code_verifier, nonce: r.nonce, returnTo: r.return_to };
  }
}
