// /api/init (OpenHands 1.58's init_router.py): deferred initialization. A server started with
// OH_DEFERRED_INIT is dormant (deferred.ts): it listens and answers its health routes, and takes its
// user's configuration (session keys, secret key and earlier ones, data directory, ...) in POST
// /api/init, after which it serves like any other. A server not started so answers 404 with 1.58's
// sentence. As in 1.58 the route sits outside the session-key check: GET is open for polling; POST
// wants X-Init-API-Key, the server's secret key (else a session key, as 1.58 falls back; none: open).
import Router from '@koa/router';
import { bodyParser } from '@koa/bodyparser';
import { InitRequest, type InitStatus } from '../../api/agent-server/init.ts';
import { parseBody } from '../../api/agent-server/parse.ts';
import { NotFound, Unauthorized } from '../../api/errors.ts';
import type { SessionKeys } from '../http/auth.ts';

const NOT_DEFERRED = 'server is not running with deferred_init=True; the /api/init endpoint is not available';

/** What a deferred server's /api/init reads and does (deferred.ts). */
export interface InitService {
  snapshot(): InitStatus;
  initialize(req: InitRequest): Promise<InitStatus>;
}

/** `initKeys`: the keys X-Init-API-Key may carry; none: open. `init`: the deferred server's, absent on a server not started deferred (404). */
export function initRoutes(initKeys: () => SessionKeys, init?: InitService): Router {
  const router = new Router({ prefix: '/api' });
  router.get('/init', async (ctx) => {
    if (!init) throw new NotFound(NOT_DEFERRED);
    ctx.body = init.snapshot();
  });
  router.post(
    '/init',
    async (ctx, next) => {
      const keys = initKeys();
      if (keys.enabled && !keys.matches(ctx.get('x-init-api-key'))) throw new Unauthorized('Unauthorized');
      if (!init) throw new NotFound(NOT_DEFERRED);
      await next();
    },
    // Read only once the key is checked; a body as small as any configuration.
    bodyParser({ enableTypes: ['json'], jsonLimit: '1mb' }),
    async (ctx) => {
      ctx.body = await init!.initialize(parseBody(InitRequest, ctx.request.body));
    },
  );
  return router;
}
