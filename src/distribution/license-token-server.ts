// The vendor's side of licensed chart pulls: a token service for an OCI registry (the Docker
// registry token protocol the CNCF Distribution registry speaks with `auth.token`). A customer logs
// in with the license e-mail as user name and the license id as password; the token it gets grants
// pull on the chart repositories that license covers. Wrong credentials get 401; a valid license
// asking for a repository it does not cover, or an expired one, gets 403 with the reason.
import { createPrivateKey, createPublicKey, generateKeyPairSync, randomUUID, sign, timingSafeEqual, type KeyObject } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';

export interface License {
  /** The customer's e-mail: the registry user name. */
  email: string;
  /** The license id: the registry password. */
  id: string;
  /** Repositories (e.g. `charts/agentyard`) this license may pull. */
  repositories: string[];
  /** ISO date-time after which the license no longer pulls. */
  expires?: string;
  /** The vendor's own publishing account: may also push. */
  publisher?: boolean;
}

export interface TokenServerOptions {
  licenses: License[];
  /** The registry's `auth.token.service` and `issuer`. */
  service: string;
  issuer: string;
  /** EC P-256 private key (PEM); a fresh one when omitted. */
  privateKeyPem?: string;
  /** Token lifetime, default 5 minutes. */
  ttlSeconds?: number;
  /** Wall clock: the registry checks the token's times against its own. */
  now?: () => number;
}

export interface Access {
  type: string;
  name: string;
  actions: string[];
}

class Denied extends Error {
  readonly status: 401 | 403;
  constructor(status: 401 | 403, message: string) {
    super(message);
    this.status = status;
  }
}

const b64url = (b: Buffer | string) => Buffer.from(b).toString('base64url');

function same(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/** `repository:charts/agentyard:pull,push` → one Access; other resource types are not granted. */
export function parseScope(scope: string): Access | undefined {
  const m = /^([a-z]+):(.+):([a-z*,]+)$/.exec(scope);
  if (!m) return undefined;
  return { type: m[1]!, name: m[2]!, actions: m[3]!.split(',') };
}

export class LicenseTokenServer {
  private readonly key: KeyObject;
  readonly kid = 'agentyard-license-server';
  private readonly now: () => number;
  private readonly opts: TokenServerOptions;

  constructor(opts: TokenServerOptions) {
    this.opts = opts;
    this.key = opts.privateKeyPem ? createPrivateKey(opts.privateKeyPem) : generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey;
    this.now = opts.now ?? Date.now;
  }

  /** The JWKS the registry trusts (`auth.token.jwks`). */
  jwks(): { keys: object[] } {
    return { keys: [{ ...createPublicKey(this.key).export({ format: 'jwk' }), kid: this.kid, use: 'sig', alg: 'ES256' }] };
  }

  /** Which license the Basic credentials name; Denied(401) when none. */
  authenticate(authorization: string | undefined): License {
    const m = /^Basic\s+(.+)$/i.exec(authorization ?? '');
    if (!m) throw new Denied(401, 'log in with the license e-mail as user name and the license id as password');
    const decoded = Buffer.from(m[1]!, 'base64').toString('utf8');
    const colon = decoded.indexOf(':');
    const [user, pass] = colon < 0 ? [decoded, ''] : [decoded.slice(0, colon), decoded.slice(colon + 1)];
    const license = this.opts.licenses.find((l) => l.email.toLowerCase() === user.toLowerCase());
    // The same answer for an unknown e-mail and a wrong id: nothing to learn about who is a customer.
    if (!license || !same(license.id, pass)) throw new Denied(401, 'unknown license e-mail or license id');
    return license;
  }

  /** What `license` may do of what `scopes` ask for; Denied(403) when a scope gets nothing. */
  grant(license: License, scopes: string[]): Access[] {
    if (license.expires && Date.parse(license.expires) <= this.now()) throw new Denied(403, `license ${license.id} expired on ${license.expires}; renew it to pull new charts`);
    const granted: Access[] = [];
    for (const s of scopes) {
      const asked = parseScope(s);
      if (!asked || asked.type !== 'repository') throw new Denied(403, `scope ${JSON.stringify(s)} is not granted to licenses`);
      const allowed = license.repositories.includes(asked.name) ? (license.publisher ? ['pull', 'push'] : ['pull']) : [];
      const actions = asked.actions.filter((a) => allowed.includes(a));
      if (actions.length === 0) throw new Denied(403, `license ${license.id} does not cover ${asked.name} (${asked.actions.join(',')})`);
      granted.push({ type: 'repository', name: asked.name, actions });
    }
    return granted;
  }

  /** A registry token (ES256 JWT) for `subject` with `access`. */
  token(subject: string, access: Access[]): { token: string; expires_in: number; issued_at: string } {
    const ttl = this.opts.ttlSeconds ?? 300;
    const now = Math.floor(this.now() / 1000);
    const header = b64url(JSON.stringify({ alg: 'ES256', typ: 'JWT', kid: this.kid }));
    const claims = b64url(JSON.stringify({ iss: this.opts.issuer, sub: subject, aud: this.opts.service, iat: now, nbf: now, exp: now + ttl, jti: randomUUID(), access }));
    const signature = sign('sha256', Buffer.from(`${header}.${claims}`), { key: this.key, dsaEncoding: 'ieee-p1363' });
    return { token: `${header}.${claims}.${b64url(signature)}`, expires_in: ttl, issued_at: new Date(now * 1000).toISOString() };
  }

  /** GET /token?service=…&scope=… as the registry's clients call it. */
  handle(req: IncomingMessage, res: ServerResponse): void {
    const url = new URL(req.url ?? '/', 'http://token.invalid');
    const send = (status: number, body: object, headers: Record<string, string> = {}) => {
      res.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store', ...headers }).end(JSON.stringify(body));
    };
    if (req.method !== 'GET' || url.pathname !== '/token') return send(404, { errors: [{ code: 'NOT_FOUND', message: 'GET /token' }] });
    if (url.searchParams.get('service') !== this.opts.service) return send(400, { errors: [{ code: 'UNSUPPORTED', message: `service must be ${this.opts.service}` }] });
    try {
      const license = this.authenticate(req.headers.authorization);
      const access = this.grant(license, url.searchParams.getAll('scope').flatMap((s) => s.split(' ')).filter(Boolean));
      send(200, (({ token, ...rest }) => ({ token, access_token: token, ...rest }))(this.token(license.email, access)));
    } catch (err) {
      if (!(err instanceof Denied)) throw err;
      send(err.status, { errors: [{ code: err.status === 401 ? 'UNAUTHORIZED' : 'DENIED', message: err.message }] }, err.status === 401 ? { 'www-authenticate': `Basic realm="${this.opts.service}"` } : {});
    }
  }

  listen(port = 0, host = '127.0.0.1'): Promise<Server> {
    const server = createServer((req, res) => this.handle(req, res));
    return new Promise((resolve) => server.listen(port, host, () => resolve(server)));
  }
}
