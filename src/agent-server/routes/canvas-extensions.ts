// /api/canvas-extensions (OpenHands 1.58 canvas_extensions_router.py) and /app-backends (its
// canvas_extensions_bridge_router.py): install, list, enable/disable and uninstall Canvas
// extensions, serve their bundle and icon, run their backends, and proxy a browser to a backend.
// The implementation (canvas/) is imported on the first request, so a server start does not pay for it.
import Router from '@koa/router';
import { createReadStream, existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import type { Context, Middleware } from 'koa';
import { Conflict, NotFound } from '../../api/errors.ts';
import { BackendLogsQuery, BackendRevisionRequest, ExtensionName, InstallCanvasExtensionRequest, UpdateCanvasExtensionStateRequest, type BackendRevisionRequest as Revision, type InstallCanvasExtensionRequest as Install } from '../../api/agent-server/canvas.ts';
import { parseValue } from '../../api/events/validate.ts';
import { validate } from '../http/validate.ts';
import type { Canvas } from '../canvas/index.ts';
import type { BridgeOptions } from '../canvas/bridge.ts';

/** The server's Canvas state, loaded on first use and closed with the server. */
export class CanvasHolder {
  readonly #stateDir: string;
  readonly #bridge: BridgeOptions;
  #canvas: Promise<Canvas> | undefined;

  constructor(stateDir: string, bridge: BridgeOptions = {}) {
    this.#stateDir = stateDir;
    this.#bridge = bridge;
  }

  get(): Promise<Canvas> {
    return (this.#canvas ??= import('../canvas/index.ts').then(({ Canvas }) => new Canvas(this.#stateDir, this.#bridge)));
  }

  /** Backends a server that died left running are stopped before this one serves (the module loads only if there are any). */
  async reapOrphans(): Promise<void> {
    const run = join(this.#stateDir, 'backends', 'run');
    if (!existsSync(run) || readdirSync(run).length === 0) return;
    await (await this.get()).backends.reapOrphans();
  }

  /** The WebSocket half of the proxy; false for paths outside /app-backends/. */
  upgrade(req: IncomingMessage, socket: Duplex, head: Buffer): boolean {
    if (!(req.url ?? '').startsWith('/app-backends/')) return false;
    this.get().then(
      (c) => c.bridge.handleUpgrade(req, socket, head) || socket.end('HTTP/1.1 404 Not Found\r\nConnection: close\r\nContent-Length: 0\r\n\r\n'),
      () => socket.destroy(),
    );
    return true;
  }

  async close(): Promise<void> {
    if (this.#canvas) await (await this.#canvas).close();
  }
}

function nameOf(ctx: Context, loc: string[] = ['path', 'extension_name']): string {
  return parseValue(ExtensionName, ctx.params['extension_name'], { prefix: loc });
}

const notInstalled = (name: string) => new NotFound(`Canvas extension '${name}' is not installed`);

function sendFile(ctx: Context, file: string | undefined, what: string, name: string, headers: Record<string, string>): void {
  if (!file) throw new NotFound(`Canvas extension '${name}' ${what} not found`);
  ctx.set(headers);
  ctx.type = what === 'icon' ? 'image/svg+xml' : (file.split('/').pop() ?? '');
  ctx.body = createReadStream(file);
}

export function canvasExtensionRoutes(holder: CanvasHolder): Router {
  const r = new Router({ prefix: '/canvas-extensions' });
  r.post('/install', validate({ body: InstallCanvasExtensionRequest }), async (ctx) => {
    const c = await holder.get();
    const req = ctx.state['body'] as Install;
    if (req.force && c.backends.hasRunning()) throw new Conflict('Stop running Canvas App backends before a forced install');
    const info = await c.extensions.install(req);
    c.backends.invalidateApproval(info.name);
    ctx.body = info;
  });
  r.get('/installed', async (ctx) => {
    ctx.body = { canvas_extensions: (await holder.get()).extensions.list() };
  });
  r.get('/installed/:extension_name', async (ctx) => {
    const name = nameOf(ctx);
    ctx.body = (await holder.get()).extensions.describe(name) ?? (() => { throw notInstalled(name); })();
  });
  r.patch('/installed/:extension_name', validate({ body: UpdateCanvasExtensionStateRequest }), async (ctx) => {
    const name = nameOf(ctx);
    const { enabled } = ctx.state['body'] as { enabled: boolean };
    const c = await holder.get();
    if (!enabled) await c.stopApp(name);
    if (!c.extensions.setEnabled(name, enabled)) throw notInstalled(name);
    ctx.body = { name, enabled };
  });
  r.delete('/installed/:extension_name', async (ctx) => {
    const name = nameOf(ctx);
    const c = await holder.get();
    await c.stopApp(name);
    if (!c.extensions.uninstall(name)) throw notInstalled(name);
    ctx.body = { message: `Canvas extension '${name}' uninstalled` };
  });
  r.get('/installed/:extension_name/bundle', async (ctx) => {
    const name = nameOf(ctx);
    // Re-resolved on every request: a link inside the package may have changed since install.
    sendFile(ctx, (await holder.get()).extensions.bundle(name), 'bundle', name, { 'Cache-Control': 'no-cache', 'X-Content-Type-Options': 'nosniff' });
  });
  r.get('/installed/:extension_name/icon', async (ctx) => {
    const name = nameOf(ctx);
    // The sandbox CSP keeps a directly opened SVG from running script on the agent server's origin.
    sendFile(ctx, (await holder.get()).extensions.icon(name), 'icon', name, { 'Cache-Control': 'no-cache', 'Content-Security-Policy': "default-src 'none'; style-src 'unsafe-inline'; sandbox", 'X-Content-Type-Options': 'nosniff' });
  });
  r.get('/installed/:extension_name/backend', async (ctx) => {
    ctx.body = await (await holder.get()).backends.status(nameOf(ctx));
  });
  r.post('/installed/:extension_name/backend/prepare', validate({ body: BackendRevisionRequest }), async (ctx) => {
    ctx.body = await (await holder.get()).backends.prepare(nameOf(ctx), (ctx.state['body'] as Revision).revision);
  });
  r.post('/installed/:extension_name/backend/start', validate({ body: BackendRevisionRequest }), async (ctx) => {
    ctx.body = await (await holder.get()).backends.start(nameOf(ctx), (ctx.state['body'] as Revision).revision);
  });
  r.post('/installed/:extension_name/backend/stop', async (ctx) => {
    ctx.body = await (await holder.get()).stopApp(nameOf(ctx));
  });
  r.get('/installed/:extension_name/backend/logs', validate({ query: BackendLogsQuery }), async (ctx) => {
    ctx.body = (await holder.get()).backends.logs(nameOf(ctx), (ctx.state['query'] as { limit_bytes: number }).limit_bytes);
  });
  r.delete('/installed/:extension_name/backend/data', async (ctx) => {
    ctx.body = await (await holder.get()).backends.deleteData(nameOf(ctx));
  });
  return r;
}

/**
 * /app-backends: the session routes want the session key (the caller is the Canvas page, which
 * holds it); the proxy routes want the session cookie instead (an <iframe> cannot send a header).
 */
export function appBackendRoutes(holder: CanvasHolder, requireKey: Middleware, onActivity: () => void = () => undefined): Router {
  const r = new Router({ prefix: '/app-backends' });
  r.post('/:extension_name/session', requireKey, async (ctx) => {
    ctx.body = (await holder.get()).bridge.createSession(ctx, nameOf(ctx));
  });
  r.delete('/:extension_name/session', requireKey, async (ctx) => {
    (await holder.get()).bridge.deleteSession(ctx, nameOf(ctx));
  });
  const proxy = async (ctx: Context) => {
    // Someone working in a Canvas App is using the sandbox: writes keep it awake, as writes to /api do.
    if (ctx.method !== 'GET' && ctx.method !== 'HEAD' && ctx.method !== 'OPTIONS') onActivity();
    await (await holder.get()).bridge.proxyHttp(ctx, nameOf(ctx));
  };
  r.all('/:extension_name{/*path}', proxy);
  return r;
}

