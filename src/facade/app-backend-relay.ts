// The app-backend ingress: how a user's browser reaches the Canvas App backends of a sandbox the
// user owns. It is a listener of its own (a browser origin other than the web app's: a Canvas App's
// pages must never be same-origin with the web app, or they could read its API), and every sandbox
// gets the base `<ingress>/sandboxes/<sandbox>` as its agent server's OH_APP_BACKEND_PUBLIC_URL.
//
//   POST|DELETE /sandboxes/<sb>/app-backends/<app>/session   the web app asks (CORS, credentials):
//     the caller is authenticated as on the API (API key), the sandbox must be the caller's and
//     RUNNING; the request goes to that agent server with its session key (the browser never holds
//     it), and the app-session cookie it answers is re-scoped to /sandboxes/<sb>/app-backends/<app>.
//   anything else under /sandboxes/<sb>/app-backends/<app>/   HTTP and WebSocket upgrades, passed to
//     that sandbox's agent server's /app-backends/<app>/… with only the app-session cookie; the agent
//     server checks it (a random token it issued for that app, through the owner-checked request
//     above), so only the owner reaches it.
// The upstream is always the sandbox's own agent server address (runtime/dial.ts), the path is
// always under /app-backends/<app>/ (no `.`/`..` segment however encoded, no way to name a host or
// a port), and the facade's own credentials (Authorization, its session cookie) never go upstream.
import { timingSafeEqual } from 'node:crypto';
import { request as httpRequest, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { Duplex } from 'node:stream';
import { SandboxKind } from '../api/sandbox.ts';
import { APP_BACKEND_SESSION_COOKIE, EXTENSION_NAME_PATTERN } from '../api/agent-server/canvas.ts';
import { checkProxyPath } from '../agent-server/canvas/bridge.ts';
import { agentServerDialUrl } from '../runtime/dial.ts';
import type { AppUser } from './db/types.ts';
import type { FacadeDeps } from './deps.ts';
import type { Facade } from './context.ts';
import { sessionPolicy } from './login/routes.ts';
import { CSRF_HEADER, hashSecret, SESSION_COOKIE } from './login/session.ts';
import { getOwned, normalizeName, sandboxPhase, sessionKeyOf } from './resources.ts';

const NAME = EXTENSION_NAME_PATTERN.slice(1, -1);
const PATH = new RegExp(`^/sandboxes/([^/]+)/app-backends/(${NAME})(/.*)?$`);
/** Request headers never passed on: hop-by-hop, and every credential of the facade or the sandbox. */
const DROPPED = new Set(['authorization', 'x-session-api-key', 'cookie', 'host', 'connection', 'keep-alive', 'proxy-authorization', 'te', 'trailer', 'transfer-encoding', 'upgrade', 'x-forwarded-for', 'x-forwarded-host', 'x-forwarded-proto']);

export interface AppIngressOptions {
  /** Where browsers reach this listener, e.g. https://apps.example.com (no path). */
  publicUrl: string;
  /** The web app's origins: the only pages that may open app sessions. */
  webOrigins: string[];
}

/** A signed-in browser's user: its session cookie and that session's CSRF token (OIDC login). */
export type SessionUser = (cookie: string, csrfToken: string) => Promise<AppUser | undefined>;

/** The agent-server settings a sandbox needs for its Canvas App backends to be reachable through the ingress. */
export function appBackendEnv(o: AppIngressOptions, sandbox: string): Record<string, string> {
  return {
    OH_APP_BACKEND_PUBLIC_URL: `${o.publicUrl.replace(/\/+$/, '')}/sandboxes/${sandbox}`,
    OH_ALLOW_CORS_ORIGINS: JSON.stringify(o.webOrigins),
    // The relay says which origin the browser reached (X-Forwarded-Proto/Host); the agent server is
    // dialled by the facade only, over its internal address.
    OH_TRUST_FORWARDED_HEADERS: 'true',
  };
}

/** The raw path and query: never URL-normalized, so an encoded `..` is seen (and refused), not resolved away. */
function split(raw: string | undefined): { path: string; search: string } {
  const r = raw ?? '/';
  const q = r.indexOf('?');
  return q < 0 ? { path: r, search: '' } : { path: r.slice(0, q), search: r.slice(q) };
}

/** SessionUser for a facade with OIDC login, as the event relay checks a browser: a live session, its CSRF token. */
export function oidcSessionUser(facade: Facade): SessionUser | undefined {
  const oidc = facade.oidc;
  if (!oidc) return undefined;
  return async (cookie, csrf) => {
    const session = await facade.d.db.logins.findSession(hashSecret(cookie), sessionPolicy(oidc).idleMs);
    const [a, b] = [Buffer.from(csrf), Buffer.from(session?.csrfToken ?? '')];
    return session && a.length === b.length && timingSafeEqual(a, b) ? session.user : undefined;
  };
}

type Deps = Pick<FacadeDeps, 'store' | 'db' | 'namespace' | 'log'>;

interface Target {
  base: URL;
  key: string;
  path: string;
}

export class AppBackendRelay {
  readonly #d: Deps;
  readonly #o: AppIngressOptions;
  readonly #public: URL;
  readonly #sessionUser: SessionUser | undefined;

  constructor(d: Deps, o: AppIngressOptions, sessionUser?: SessionUser) {
    this.#d = d;
    this.#o = o;
    this.#sessionUser = sessionUser;
    this.#public = new URL(o.publicUrl);
  }

  #cors(req: IncomingMessage, res: ServerResponse): boolean {
    const origin = req.headers.origin;
    if (!origin || !this.#o.webOrigins.includes(origin)) return false;
    res.setHeader('access-control-allow-origin', origin);
    res.setHeader('access-control-allow-credentials', 'true');
    res.setHeader('vary', 'Origin');
    return true;
  }

  /** The sandbox's agent server, when it serves now; `user` given: only when it is that user's. */
  async #target(sandbox: string, app: string, rest: string, search: string, userId?: string): Promise<Target | undefined> {
    const name = normalizeName(sandbox);
    if (!name) return undefined;
    const sb = userId ? await getOwned(this.#d as FacadeDeps, SandboxKind, userId, name) : await this.#d.store.get(SandboxKind, this.#d.namespace, name);
    const base = agentServerDialUrl(sb);
    const key = await sessionKeyOf(this.#d as FacadeDeps, name);
    if (!sb || sb.metadata.deletionTimestamp || sandboxPhase(sb) !== 'RUNNING' || !base || !key) return undefined;
    return { base: new URL(base), key, path: `/app-backends/${app}${rest}${search}` };
  }

  /** As on the API: an API key, or (OIDC login) the session cookie with that session's CSRF token. */
  async #user(req: IncomingMessage): Promise<AppUser | undefined> {
    const bearer = /^Bearer\s+(.+)$/i.exec(req.headers.authorization ?? '')?.[1];
    if (bearer) return this.#d.db.findUserByApiKey(bearer);
    const cookie = new RegExp(`(?:^|;\\s*)${SESSION_COOKIE}=([^;]*)`).exec(req.headers.cookie ?? '')?.[1];
    const csrf = req.headers[CSRF_HEADER.toLowerCase()];
    if (!this.#sessionUser || !cookie || typeof csrf !== 'string') return undefined;
    return this.#sessionUser(decodeURIComponent(cookie.trim()), csrf);
  }

  #headers(req: IncomingMessage, keep: 'app-cookie' | 'none'): Record<string, string | string[]> {
    const out: Record<string, string | string[]> = {};
    for (const [k, v] of Object.entries(req.headers as IncomingHttpHeaders)) if (v !== undefined && !DROPPED.has(k)) out[k] = v;
    if (keep === 'app-cookie') {
      const token = new RegExp(`(?:^|;\\s*)${APP_BACKEND_SESSION_COOKIE}=([^;]*)`).exec(req.headers.cookie ?? '')?.[1];
      if (token) out['cookie'] = `${APP_BACKEND_SESSION_COOKIE}=${token}`;
    }
    out['host'] = this.#public.host;
    out['x-forwarded-host'] = this.#public.host;
    out['x-forwarded-proto'] = this.#public.protocol.slice(0, -1);
    return out;
  }

  #send(t: Target, method: string, headers: Record<string, string | string[]>) {
    const send = t.base.protocol === 'https:' ? httpsRequest : httpRequest;
    return send({ protocol: t.base.protocol, hostname: t.base.hostname, port: t.base.port, method, path: t.path, headers });
  }

  /** The ingress listener's request handler. */
  handle = (req: IncomingMessage, res: ServerResponse): void => {
    void this.#handle(req, res).catch((err: unknown) => {
      this.#d.log?.warn({ err }, 'app-backend relay failed');
      if (!res.headersSent) res.writeHead(502).end();
      else res.destroy();
    });
  };

  async #handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = split(req.url);
    const m = PATH.exec(url.path);
    const end = (status: number, detail: string) => {
      res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify({ detail }));
    };
    if (!m) return end(404, 'Not found');
    const [, sandbox, app, rest = ''] = m as unknown as [string, string, string, string?];
    try {
      checkProxyPath(rest);
    } catch {
      return end(400, 'Invalid backend path');
    }
    if (rest === '/session') {
      const allowed = this.#cors(req, res);
      if (req.method === 'OPTIONS') {
        if (!allowed) return end(403, 'Origin is not allowed');
        res.setHeader('access-control-allow-methods', 'POST, DELETE');
        res.setHeader('access-control-allow-headers', `authorization, content-type, ${CSRF_HEADER.toLowerCase()}`);
        res.setHeader('access-control-max-age', '600');
        return void res.writeHead(204).end();
      }
      if (req.method !== 'POST' && req.method !== 'DELETE') return end(405, 'Method not allowed');
      if (!allowed) return end(403, 'Origin is not allowed');
      const user = await this.#user(req);
      if (!user) return end(401, 'Unauthorized');
      const t = await this.#target(sandbox, app, rest, '', user.id);
      if (!t) return end(404, 'Sandbox not found or not running');
      const headers = { ...this.#headers(req, 'app-cookie'), 'x-session-api-key': t.key };
      return this.#pipe(req, res, this.#send(t, req.method, headers), sandbox, app);
    }
    const t = await this.#target(sandbox, app, rest, url.search);
    if (!t) return end(404, 'Sandbox not found or not running');
    return this.#pipe(req, res, this.#send(t, req.method ?? 'GET', this.#headers(req, 'app-cookie')), sandbox, app);
  }

  #pipe(req: IncomingMessage, res: ServerResponse, up: ReturnType<typeof httpRequest>, sandbox: string, app: string): Promise<void> {
    return new Promise((ok, fail) => {
      up.on('error', fail);
      up.on('response', (r) => {
        const headers: Record<string, string | string[]> = {};
        for (const [k, v] of Object.entries(r.headers)) if (v !== undefined && k !== 'connection' && k !== 'keep-alive' && k !== 'transfer-encoding') headers[k] = v;
        // The app-session cookie stays scoped to this sandbox's app path on the ingress.
        const cookies = r.headers['set-cookie'];
        if (cookies) headers['set-cookie'] = cookies.map((c) => c.replace(/;\s*Path=\/app-backends\/[^;]*/i, `; Path=/sandboxes/${sandbox}/app-backends/${app}`));
        res.writeHead(r.statusCode ?? 502, headers);
        r.pipe(res);
        r.on('end', ok);
        r.on('error', fail);
      });
      req.pipe(up);
    });
  }

  /** WebSocket upgrades under the same paths: passed through as bytes once the agent server accepts. */
  upgrade = (req: IncomingMessage, socket: Duplex, head: Buffer): void => {
    const refuse = (code: number, text: string) => socket.end(`HTTP/1.1 ${code} ${text}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`);
    const url = split(req.url);
    const m = PATH.exec(url.path);
    if (!m || m[3] === '/session') return void refuse(404, 'Not Found');
    try {
      checkProxyPath(m[3] ?? '');
    } catch {
      return void refuse(400, 'Bad Request');
    }
    socket.on('error', () => undefined);
    void this.#target(m[1]!, m[2]!, m[3] ?? '', url.search).then(
      (t) => {
        if (!t) return refuse(404, 'Not Found');
        const headers = { ...this.#headers(req, 'app-cookie'), connection: 'Upgrade', upgrade: String(req.headers.upgrade ?? 'websocket') };
        const up = this.#send(t, req.method ?? 'GET', headers);
        up.on('error', () => refuse(502, 'Bad Gateway'));
        up.on('response', (r) => {
          // Refused upstream (403, …): the browser gets the same status.
          r.resume();
          refuse(r.statusCode ?? 502, r.statusMessage ?? 'Refused');
        });
        up.on('upgrade', (r, upSocket, upHead) => {
          const lines = [`HTTP/1.1 ${r.statusCode} ${r.statusMessage}`];
          for (let i = 0; i < r.rawHeaders.length; i += 2) lines.push(`${r.rawHeaders[i]}: ${r.rawHeaders[i + 1]}`);
          socket.write(`${lines.join('\r\n')}\r\n\r\n`);
          if (upHead.length) socket.write(upHead);
          if (head.length) upSocket.write(head);
          upSocket.on('error', () => socket.destroy());
          socket.on('close', () => upSocket.destroy());
          upSocket.on('close', () => socket.destroy());
          upSocket.pipe(socket).pipe(upSocket);
        });
        up.end();
      },
      (err: unknown) => {
        this.#d.log?.warn({ err }, 'app-backend relay: upgrade failed');
        refuse(502, 'Bad Gateway');
      },
    );
  };
}
