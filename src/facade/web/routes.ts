// The application web routes (spec part 4): GET / (the web app, src/facade/web/app, and its
// bundle /app.js), GET /plugins (Plugin Directory) and GET /launch (a launch link's review page),
// both pages of the app, at the URLs links already use.
// Pages are public shells: they hold no user data, and everything they do goes through /api/v1
// with the key the user types. A strict CSP allows only this page's nonce'd script and style and
// requests to this origin (the app also to the agent servers' WebSockets, `connectSrc`).
import { randomBytes } from 'node:crypto';
import Router from '@koa/router';
import type { Context } from 'koa';
import { isAgentyardError } from '../../api/errors.ts';
import type { CatalogPlugin } from './catalog.ts';
import { parseLaunchQuery } from './launch-link.ts';
import { appBundle } from './bundle.ts';
import { appPage } from './pages.ts';

function send(ctx: Context, status: number, render: (nonce: string) => string, connectSrc: readonly string[] = []): void {
  const nonce = randomBytes(16).toString('base64');
  ctx.status = status;
  ctx.type = 'text/html; charset=utf-8';
  ctx.set('Content-Security-Policy', `default-src 'none'; script-src 'nonce-${nonce}'; style-src 'nonce-${nonce}'; connect-src ${['\'self\'', ...connectSrc].join(' ')}; img-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'`);
  ctx.set('Cache-Control', 'no-store');
  ctx.set('Referrer-Policy', 'no-referrer');
  ctx.set('X-Content-Type-Options', 'nosniff');
  ctx.body = render(nonce);
}

export interface WebOptions {
  /** Extra CSP connect-src sources of the app page: where the agent servers' WebSockets are. */
  connectSrc?: readonly string[];
}

export function webRoutes(catalog: CatalogPlugin[], opts: WebOptions = {}): Router {
  const router = new Router();
  router.get('/', (ctx) => send(ctx, 200, (nonce) => appPage(nonce), opts.connectSrc));
  router.get('/app.js', async (ctx) => {
    const bundle = await appBundle();
    ctx.set('Cache-Control', 'no-cache');
    ctx.set('X-Content-Type-Options', 'nosniff');
    ctx.set('ETag', bundle.etag);
    if (ctx.get('If-None-Match') === bundle.etag) {
      ctx.status = 304;
      return;
    }
    ctx.type = 'text/javascript; charset=utf-8';
    ctx.body = bundle.js;
  });
  router.get('/plugins', (ctx) => send(ctx, 200, (nonce) => appPage(nonce, { page: 'plugins', plugins: catalog }), opts.connectSrc));
  router.get('/launch', (ctx) => {
    let launch;
    try {
      launch = parseLaunchQuery(ctx.query);
    } catch (err) {
      if (!isAgentyardError(err)) throw err;
      const message = err.message;
      send(ctx, 400, (nonce) => appPage(nonce, { page: 'launch-error', title: 'This launch link does not work', message }), opts.connectSrc);
      return;
    }
    send(ctx, 200, (nonce) => appPage(nonce, { page: 'launch', plugins: launch.plugins, message: launch.message }), opts.connectSrc);
  });
  return router;
}
