// `/sockets/events/{conversation_id}` on the same HTTP server as the REST API.
// Auth: header X-Session-API-Key, or a first frame {"type":"auth","session_api_key":...} within
// the auth timeout, or (old clients) ?session_api_key= which is never logged. Failure: 4001.
// Unknown conversation: 4004. Then a full_state snapshot, the replay asked for, and live events.
import type { IncomingMessage, Server } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type RawData, type WebSocket } from 'ws';
import { SendMessageRequest } from '../../api/agent-server/index.ts';
import { AgentyardError } from '../../api/errors.ts';
import { newEventBase } from '../../api/events/index.ts';
import { parseValue } from '../../api/events/validate.ts';
import type { Logger } from '../../util/log.ts';
import type { EventBus } from '../conversation/bus.ts';
import type { ConversationService } from '../conversation/service.ts';
import { SESSION_HEADER, type SessionKeys } from '../http/auth.ts';
import type { EventStore } from '../store/event-store.ts';
import { normalizeTimestamp } from '../store/wire.ts';
import { refusedUpgrade } from './auth.ts';
import { BASH_SOCKET_PATH } from './bash-socket.ts';
import { SocketClient, type ClientLimits } from './client.ts';

export interface EventSocketOptions extends Partial<ClientLimits> {
  service: ConversationService;
  events: EventStore;
  bus: EventBus;
  keys: SessionKeys;
  log: Logger;
  authTimeoutMs?: number;
  pingIntervalMs?: number;
  maxSubscribers?: number;
  onActivity(): void;
}

const PATH = /^\/sockets\/events\/([^/]+)\/?$/;

/** Where to start replaying (a sequence number to resume after), or a close reason. */
function replayStart(url: URL, events: EventStore, conversationId: string): number | { reason: string } {
  const q = url.searchParams;
  const afterSeq = q.get('after_seq');
  // A cursor past the head (a client that saw a store since reset) resumes at the head.
  if (afterSeq !== null) return /^\d+$/.test(afterSeq) ? Math.min(Number(afterSeq), events.lastSeq(conversationId)) : { reason: 'after_seq must be an integer >= 0' };
  const afterId = q.get('after_event_id');
  if (afterId !== null) return events.get(conversationId, afterId)?.seq ?? { reason: 'Unknown after_event_id' };
  const mode = q.get('resend_mode') ?? (q.get('resend_all')?.toLowerCase() === 'true' ? 'all' : null);
  if (mode === 'all') return 0;
  if (mode === 'since') {
    const ts = normalizeTimestamp(q.get('after_timestamp') ?? '');
    if (ts === undefined) return { reason: 'resend_mode=since needs a valid after_timestamp' };
    return events.firstSeqAtOrAfter(conversationId, ts) - 1;
  }
  return events.lastSeq(conversationId);
}

export class EventSockets {
  readonly #o: EventSocketOptions;
  readonly #wss = new WebSocketServer({ noServer: true, maxPayload: 1024 * 1024 });
  readonly #clients = new Set<SocketClient>();
  readonly #pending = new Set<WebSocket>();
  readonly #limits: ClientLimits;
  readonly #ping: NodeJS.Timeout;

  constructor(o: EventSocketOptions) {
    this.#o = o;
    this.#limits = {
      maxQueueEvents: o.maxQueueEvents ?? 1000,
      maxQueueBytes: o.maxQueueBytes ?? 16 * 1024 * 1024,
      closeGraceMs: o.closeGraceMs ?? 5000,
    };
    // Heartbeat: a peer that did not answer the previous ping is gone (or not reading at all).
    this.#ping = setInterval(() => {
      for (const c of this.#clients) {
        if (!c.alive) c.ws.terminate();
        else {
          c.alive = false;
          c.ws.ping();
        }
      }
    }, o.pingIntervalMs ?? 30_000);
    this.#ping.unref();
  }

  attach(server: Server): void {
    server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
      const url = new URL(req.url ?? '/', 'http://localhost');
      const m = PATH.exec(url.pathname);
      if (!m) {
        if (BASH_SOCKET_PATH.test(url.pathname)) return; // BashSockets answers it
        if (url.pathname.startsWith('/app-backends/')) return; // the Canvas App backend proxy answers it
        socket.end('HTTP/1.1 404 Not Found\r\nConnection: close\r\nContent-Length: 0\r\n\r\n');
        return;
      }
      if (refusedUpgrade(req, url, this.#o.keys, socket)) return;
      this.#wss.handleUpgrade(req, socket, head, (ws) => this.#authenticate(ws, req, url, decodeURIComponent(m[1]!), socket));
    });
  }

  async close(): Promise<void> {
    clearInterval(this.#ping);
    for (const ws of this.#pending) ws.terminate();
    for (const c of this.#clients) c.close(1001, 'Server shutting down');
    await new Promise<void>((resolve) => this.#wss.close(() => resolve()));
    for (const c of this.#clients) c.ws.terminate();
  }

  #authenticate(ws: WebSocket, req: IncomingMessage, url: URL, conversationId: string, socket: Duplex): void {
    const keys = this.#o.keys;
    const given = req.headers[SESSION_HEADER] ?? url.searchParams.get('session_api_key') ?? undefined;
    if (!keys.enabled) return this.#accept(ws, url, conversationId, socket);
    if (given !== undefined) {
      if (keys.matches(Array.isArray(given) ? given[0] : given)) return this.#accept(ws, url, conversationId, socket);
      ws.close(4001, 'Authentication failed');
      return;
    }
    this.#pending.add(ws);
    const timer = setTimeout(() => ws.close(4001, 'Authentication timeout'), this.#o.authTimeoutMs ?? 10_000);
    ws.once('close', () => {
      clearTimeout(timer);
      this.#pending.delete(ws);
    });
    ws.once('message', (data: RawData) => {
      clearTimeout(timer);
      this.#pending.delete(ws);
      let frame: { type?: unknown; session_api_key?: unknown } | undefined;
      try {
        frame = JSON.parse(data.toString()) as typeof frame;
      } catch {
        frame = undefined;
      }
      if (frame?.type === 'auth' && keys.matches(frame.session_api_key)) this.#accept(ws, url, conversationId, socket);
      else ws.close(4001, 'Authentication failed');
    });
  }

  #accept(ws: WebSocket, url: URL, conversationId: string, socket: Duplex): void {
    const rt = this.#o.service.find(conversationId);
    if (!rt) return ws.close(4004, 'Conversation not found');
    if (this.#o.bus.count(rt.conversationId) >= (this.#o.maxSubscribers ?? 50)) {
      return ws.close(1013, 'Too many connections for this conversation');
    }
    const start = replayStart(url, this.#o.events, rt.conversationId);
    if (typeof start !== 'number') return ws.close(4400, start.reason);
    const client = new SocketClient(ws, rt.conversationId, this.#o.events, this.#limits, socket);
    this.#clients.add(client);
    ws.on('close', () => this.#clients.delete(client));
    ws.on('pong', () => (client.alive = true));
    ws.on('message', (data: RawData) => void this.#onFrame(client, data));
    ws.on('error', (err) => this.#o.log.debug({ err, conversationId }, 'websocket error'));
    client.start(this.#o.bus, rt.fullState(), start);
  }

  /** A client frame: a user Message (sent with run=true); redundant auth frames are ignored. */
  async #onFrame(client: SocketClient, data: RawData): Promise<void> {
    try {
      const frame = JSON.parse(data.toString()) as Record<string, unknown>;
      if (frame['type'] === 'auth') return;
      const msg = parseValue(SendMessageRequest, { role: frame['role'], content: frame['content'] }, { clean: true });
      // Frames are taken in order: each starts its message before the next frame is read.
      await this.#o.service.get(client.conversationId).sendMessage(msg, true);
      this.#o.onActivity();
    } catch (err) {
      const code = err instanceof AgentyardError ? err.code : err instanceof SyntaxError ? 'JSONDecodeError' : 'InternalError';
      const detail = err instanceof AgentyardError ? JSON.stringify(err.detail) : err instanceof SyntaxError ? 'Frame is not JSON' : 'Internal error';
      if (!(err instanceof AgentyardError) && !(err instanceof SyntaxError)) this.#o.log.error({ err }, 'websocket frame failed');
      client.ws.send(JSON.stringify({ ...newEventBase('environment'), code, detail, kind: 'ServerErrorEvent' }));
    }
  }
}
