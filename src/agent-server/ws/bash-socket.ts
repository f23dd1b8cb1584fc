// `/sockets/bash-events`: every BashCommand and BashOutput as it is recorded (after the stored ones
// with ?resend_mode=all), one JSON event per frame. A client frame is an ExecuteBashRequest that
// starts a command; a frame that is not gets a BashError back. Auth as /sockets/events.
import type { IncomingMessage, Server } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type RawData, type WebSocket } from 'ws';
import { ExecuteBashRequest, type BashError } from '../../api/agent-server/bash.ts';
import { AgentyardError } from '../../api/errors.ts';
import { parseValue } from '../../api/events/validate.ts';
import type { Logger } from '../../util/log.ts';
import { hexId, type BashService } from '../bash/service.ts';
import type { BashEventStore } from '../bash/store.ts';
import type { SessionKeys } from '../http/auth.ts';
import { authenticateSocket, refusedUpgrade } from './auth.ts';

export const BASH_SOCKET_PATH = /^\/sockets\/bash-events\/?$/;

const REPLAY_PAGE = 100;
/** A client holding more than this unsent is too slow: closed with 1013 (it can re-read with search). */
const MAX_BUFFERED = 64 * 1024 * 1024;

export interface BashSocketOptions {
  service: BashService;
  store: BashEventStore;
  keys: SessionKeys;
  log: Logger;
  authTimeoutMs?: number;
  onActivity(): void;
}

export class BashSockets {
  readonly #o: BashSocketOptions;
  readonly #wss = new WebSocketServer({ noServer: true, maxPayload: 1024 * 1024 });
  readonly #sockets = new Set<WebSocket>();

  constructor(o: BashSocketOptions) {
    this.#o = o;
  }

  attach(server: Server): void {
    server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
      const url = new URL(req.url ?? '/', 'http://localhost');
      if (!BASH_SOCKET_PATH.test(url.pathname)) return; // other paths belong to the events sockets
      if (refusedUpgrade(req, url, this.#o.keys, socket)) return;
      this.#wss.handleUpgrade(req, socket, head, (ws) => {
        this.#sockets.add(ws);
        ws.on('close', () => this.#sockets.delete(ws));
        ws.on('error', (err) => this.#o.log.debug({ err }, 'bash websocket error'));
        authenticateSocket(ws, req, url, this.#o.keys, this.#o.authTimeoutMs ?? 10_000, () => this.#accept(ws, url));
      });
    });
  }

  async close(): Promise<void> {
    for (const ws of this.#sockets) ws.close(1001, 'Server shutting down');
    await new Promise<void>((resolve) => this.#wss.close(() => resolve()));
    for (const ws of this.#sockets) ws.terminate();
  }

  #accept(ws: WebSocket, url: URL): void {
    const q = url.searchParams;
    const all = q.get('resend_mode') === 'all' || q.get('resend_all')?.toLowerCase() === 'true';
    const send = (json: unknown) => {
      if (ws.readyState !== ws.OPEN) return;
      if (ws.bufferedAmount > MAX_BUFFERED) return ws.close(1013, 'Client too slow');
      ws.send(JSON.stringify(json));
    };
    // Replay and subscribe in one synchronous step: store appends are synchronous too, so no
    // event is missed between the two or sent twice.
    if (all) {
      for (let seq = 0; ; ) {
        const page = this.#o.store.since(seq, REPLAY_PAGE);
        for (const p of page) send(p.event);
        if (page.length < REPLAY_PAGE) break;
        seq = page[page.length - 1]!.seq;
      }
    }
    const unsubscribe = this.#o.service.subscribe((event) => send(event));
    ws.on('close', unsubscribe);
    ws.on('message', (data: RawData) => this.#onFrame(ws, data, send));
  }

  #onFrame(ws: WebSocket, data: RawData, send: (json: unknown) => void): void {
    try {
      const frame = JSON.parse(data.toString()) as Record<string, unknown>;
      if (frame['type'] === 'auth') return;
      this.#o.service.start(parseValue(ExecuteBashRequest, frame, { clean: true }));
      this.#o.onActivity();
    } catch (err) {
      const error: BashError = {
        id: hexId(),
        timestamp: new Date().toISOString(),
        code: err instanceof AgentyardError ? err.code : err instanceof SyntaxError ? 'JSONDecodeError' : 'InternalError',
        detail: err instanceof AgentyardError ? JSON.stringify(err.detail) : err instanceof SyntaxError ? 'Frame is not JSON' : 'Internal error',
        kind: 'BashError',
      };
      if (!(err instanceof AgentyardError) && !(err instanceof SyntaxError)) this.#o.log.error({ err }, 'bash websocket frame failed');
      send(error);
    }
  }
}
