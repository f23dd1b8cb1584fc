// First-message authentication for the agent server's sockets, as /sockets/events does it:
// header X-Session-API-Key, or (old clients) ?session_api_key=, or a first frame
// {"type":"auth","session_api_key":...} within the timeout. Failure closes with 4001.
import type { IncomingMessage } from 'node:http';
import type { RawData, WebSocket } from 'ws';
import { SESSION_HEADER, type SessionKeys } from '../http/auth.ts';

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
