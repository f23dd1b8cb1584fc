// The browser's way to a Canvas App backend (OpenHands 1.58 canvas_extensions/bridge.py's contract).
// A Canvas page holding the session key asks POST /app-backends/<name>/session on the app ingress
// origin (a browser origin separate from the control one, so an app's pages can never read the
// agent server's API); it gets a random, short-lived token as an HttpOnly, Secure, Partitioned
// cookie scoped to /app-backends/<name>. Requests under that path carrying the cookie are proxied,
// HTTP and WebSocket, to that extension's own backend on 127.0.0.1 and nowhere else: the port comes
// from the backend registry, never from the request, the path cannot climb out (no `.`/`..`
// segments, however encoded), redirects are refused, and the session key and cookies never reach
// the backend. Sessions die at their TTL, when revoked, and when the backend is stopped or the
// extension disabled or uninstalled; their live sockets are closed then.
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { request, type IncomingHttpHeaders, type IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import type { Context } from 'koa';
import { WebSocket, WebSocketServer } from 'ws';
import { BadGateway, BadRequest, Conflict, Forbidden, Unauthorized, Unavailable } from '../../api/errors.ts';
import { APP_BACKEND_SESSION_COOKIE, EXTENSION_NAME_PATTERN, type AppBackendSessionResponse } from '../../api/agent-server/canvas.ts';

export const SESSION_TTL_SECONDS = 5 * 60;
const IFRAME_SANDBOX = 'allow-forms allow-modals allow-popups allow-same-origin allow-scripts';
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);
const LOOPBACK = new Set(['localhost', '127.0.0.1', '::1', '[::1]']);
/** Never forwarded either way: hop-by-hop headers, and every credential of the agent server. */
const DROPPED = new Set(['authorization', 'x-session-api-key', 'cookie', 'set-cookie', 'connection', 'keep-alive', 'proxy-authenticate', 'proxy-authorization', 'te', 'trailer', 'transfer-encoding', 'upgrade', 'host']);
const AUTH_QUERY = new Set(['session_api_key', 'x-session-api-key', 'authorization']);
const NAME = new RegExp(EXTENSION_NAME_PATTERN.slice(0, -1).replace('^', ''));
const PATH = new RegExp(`^/app-backends/(${NAME.source})(/.*)?$`);

export interface BridgeOptions {
  /** OH_APP_BACKEND_PUBLIC_URL: the separate browser origin the app backends are reached on. */
  publicUrl?: string;
  /** Control-page origins allowed to open a session, besides loopback ones (OH_ALLOW_CORS_ORIGINS). */
  allowedOrigins?: string[];
  /** OH_TRUST_FORWARDED_HEADERS: a TLS-terminating proxy sets X-Forwarded-Proto/Host. */
  trustForwarded?: boolean;
  now?: () => number;
  ttlSeconds?: number;
}

interface Session {
  digest: Buffer;
  name: string;
  port: number;
  expiresAt: number;
  sockets: Set<WebSocket>;
  timer: NodeJS.Timeout;
}

function origin(value: string | undefined): string | undefined {
  if (!value) return undefined;
  try {
    const u = new URL(value);
    if ((u.protocol !== 'http:' && u.protocol !== 'https:') || !u.hostname) return undefined;
    return `${u.protocol}//${u.hostname.toLowerCase()}:${u.port || (u.protocol === 'https:' ? '443' : '80')}`;
  } catch {
    return undefined;
  }
}

/** Decoded to a fixed point (as the backend's own parser may decode again): no `.`/`..` segment, no backslash. */
export function checkProxyPath(raw: string): void {
  let c = raw;
  for (let i = 0; ; i++) {
    let d: string;
    try {
      d = decodeURIComponent(c);
    } catch {
      throw new BadRequest('Invalid backend path');
    }
    if (d === c) break;
    if (i > raw.length) throw new BadRequest('Invalid backend path');
    c = d;
  }
  if (c.includes('\\') || c.includes('\0') || c.split('/').some((p) => p === '.' || p === '..')) throw new BadRequest('Invalid backend path');
}

function stripAuthQuery(search: string): string {
  const q = new URLSearchParams(search);
  for (const k of [...q.keys()]) if (AUTH_QUERY.has(k.toLowerCase())) q.delete(k);
  const s = q.toString();
  return s ? `?${s}` : '';
}

function forwardHeaders(h: IncomingHttpHeaders): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const [k, v] of Object.entries(h)) if (v !== undefined && !DROPPED.has(k) && !k.startsWith('sec-websocket-') && !k.startsWith('x-forwarded-')) out[k] = v;
  return out;
}

export class AppBackendBridge {
  readonly #o: BridgeOptions;
  readonly #ready: (name: string) => number | undefined;
  readonly #sessions = new Map<string, Session>();
  /** The subprotocol the backend chose for an upgrade in progress, answered to the browser. */
  readonly #chosen = new WeakMap<IncomingMessage, string>();
  readonly #wss = new WebSocketServer({ noServer: true, handleProtocols: (_offered, req) => this.#chosen.get(req) || false });

  constructor(ready: (name: string) => number | undefined, o: BridgeOptions) {
    this.#ready = ready;
    this.#o = o;
  }

  #now(): number {
    return (this.#o.now ?? Date.now)();
  }

  #publicUrl(): string {
    const v = this.#o.publicUrl;
    if (!v) throw new Unavailable('Canvas App backend ingress is not configured (OH_APP_BACKEND_PUBLIC_URL)');
    if (!origin(v)) throw new Unavailable('Canvas App backend ingress is misconfigured');
    return v.replace(/\/+$/, '');
  }

  /** The origin this request reached, from the connection (forwarded headers only when trusted). */
  #requestOrigin(headers: IncomingHttpHeaders, encrypted: boolean): string | undefined {
    const first = (v: string | string[] | undefined) => (Array.isArray(v) ? v[0] : v)?.split(',')[0]!.trim();
    const proto = (this.#o.trustForwarded && first(headers['x-forwarded-proto'])) || (encrypted ? 'https' : 'http');
    const host = (this.#o.trustForwarded && first(headers['x-forwarded-host'])) || headers.host || '';
    return origin(`${proto === 'wss' ? 'https' : proto === 'ws' ? 'http' : proto}://${host}`);
  }

  #requireIngress(headers: IncomingHttpHeaders, encrypted: boolean, publicUrl: string): void {
    if (this.#requestOrigin(headers, encrypted) !== origin(publicUrl)) throw new Misdirected('Canvas App request must use the configured ingress origin');
  }

  #requireBootstrapOrigin(ctx: Context, publicUrl: string): void {
    this.#requireIngress(ctx.req.headers, ctx.protocol === 'https', publicUrl);
    const o = ctx.get('origin');
    const norm = origin(o);
    const host = norm ? new URL(o).hostname : undefined;
    const allowed = norm !== undefined && (LOOPBACK.has(host!) || (this.#o.allowedOrigins ?? []).some((a) => origin(a) === norm));
    if (!allowed) throw new Forbidden('Origin is not allowed');
    if (norm === origin(publicUrl)) throw new Conflict('Canvas App ingress must use a separate browser origin');
  }

  #readyPort(name: string): number {
    const port = this.#ready(name);
    if (port === undefined) throw new Unavailable('Canvas App backend is not ready');
    return port;
  }

  static #digest(token: string): Buffer {
    return createHash('sha256').update(token).digest();
  }

  #authorize(token: string | undefined, name: string, port: number): Session | undefined {
    if (!token) return undefined;
    const d = AppBackendBridge.#digest(token);
    const s = this.#sessions.get(d.toString('hex'));
    if (!s || !timingSafeEqual(s.digest, d)) return undefined;
    if (s.expiresAt <= this.#now()) {
      this.#drop(d.toString('hex'));
      return undefined;
    }
    return s.name === name && s.port === port ? s : undefined;
  }

  #drop(key: string): void {
    const s = this.#sessions.get(key);
    if (!s) return;
    this.#sessions.delete(key);
    clearTimeout(s.timer);
    // 1000, as OpenHands closes them: the session is over, not the client at fault.
    for (const ws of s.sockets) ws.close(1000, 'App backend session ended');
  }

  /** Stopping, disabling or uninstalling an app ends its browser sessions and their sockets. */
  revokeApp(name: string): void {
    for (const [k, s] of this.#sessions) if (s.name === name) this.#drop(k);
  }

  #cookie(ctx: Context, name: string, value: string, maxAge: number): void {
    const secure = this.#requestOrigin(ctx.req.headers, ctx.protocol === 'https');
    const u = secure ? new URL(secure) : undefined;
    if (!u || (u.protocol !== 'https:' && !LOOPBACK.has(u.hostname))) throw new Unavailable('Canvas App sessions require HTTPS or a loopback secure context');
    ctx.append('Set-Cookie', `${APP_BACKEND_SESSION_COOKIE}=${value === '' ? '""' : value}; HttpOnly; Max-Age=${maxAge}; Path=/app-backends/${name}; SameSite=none; Secure; Partitioned`);
  }

  createSession(ctx: Context, name: string): AppBackendSessionResponse {
    const publicUrl = this.#publicUrl();
    this.#requireBootstrapOrigin(ctx, publicUrl);
    const port = this.#readyPort(name);
    const token = randomBytes(32).toString('base64url');
    const digest = AppBackendBridge.#digest(token);
    const ttl = (this.#o.ttlSeconds ?? SESSION_TTL_SECONDS) * 1000;
    const expiresAt = this.#now() + ttl;
    this.#cookie(ctx, name, token, Math.round(ttl / 1000));
    const key = digest.toString('hex');
    // Expiry is enforced on its own: a bridged socket never asks again.
    const timer = setTimeout(() => this.#drop(key), ttl);
    timer.unref();
    this.#sessions.set(key, { digest, name, port, expiresAt, sockets: new Set(), timer });
    return { ingress_url: `${publicUrl}/app-backends/${name}/`, expires_at: new Date(expiresAt).toISOString(), iframe_sandbox: IFRAME_SANDBOX };
  }

  deleteSession(ctx: Context, name: string): void {
    const publicUrl = this.#publicUrl();
    this.#requireBootstrapOrigin(ctx, publicUrl);
    const token = ctx.cookies.get(APP_BACKEND_SESSION_COOKIE);
    if (token) this.#drop(AppBackendBridge.#digest(token).toString('hex'));
    this.#cookie(ctx, name, '', 0);
    ctx.status = 204;
  }

  /** Proxies one HTTP request (its body streamed) to the app's backend. */
  async proxyHttp(ctx: Context, name: string): Promise<void> {
    const rest = ctx.path.slice(`/app-backends/${name}`.length);
    checkProxyPath(rest);
    const publicUrl = this.#publicUrl();
    this.#requireIngress(ctx.req.headers, ctx.protocol === 'https', publicUrl);
    if (!SAFE_METHODS.has(ctx.method) && origin(ctx.get('origin')) !== origin(publicUrl)) throw new Forbidden('Origin is not allowed');
    const port = this.#readyPort(name);
    if (!this.#authorize(ctx.cookies.get(APP_BACKEND_SESSION_COOKIE), name, port)) throw new Unauthorized('Unauthorized');
    const path = (rest.startsWith('/') ? rest : `/${rest}`) + stripAuthQuery(ctx.querystring);
    const upstream = await new Promise<IncomingMessage>((ok, fail) => {
      const req = request({ host: '127.0.0.1', port, method: ctx.method, path, headers: forwardHeaders(ctx.req.headers) }, ok);
      req.on('error', () => fail(new BadGateway('Canvas App backend unreachable')));
      ctx.req.pipe(req);
    });
    const status = upstream.statusCode ?? 502;
    if (status >= 300 && status < 400 && upstream.headers.location) {
      upstream.resume();
      throw new BadGateway('Upstream redirect is not allowed');
    }
    ctx.status = status;
    ctx.body = upstream;
    for (const [k, v] of Object.entries(upstream.headers)) if (v !== undefined && !DROPPED.has(k) && k !== 'date' && k !== 'server') ctx.set(k, v);
  }

  /** Takes the upgrade of a path under /app-backends/; false when the path is not one. */
  handleUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer): boolean {
    const url = new URL(req.url ?? '/', 'http://localhost');
    const m = PATH.exec(url.pathname);
    if (!m) return false;
    const name = m[1]!;
    const refuse = (code: number, text: string) => socket.end(`HTTP/1.1 ${code} ${text}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`);
    let session: Session | undefined;
    let port: number;
    try {
      checkProxyPath(m[2] ?? '');
      const publicUrl = this.#publicUrl();
      this.#requireIngress(req.headers, 'encrypted' in socket && Boolean(socket.encrypted), publicUrl);
      if (origin(req.headers.origin) !== origin(publicUrl)) throw new Forbidden('Origin is not allowed');
      port = this.#readyPort(name);
      const cookie = /(?:^|;\s*)oh_app_backend_session=([^;]*)/.exec(req.headers.cookie ?? '')?.[1];
      session = this.#authorize(cookie, name, port);
    } catch {
      refuse(403, 'Forbidden');
      return true;
    }
    if (!session) {
      refuse(403, 'Forbidden');
      return true;
    }
    const s = session;
    // The backend first, with the subprotocols the browser offers: the browser is then answered with
    // the one the backend chose (a browser fails a socket whose requested protocol goes unanswered).
    const target = `ws://127.0.0.1:${port}${m[2] ?? '/'}${stripAuthQuery(url.search)}`;
    const offered = String(req.headers['sec-websocket-protocol'] ?? '').split(',').map((p) => p.trim()).filter(Boolean);
    const up = new WebSocket(target, offered, { headers: forwardHeaders(req.headers) as Record<string, string>, followRedirects: false });
    let settled = false; // the browser's upgrade is answered once
    const accept = (then: (client: WebSocket) => void) => {
      if (settled) return;
      settled = true;
      this.#chosen.set(req, up.protocol);
      this.#wss.handleUpgrade(req, socket, head, then);
    };
    // As OpenHands: a backend that refuses or cannot be reached closes the browser's socket with 1011.
    const fail = (why: string) => accept((client) => client.close(1011, why));
    up.once('unexpected-response', (_r, res) => {
      res.resume();
      up.terminate();
      fail('Canvas App backend refused the WebSocket');
    });
    up.once('error', () => fail('Canvas App backend unreachable'));
    up.once('open', () =>
      accept((client) => {
        s.sockets.add(client);
        const closeCode = (c: number) => (c >= 1000 && c <= 4999 && ![1004, 1005, 1006, 1015].includes(c) ? c : 1000);
        client.on('message', (data, binary) => up.readyState === WebSocket.OPEN && up.send(data, { binary }));
        up.on('message', (data, binary) => client.readyState === WebSocket.OPEN && client.send(data, { binary }));
        up.on('close', (code, reason) => client.readyState === WebSocket.OPEN && client.close(closeCode(code), reason));
        up.on('error', () => client.readyState === WebSocket.OPEN && client.close(1011, 'Canvas App backend unreachable'));
        client.on('close', (code, reason) => {
          s.sockets.delete(client);
          if (up.readyState === WebSocket.OPEN) up.close(closeCode(code), reason);
          else up.terminate();
        });
      }),
    );
    return true;
  }

  close(): void {
    for (const k of [...this.#sessions.keys()]) this.#drop(k);
    this.#wss.close();
  }
}

/** 421: the request reached this server on an origin other than the ingress. */
export class Misdirected extends Error {
  readonly status = 421;
  readonly expose = true;
}
