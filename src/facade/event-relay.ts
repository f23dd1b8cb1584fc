// `/api/v1/conversation/{id}/events/socket`: a conversation's live events, relayed by the facade
// from its sandbox's agent server (`/sockets/events/{id}`). Browsers use this one: in a cluster
// they cannot reach a sandbox's internal address, and so they never hold its session key either.
// The facade dials the agent server where the control plane does (runtime/dial.ts).
//
// Protocol, as the agent server's own socket: the first frame is {"type":"auth","api_key":...}
// (a key never goes in a URL that gets logged), or, with OIDC login on, {"type":"auth",
// "csrf_token":...} beside the session cookie the upgrade carries: the session's CSRF token, as
// every state-changing request must show (a cookie alone could be another site's doing); the query (after_event_id, after_seq,
// resend_mode, after_timestamp) is passed on, so a client resumes after the last event it saw.
// Close codes: 4001 authentication failed, 4004 no such conversation (or not the caller's),
// 4409 its sandbox does not serve now (paused, starting, gone: try again later; the relay never
// resumes a sandbox), 4502 its agent server cannot be reached; the agent server's own codes
// (4400 unknown cursor, 1013 too many connections, ...) are passed on.
import { timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, Server } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocket, WebSocketServer, type RawData } from 'ws';
import { ConversationKind } from '../api/conversation.ts';
import { SandboxKind } from '../api/sandbox.ts';
import { agentServerDialUrl } from '../runtime/dial.ts';
import type { Facade } from './context.ts';
import type { AppUser } from './db/types.ts';
import { sessionPolicy } from './login/routes.ts';
import { hashSecret, SESSION_COOKIE } from './login/session.ts';
import { getOwned, sandboxNameOf, sandboxPhase, sessionKeyOf } from './resources.ts';

export const RELAY_PATH = /^\/api\/v1\/conversation\/([0-9a-f]{32})\/events\/socket$/;
const PASSED_QUERY = ['after_event_id', 'after_seq', 'resend_mode', 'after_timestamp'];

export interface RelayOptions {
  authTimeoutMs?: number;
  pingIntervalMs?: number;
  /** Upstream reading pauses while this much is still to be written to the browser. */
  maxBufferedBytes?: number;
}

export class EventRelay {
  readonly #d: Facade['d'];
  readonly #facade: Facade;
  readonly #o: Required<RelayOptions>;
  readonly #wss = new WebSocketServer({ noServer: true, maxPayload: 64 * 1024 });
  readonly #open = new Set<WebSocket>();
  readonly #ping: NodeJS.Timeout;
  readonly #alive = new WeakSet<WebSocket>();

  constructor(facade: Facade, o: RelayOptions = {}) {
    this.#facade = facade;
    this.#d = facade.d;
    this.#o = { authTimeoutMs: o.authTimeoutMs ?? 10_000, pingIntervalMs: o.pingIntervalMs ?? 30_000, maxBufferedBytes: o.maxBufferedBytes ?? 4 * 1024 * 1024 };
    // Heartbeat: a browser that did not answer the previous ping is gone; its upstream goes too.
    this.#ping = setInterval(() => {
      for (const ws of this.#open) {
        if (!this.#alive.has(ws)) ws.terminate();
        else {
          this.#alive.delete(ws);
          ws.ping();
        }
      }
    }, this.#o.pingIntervalMs);
    this.#ping.unref();
  }

  attach(server: Server): void {
    server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
      const url = new URL(req.url ?? '/', 'http://localhost');
      const m = RELAY_PATH.exec(url.pathname);
      if (!m) {
        socket.end('HTTP/1.1 404 Not Found\r\nConnection: close\r\nContent-Length: 0\r\n\r\n');
        return;
      }
      this.#wss.handleUpgrade(req, socket, head, (ws) => this.#authenticate(ws, url, m[1]!, sessionCookie(req)));
    });
  }

  async close(): Promise<void> {
    clearInterval(this.#ping);
    for (const ws of this.#open) ws.close(1001, 'Server shutting down');
    await new Promise<void>((resolve) => this.#wss.close(() => resolve()));
    for (const ws of this.#open) ws.terminate();
  }

  #authenticate(ws: WebSocket, url: URL, id: string, cookie: string | undefined): void {
    this.#open.add(ws);
    this.#alive.add(ws);
    ws.on('pong', () => this.#alive.add(ws));
    ws.on('error', (err) => this.#d.log.debug({ err, conversationId: id }, 'relay: browser socket error'));
    ws.once('close', () => this.#open.delete(ws));
    const timer = setTimeout(() => ws.close(4001, 'Authentication timeout'), this.#o.authTimeoutMs);
    ws.once('close', () => clearTimeout(timer));
    ws.once('message', (data: RawData) => {
      clearTimeout(timer);
      let frame: { type?: unknown; api_key?: unknown; csrf_token?: unknown } | undefined;
      try {
        frame = JSON.parse(data.toString()) as typeof frame;
      } catch {
        frame = undefined;
      }
      if (frame?.type !== 'auth') return ws.close(4001, 'Authentication failed');
      void this.#userOf(frame, cookie)
        .then((user) => (user ? this.#connect(ws, url, id, user) : ws.close(4001, 'Authentication failed')))
        .catch((err: unknown) => {
          this.#d.log.warn({ err, conversationId: id }, 'relay: could not connect');
          if (ws.readyState === WebSocket.OPEN) ws.close(1011, 'Relay failed');
        });
    });
  }

  /** The caller: by API key, or by the session cookie with that session's CSRF token. */
  async #userOf(frame: { api_key?: unknown; csrf_token?: unknown }, cookie: string | undefined): Promise<AppUser | undefined> {
    if (typeof frame.api_key === 'string') return this.#d.db.findUserByApiKey(frame.api_key);
    const oidc = this.#facade.oidc;
    if (!oidc || cookie === undefined || typeof frame.csrf_token !== 'string') return undefined;
    const session = await this.#d.db.logins.findSession(hashSecret(cookie), sessionPolicy(oidc).idleMs);
    return session && sameToken(frame.csrf_token, session.csrfToken) ? session.user : undefined;
  }

  async #connect(ws: WebSocket, url: URL, id: string, user: AppUser): Promise<void> {
    const d = this.#d;
    const conv = await getOwned(d, ConversationKind, user.id, id);
    if (!conv || conv.metadata.deletionTimestamp) return ws.close(4004, 'Conversation not found');
    const name = sandboxNameOf(conv);
    const sb = name ? await d.store.get(SandboxKind, d.namespace, name) : undefined;
    const base = agentServerDialUrl(sb);
    const key = name ? await sessionKeyOf(d, name) : undefined;
    if (!sb || sandboxPhase(sb) !== 'RUNNING' || !base || !key) return ws.close(4409, `The sandbox does not serve now (${sandboxPhase(sb)})`);
    if (ws.readyState !== WebSocket.OPEN) return;

    const target = new URL(`/sockets/events/${id}`, base);
    target.protocol = target.protocol === 'https:' ? 'wss:' : 'ws:';
    for (const p of PASSED_QUERY) {
      const v = url.searchParams.get(p);
      if (v !== null) target.searchParams.set(p, v);
    }
    const up = new WebSocket(target, { headers: { 'x-session-api-key': key }, maxPayload: 64 * 1024 * 1024, handshakeTimeout: 10_000 });
    let opened = false;
    up.on('open', () => (opened = true));
    up.on('message', (data: RawData, isBinary: boolean) => {
      if (ws.readyState !== WebSocket.OPEN) return;
      ws.send(data, { binary: isBinary });
      // Backpressure: a slow browser stops the relay reading, and so the agent server's bounded
      // per-client queue applies to it as to a direct client.
      if (ws.bufferedAmount > this.#o.maxBufferedBytes) {
        up.pause();
        const drain = setInterval(() => {
          if (ws.readyState !== WebSocket.OPEN || ws.bufferedAmount <= this.#o.maxBufferedBytes / 2) {
            clearInterval(drain);
            up.resume();
          }
        }, 20);
      }
    });
    up.on('close', (code: number, reason: Buffer) => {
      if (ws.readyState !== WebSocket.OPEN) return;
      // Codes a browser may not send (1005, 1006, 1015) become 4502: the agent server went away.
      const passable = code === 1000 || code === 1001 || code === 1011 || code === 1013 || (code >= 4000 && code < 5000);
      ws.close(passable ? code : 4502, passable ? reason.toString() : 'The agent server closed the connection');
    });
    up.on('error', (err) => {
      d.log.debug({ err, conversationId: id }, 'relay: agent server socket error');
      if (!opened && ws.readyState === WebSocket.OPEN) ws.close(4502, 'The agent server cannot be reached');
    });
    // The relay is read-only: messages go through POST /app-conversations/{id}/send-message.
    ws.on('message', () => undefined);
    ws.once('close', () => {
      if (up.readyState === WebSocket.CONNECTING || up.readyState === WebSocket.OPEN) up.terminate();
    });
  }
}

function sameToken(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/** The session cookie's value in an upgrade request (no Koa context here). */
function sessionCookie(req: IncomingMessage): string | undefined {
  for (const part of (req.headers.cookie ?? '').split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === SESSION_COOKIE) return decodeURIComponent(part.slice(eq + 1).trim());
  }
  return undefined;
}
