// A test-only ingress and Service network: routes, by Host header, the public sandbox host
// `<runtime_id>-runtime.<base>` (the ingress) and the in-cluster Service name
// `sandbox-<runtime_id>.<namespace>.svc` (cluster DNS + kube-proxy) to the local port the node agent
// runs that sandbox's Pod on. Clients reach it because `routeTestHostsToLoopback` resolves the test
// base domain to 127.0.0.1 and sends connections for `*.svc` to this proxy's port. WebSocket
// upgrades are routed the same way.
import dns from 'node:dns';
import { createServer, request, type IncomingMessage, type Server } from 'node:http';
import net, { type AddressInfo, type Socket } from 'node:net';
import { Agent, buildConnector, setGlobalDispatcher, getGlobalDispatcher, type Dispatcher } from 'undici';

export interface HostProxy {
  port: number;
  /** Every request routed, by Host: which address callers used (public host or Service). */
  requests: { host: string; method: string; path: string }[];
  close(): Promise<void>;
}

/** `sandbox-<id>.<namespace>.svc` → id (the Service name the KubernetesRuntime creates). */
const SERVICE_HOST = /^sandbox-(.+)\.[a-z0-9-]+\.svc$/;

export interface HostProxyOptions {
  /**
   * Called once the sandbox has answered a request; while the promise it returns is pending the
   * answer is held back from the caller (the sandbox has acted, the caller does not know yet).
   */
  holdAnswer?: (req: IncomingMessage) => Promise<void> | undefined;
}

export async function startHostProxy(domain: string, portOf: (runtimeId: string) => number | undefined, opts: HostProxyOptions = {}): Promise<HostProxy> {
  const suffix = `-runtime.${domain}`;
  const requests: HostProxy['requests'] = [];
  const server: Server = createServer((req, res) => {
    const host = (req.headers.host ?? '').replace(/:\d+$/, '');
    const runtimeId = host.endsWith(suffix) ? host.slice(0, -suffix.length) : SERVICE_HOST.exec(host)?.[1];
    requests.push({ host, method: req.method ?? '', path: req.url ?? '' });
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
  // WebSocket upgrades (the facade's event relay dials the agent server's socket by Service name):
  // routed by Host like requests, then bytes both ways.
  server.on('upgrade', (req: IncomingMessage, socket: Socket, head: Buffer) => {
    const host = (req.headers.host ?? '').replace(/:\d+$/, '');
    const runtimeId = host.endsWith(suffix) ? host.slice(0, -suffix.length) : SERVICE_HOST.exec(host)?.[1];
    requests.push({ host, method: `${req.method ?? ''} upgrade`, path: req.url ?? '' });
    const port = runtimeId ? portOf(runtimeId) : undefined;
    if (!port) return void socket.end('HTTP/1.1 502 Bad Gateway\r\nConnection: close\r\nContent-Length: 0\r\n\r\n');
    const upstream = net.connect(port, '127.0.0.1', () => {
      const lines = [`${req.method} ${req.url} HTTP/1.1`];
      for (let i = 0; i < req.rawHeaders.length; i += 2) lines.push(`${req.rawHeaders[i]}: ${req.rawHeaders[i + 1]}`);
      upstream.write(`${lines.join('\r\n')}\r\n\r\n`);
      if (head.length > 0) upstream.write(head);
      upstream.pipe(socket);
      socket.pipe(upstream);
    });
    upstream.on('error', () => socket.destroy());
    socket.on('error', () => upstream.destroy());
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    port: (server.address() as AddressInfo).port,
    requests,
    close: () => new Promise<void>((r) => {
      server.close(() => r());
      server.closeAllConnections();
    }),
  };
}

/**
 * Makes fetch in this process resolve `*.<domain>` to 127.0.0.1 (there is no DNS for test hosts)
 * and, given `servicePort`, connect to 127.0.0.1:<servicePort> for any `*.svc` host, as cluster DNS
 * and kube-proxy would take it to the Service's Pod. Returns an undo.
 */
export function routeTestHostsToLoopback(domain: string, servicePort?: number): () => void {
  const previous: Dispatcher = getGlobalDispatcher();
  const connector = buildConnector({
    lookup: (hostname, options, callback) => {
      if (hostname === domain || hostname.endsWith(`.${domain}`)) {
        const all = (options as { all?: boolean }).all;
        if (all) (callback as (e: null, a: { address: string; family: number }[]) => void)(null, [{ address: '127.0.0.1', family: 4 }]);
        else (callback as (e: null, a: string, f: number) => void)(null, '127.0.0.1', 4);
        return;
      }
      dns.lookup(hostname, options, callback);
    },
  });
  // Node's own sockets (the `ws` client the facade's event relay uses) for `*.svc` hosts, likewise.
  const nativeConnect = net.connect;
  if (servicePort) {
    net.connect = function connect(this: unknown, ...args: unknown[]) {
      const o = args[0] as { host?: string } | undefined;
      if (o && typeof o === 'object' && typeof o.host === 'string' && o.host.endsWith('.svc')) return (nativeConnect as (o: object) => Socket).call(net, { ...o, host: '127.0.0.1', port: servicePort });
      return (nativeConnect as (...a: unknown[]) => Socket).apply(net, args);
    } as typeof net.connect;
  }
  setGlobalDispatcher(
    new Agent({
      connect: (opts, callback) => {
        if (servicePort && opts.hostname.endsWith('.svc')) return connector({ ...opts, hostname: '127.0.0.1', port: String(servicePort) }, callback);
        return connector(opts, callback);
      },
    }),
  );
  return () => {
    net.connect = nativeConnect;
    setGlobalDispatcher(previous);
  };
}
