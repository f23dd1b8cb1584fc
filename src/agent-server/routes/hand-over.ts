// POST /api/agentyard/hand-over (agentyard addition): a warm-pool sandbox passes to the user who
// claimed it (src/api/agent-server/hand-over.ts). Authenticated with the pool's session key like
// any /api route; repeated with the new key once done, it answers 200 again and changes nothing.
import Router from '@koa/router';
import { HAND_OVER_PATH, HandOverRequest } from '../../api/agent-server/hand-over.ts';
import { parseBody } from '../../api/agent-server/parse.ts';
import type { ConversationService } from '../conversation/service.ts';
import type { SessionKeys } from '../http/auth.ts';
import { SecretSealer } from '../secrets.ts';

export interface HandOverDeps {
  service: ConversationService;
  keys: SessionKeys;
  /** The event pusher's key follows the session key (the sink checks the sandbox's current key). */
  setSinkKey?(key: string): void;
  /** The server's other keyed state follows too (settings secrets are sealed again with the new secret key). */
  onHandOver?(req: HandOverRequest): void;
}

export function handOverRoutes(d: HandOverDeps): Router {
  const r = new Router();
  r.post(HAND_OVER_PATH.slice('/api'.length), async (ctx) => {
    const req = parseBody(HandOverRequest, ctx.request.body);
    // Done before (a controller that died before it recorded the hand-over asks again, with the new key).
    if (d.keys.isOnly(req.session_key)) {
      ctx.body = { success: true };
      return;
    }
    d.service.handOver({ ...(req.llm_api_key ? { llmApiKey: req.llm_api_key } : {}), ...(req.secret_key ? { sealer: new SecretSealer(req.secret_key) } : {}) });
    d.keys.replace([req.session_key]);
    d.setSinkKey?.(req.session_key);
    d.onHandOver?.(req);
    ctx.body = { success: true };
  });
  return r;
}
