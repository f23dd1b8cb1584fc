// The application web routes (spec part 4): GET /plugins (Plugin Directory) and GET /launch (a
// launch link's review page). Pages are public shells: they hold no user data, and everything they
// do goes through /api/v1 with the key the user types. A strict CSP allows only this page's nonce'd
// script and style and requests to this origin.
import { randomBytes } from 'node:crypto';
import Router from '@koa/router';
import type { Context } from 'koa';
import { isAgentyardError } from '../../api/errors.ts';
import type { CatalogPlugin } from './catalog.ts';
import { parseLaunchQuery } from './launch-link.ts';
import { directoryPage, errorPage, launchPage } from './pages.ts';

function send(ctx: Context, status: number, render: (nonce: string) => string): void {
  const nonce = randomBytes(16).toString('base64');
  ctx.status = status;
  ctx.type = 'text/html; charset=utf-8';
  ctx.set('Content-Security-Policy', `default-src 'none'; script-src 'nonce-${nonce}'; style-src 'nonce-${nonce}'; connect-src 'self'; img-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'`);
  ctx.set('Cache-Control', 'no-store');
  ctx.set('Referrer-Policy', 'no-referrer');
  ctx.set('X-Content-Type-Options', 'nosniff');
  ctx.body = render(nonce);
}

export function webRoutes(catalog: CatalogPlugin[]): Router {
  const router = new Router();
  router.get('/plugins', (ctx) => send(ctx, 200, (nonce) => directoryPage(catalog, nonce)));
  router.get('/launch', (ctx) => {
    let launch;
    try {
      launch = parseLaunchQuery(ctx.query);
    } catch (err) {
      if (!isAgentyardError(err)) throw err;
      const message = err.message;
      send(ctx, 400, (nonce) => errorPage('This launch link does not work', message, nonce));
      return;
    }
    send(ctx, 200, (nonce) => launchPage(launch.plugins, launch.message, nonce));
  });
  return router;
}
