// A listening /api/v1 server with its background loops (queued-message delivery, cleanup of
// deleted conversations), taken down in order by close().
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createApiApp, createFacade } from './app.ts';
import { ConversationCleanup } from './cleanup.ts';
import { PendingDelivery } from './delivery.ts';
import { EventRelay } from './event-relay.ts';
import type { FacadeDeps } from './deps.ts';
import type { StartTracing, Telemetry } from './telemetry/index.ts';

export interface ApiServer {
  url: string;
  close(): Promise<void>;
}

export interface ApiServerOptions extends FacadeDeps {
  port: number;
  host: string;
  /** Retry interval for queued messages the agent server did not take. Default 5000 ms. */
  deliveryRetryMs?: number;
  /** Trace export (telemetryFromEnv); start tasks become traces. Absent: no tracing code runs. */
  telemetry?: Telemetry;
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
  delivery.start();
  cleanup.start();
  // Loaded only when tracing is on, so an installation without it imports no OpenTelemetry code.
  const tracing: StartTracing | undefined = o.telemetry ? (await import('./telemetry/index.ts')).traceStartTasks(facade.d, o.telemetry) : undefined;
  const { port } = server.address() as AddressInfo;
  const host = o.host.includes(':') ? `[${o.host}]` : o.host;
  let closing: Promise<void> | undefined;
  return {
    url: `http://${host}:${port}`,
    close: () =>
      (closing ??= (async () => {
        await relay.close();
        await new Promise<void>((resolve) => {
          server.close(() => resolve());
          server.closeAllConnections();
        });
        await Promise.all([delivery.close(), cleanup.close(), tracing?.close()]);
      })()),
  };
}
