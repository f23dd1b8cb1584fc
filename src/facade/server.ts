// A listening /api/v1 server with its background loops (queued-message delivery, cleanup of
// deleted conversations), taken down in order by close().
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createApiApp, createFacade } from './app.ts';
import { ConversationCleanup } from './cleanup.ts';
import { PendingDelivery } from './delivery.ts';
import { EventRelay } from './event-relay.ts';
import { AppBackendRelay, oidcSessionUser, type AppIngressOptions } from './app-backend-relay.ts';
import type { FacadeDeps } from './deps.ts';
import type { StartTracing, Telemetry } from './telemetry/index.ts';

export interface ApiServer {
  url: string;
  /** The app-backend ingress (app-backend-relay.ts), when asked for: what sandboxes are given. */
  appIngress?: AppIngressOptions;
  close(): Promise<void>;
}

export interface ApiServerOptions extends FacadeDeps {
  port: number;
  host: string;
  /** Retry interval for queued messages the agent server did not take. Default 5000 ms. */
  deliveryRetryMs?: number;
  /** Trace export (telemetryFromEnv); start tasks become traces. Absent: no tracing code runs. */
  telemetry?: Telemetry;
  /**
   * A second listener, the app-backend ingress (a browser origin of its own): `publicUrl` is where
   * browsers reach it (default: its own address); `webOrigins` the web app's (default: this API's).
   */
  appIngress?: { port: number; host: string; publicUrl?: string; webOrigins?: string[] };
}

export async function startApiServer(o: ApiServerOptions): Promise<ApiServer> {
  const facade = createFacade(o);
  const app = createApiApp(o, facade);
  const delivery = new PendingDelivery(facade.d, o.deliveryRetryMs !== undefined ? { retryMs: o.deliveryRetryMs } : {});
  const cleanup = new ConversationCleanup(facade.d);
  const server: Server = createServer(app.callback());
  const relay = new EventRelay(facade);
  relay.attach(server);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(o.port, o.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  const host = o.host.includes(':') ? `[${o.host}]` : o.host;
  const url = `http://${host}:${port}`;
  let ingress: Server | undefined;
  let appIngress: AppIngressOptions | undefined;
  if (o.appIngress) {
    const a = o.appIngress;
    ingress = createServer();
    await new Promise<void>((resolve, reject) => {
      ingress!.once('error', reject);
      ingress!.listen(a.port, a.host, () => resolve());
    });
    const ip = a.host.includes(':') ? `[${a.host}]` : a.host;
    appIngress = { publicUrl: a.publicUrl ?? `http://${ip}:${(ingress.address() as AddressInfo).port}`, webOrigins: a.webOrigins ?? webOriginsOf(o.host, port) };
    const relayApps = new AppBackendRelay(facade.d, appIngress, oidcSessionUser(facade));
    ingress.on('request', relayApps.handle);
    ingress.on('upgrade', relayApps.upgrade);
  }
  delivery.start();
  cleanup.start();
  // Loaded only when tracing is on, so an installation without it imports no OpenTelemetry code.
  const tracing: StartTracing | undefined = o.telemetry ? (await import('./telemetry/index.ts')).traceStartTasks(facade.d, o.telemetry) : undefined;
  let closing: Promise<void> | undefined;
  return {
    url,
    ...(appIngress ? { appIngress } : {}),
    close: () =>
      (closing ??= (async () => {
        await relay.close();
        if (ingress) {
          const i = ingress;
          await new Promise<void>((resolve) => {
            i.close(() => resolve());
            i.closeAllConnections();
          });
        }
        await new Promise<void>((resolve) => {
          server.close(() => resolve());
          server.closeAllConnections();
        });
        await Promise.all([delivery.close(), cleanup.close(), tracing?.close()]);
      })()),
  };
}

/** The web app's origins when it is reached directly: on loopback, under either loopback name. */
function webOriginsOf(host: string, port: number): string[] {
  if (['127.0.0.1', 'localhost', '::1'].includes(host)) return [`http://127.0.0.1:${port}`, `http://localhost:${port}`, `http://[::1]:${port}`];
  return [`http://${host.includes(':') ? `[${host}]` : host}:${port}`];
}
