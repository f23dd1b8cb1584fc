// /api/init (OpenHands 1.58's init_router.py): deferred initialization, where a warm-pool server
// starts dormant and receives its user's keys and paths in POST /api/init. This agent server never
// starts dormant: a warm-pool sandbox here is handed over to its user (POST /api/agentyard/hand-over)
// and serves from the start. So /api/init answers exactly what OpenHands answers when it runs
// without deferred_init: 404 with its sentence. Like OpenHands, the route sits outside the
// session-key check (GET is open for polling; POST wants X-Init-API-Key, the server's secret key).
import Router from '@koa/router';
import { NotFound, Unauthorized } from '../../api/errors.ts';
import type { SessionKeys } from '../http/auth.ts';

const NOT_DEFERRED = 'server is not running with deferred_init=True; the /api/init endpoint is not available';

/** `initKeys`: the keys X-Init-API-Key may carry (the secret key, else the session keys, as OpenHands falls back); none: open. */
export function initRoutes(initKeys: () => SessionKeys): Router {
  const router = new Router({ prefix: '/api' });
  router.get('/init', async () => {
    throw new NotFound(NOT_DEFERRED);
  });
  router.post('/init', async (ctx) => {
    const keys = initKeys();
    if (keys.enabled && !keys.matches(ctx.get('x-init-api-key'))) throw new Unauthorized('Unauthorized');
    throw new NotFound(NOT_DEFERRED);
  });
  return router;
}
