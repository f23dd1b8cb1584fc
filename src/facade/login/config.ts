// OpenID Connect login settings (README, "Login"), from the environment or the flags of
// `agentyard up` / `agentyard api` (a flag wins over its variable). Login is on when an issuer is
// set; without one the app signs in with an API key only. The client secret is read from a file or
// a variable, never a flag (command lines are visible to every user of the machine).
import { readFileSync } from 'node:fs';

export interface LoginSettings {
  /** The provider's issuer URL; its discovery document is at <issuer>/.well-known/openid-configuration. */
  issuer: string;
  clientId: string;
  /** Absent: a public client (PKCE only, no client authentication). */
  clientSecret?: string;
  /**
   * Where browsers reach this service (the redirect base: <publicUrl>/auth/callback). `agentyard up`
   * fills it with its own address when unset. https makes the session cookie Secure.
   */
  publicUrl?: string;
  /** The claim holding the user's groups or roles; a dotted path reaches into objects (realm_access.roles). */
  roleClaim: string;
  /** A value of `roleClaim` that makes the user an administrator; unset: roles are managed through the API. */
  adminGroup?: string;
  scopes: string;
  /** A session ends this long after login, however active (absolute expiry). */
  sessionMaxAgeMs: number;
  /** ...or after this long without a request (idle expiry). */
  sessionIdleMs: number;
}

/** The flags both commands take; parseArgs options. */
export const LOGIN_FLAGS = {
  'oidc-issuer': { type: 'string' },
  'oidc-client-id': { type: 'string' },
  'oidc-client-secret-file': { type: 'string' },
  'oidc-role-claim': { type: 'string' },
  'oidc-admin-group': { type: 'string' },
  'public-url': { type: 'string' },
} as const;

export type LoginFlags = Partial<Record<keyof typeof LOGIN_FLAGS, string>>;

const LOOPBACK = /^(127(\.\d{1,3}){3}|localhost|\[::1\])$/i;

/** True for http:// on a loopback address: the only plain-http URLs login accepts. */
export function isLoopbackHttp(url: URL): boolean {
  return url.protocol === 'http:' && LOOPBACK.test(url.hostname);
}

function checkedUrl(name: string, raw: string): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new Error(`${name} must be an absolute URL, got '${raw}'`);
  }
  if (url.protocol !== 'https:' && !isLoopbackHttp(url)) {
    throw new Error(`${name} must be an https:// URL (plain http only on a loopback address, for a local try), got '${raw}'`);
  }
  return raw;
}

function positiveSeconds(env: NodeJS.ProcessEnv, name: string, fallback: number): number {
  const raw = env[name];
  const v = raw === undefined || raw === '' ? fallback : Number(raw);
  if (!Number.isFinite(v) || v <= 0) throw new Error(`${name} must be a positive number of seconds, got '${raw}'`);
  return v * 1000;
}

/** undefined when login is off (no issuer). Throws, naming the setting, on anything inconsistent. */
export function loginSettings(env: NodeJS.ProcessEnv, flags: LoginFlags = {}): LoginSettings | undefined {
  const pick = (flag: keyof LoginFlags, name: string) => flags[flag] ?? (env[name] || undefined);
  const issuer = pick('oidc-issuer', 'AGENTYARD_OIDC_ISSUER');
  if (!issuer) return undefined;
  const clientId = pick('oidc-client-id', 'AGENTYARD_OIDC_CLIENT_ID');
  if (!clientId) throw new Error('AGENTYARD_OIDC_CLIENT_ID (--oidc-client-id) is required with AGENTYARD_OIDC_ISSUER: the client registered for agentyard at the provider');
  const secretFile = pick('oidc-client-secret-file', 'AGENTYARD_OIDC_CLIENT_SECRET_FILE');
  let clientSecret = env.AGENTYARD_OIDC_CLIENT_SECRET || undefined;
  if (secretFile) {
    try {
      clientSecret = readFileSync(secretFile, 'utf8').trim();
    } catch (err) {
      throw new Error(`AGENTYARD_OIDC_CLIENT_SECRET_FILE: cannot read ${secretFile} (${(err as NodeJS.ErrnoException).code ?? String(err)})`);
    }
    if (!clientSecret) throw new Error(`AGENTYARD_OIDC_CLIENT_SECRET_FILE: ${secretFile} is empty`);
  }
  const publicUrl = pick('public-url', 'AGENTYARD_PUBLIC_URL');
  const adminGroup = pick('oidc-admin-group', 'AGENTYARD_OIDC_ADMIN_GROUP');
  const sessionMaxAgeMs = positiveSeconds(env, 'AGENTYARD_SESSION_MAX_AGE_SECONDS', 12 * 3600);
  const sessionIdleMs = positiveSeconds(env, 'AGENTYARD_SESSION_IDLE_SECONDS', 3600);
  return {
    issuer: checkedUrl('AGENTYARD_OIDC_ISSUER', issuer),
    clientId,
    ...(clientSecret ? { clientSecret } : {}),
    ...(publicUrl ? { publicUrl: checkedUrl('AGENTYARD_PUBLIC_URL', publicUrl).replace(/\/+$/, '') } : {}),
    roleClaim: pick('oidc-role-claim', 'AGENTYARD_OIDC_ROLE_CLAIM') ?? 'groups',
    ...(adminGroup ? { adminGroup } : {}),
    scopes: env.AGENTYARD_OIDC_SCOPES || 'openid profile email',
    sessionMaxAgeMs,
    sessionIdleMs: Math.min(sessionIdleMs, sessionMaxAgeMs),
  };
}
