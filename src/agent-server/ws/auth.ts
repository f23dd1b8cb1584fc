// First-message authentication for the agent server's sockets, as /sockets/events does it:
// header X-Session-API-Key, or (old clients) ?session_api_key=, or a first frame
// {"type":"auth","session_api_key":...} within the timeout. A wrong key given with the upgrade is
// refused with HTTP 403 (refusedUpgrade); a failed first frame or a timeout closes with 4001.
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import type { RawData, WebSocket } from 'ws';
import { SESSION_HEADER, type SessionKeys } from '../http/auth.ts';

/**
 * A key given with the upgrade (header or query) that is wrong is refused before the upgrade, with
 * HTTP 403, as OpenHands does (it closes the socket before accepting it). True when it answered.
 */
export function refusedUpgrade(req: IncomingMessage, url: URL, keys: SessionKeys, socket: Duplex): boolean {
  if (!keys.enabled) return false;
  const given = req.headers[SESSION_HEADER] ?? url.searchParams.get('session_api_key') ?? undefined;
  if (given === undefined || keys.matches(Array.isArray(given) ? given[0] : given)) return false;
  socket.end('HTTP/1.1 403 Forbidden\r\nConnection: close\r\nContent-Length: 0\r\n\r\n');
  return true;
}

/** Calls `accept` once the socket is authenticated; closes it with 4001 otherwise. */
export function authenticateSocket(ws: WebSocket, req: IncomingMessage, url: URL, keys: SessionKeys, timeoutMs: number, accept: () => void): void {
  const given = req.headers[SESSION_HEADER] ?? url.searchParams.get('session_api_key') ?? undefined;
  if (!keys.enabled) return accept();
  if (given !== undefined) {
    if (keys.matches(Array.isArray(given) ? given[0] : given)) return accept();
    ws.close(4001, 'Authentication failed');
    return;
  }
  const timer = setTimeout(() => ws.close(4001, 'Authentication timeout'), timeoutMs);
  ws.once('close', () => clearTimeout(timer));
  ws.once('message', (data: RawData) => {
    clearTimeout(timer);
    let frame: { type?: unknown; session_api_key?: unknown } | undefined;
    try {
      frame = JSON.parse(data.toString()) as typeof frame;
    } catch {
      frame = undefined;
    }
    if (frame?.type === 'auth' && keys.matches(frame.session_api_key)) accept();
    else ws.close(4001, 'Authentication failed');
  });
}
