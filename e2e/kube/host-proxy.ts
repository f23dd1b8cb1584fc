// A test-only ingress: routes `<runtime_id>-runtime.<base>` (by Host header) to the local port the
// node agent runs that sandbox's Pod on. Clients in the test process reach it because
// `routeTestHostsToLoopback` resolves the test base domain to 127.0.0.1.
import dns from 'node:dns';
import { createServer, request, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Agent, setGlobalDispatcher, getGlobalDispatcher, type Dispatcher } from 'undici';

export interface HostProxy {
  port: number;
  close(): Promise<void>;
}

export interface HostProxyOptions {
  /**
   * Called once the sandbox has answered a request; while the promise it returns is pending the
   * answer is held back from the caller (the sandbox has acted, the caller does not know yet).
   */
  holdAnswer?: (req: IncomingMessage) => Promise<void> | undefined;
}

export async function startHostProxy(domain: string, portOf: (runtimeId: string) => number | undefined, opts: HostProxyOptions = {}): Promise<HostProxy> {
  const suffix = `-runtime.${domain}`;
  const server: Server = createServer((req, res) => {
    const host = (req.headers.host ?? '').replace(/:\d+$/, '');
    const runtimeId = host.endsWith(suffix) ? host.slice(0, -suffix.length) : undefined;
    const port = runtimeId ? portOf(runtimeId) : undefined;
    if (!port) {
      res.writeHead(502, { 'content-type': 'application/json' }).end(JSON.stringify({ detail: `no sandbox serves ${host}` }));
      return;
    }
    const upstream = request({ host: '127.0.0.1', port, path: req.url, method: req.method, headers: req.headers }, async (up) => {
      const hold = opts.holdAnswer?.(req);
      if (hold) await hold;
      if (res.destroyed) return void up.resume(); // the caller is gone (killed while held)
      res.writeHead(up.statusCode ?? 502, up.headers);
      up.pipe(res);
    });
    upstream.on('error', () => res.headersSent || res.writeHead(502).end());
    req.pipe(upstream);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    port: (server.address() as AddressInfo).port,
    close: () => new Promise<void>((r) => {
      server.close(() => r());
      server.closeAllConnections();
    }),
  };
}

/** Makes fetch in this process resolve `*.<domain>` to 127.0.0.1 (there is no DNS for test hosts). Returns an undo. */
export function routeTestHostsToLoopback(domain: string): () => void {
  const previous: Dispatcher = getGlobalDispatcher();
  setGlobalDispatcher(
    new Agent({
      connect: {
        lookup: (hostname, options, callback) => {
          if (hostname === domain || hostname.endsWith(`.${domain}`)) {
            const all = (options as { all?: boolean }).all;
            if (all) (callback as (e: null, a: { address: string; family: number }[]) => void)(null, [{ address: '127.0.0.1', family: 4 }]);
            else (callback as (e: null, a: string, f: number) => void)(null, '127.0.0.1', 4);
            return;
          }
          dns.lookup(hostname, options, callback);
        },
      },
    }),
  );
  return () => setGlobalDispatcher(previous);
}
