// POST /api/agentyard/hand-over (agentyard addition): a warm-pool sandbox passes to the user who
// claimed it (src/api/agent-server/hand-over.ts). Authenticated with the pool's session key like
// any /api route; repeated with the new key once done, it answers 200 again and changes nothing.
import Router from '@koa/router';
import { HAND_OVER_PATH, HandOverRequest } from '../../api/agent-server/hand-over.ts';
import { parseBody } from '../../api/agent-server/parse.ts';
import type { ConversationService } from '../conversation/service.ts';
import type { SessionKeys } from '../http/auth.ts';
import { SecretSealer } from '../secrets.ts';
import type { ProfileStore } from '../store/profile-store.ts';
import type { ProviderConnectionStore } from '../store/provider-connection-store.ts';
import { Conflict } from '../../api/errors.ts';

export interface HandOverDeps {
  service: ConversationService;
  keys: SessionKeys;
  /** The event pusher's key follows the session key (the sink checks the sandbox's current key). */
  setSinkKey?(key: string): void;
  /** LLM profiles: their keys are sealed with the pool's secret key, so a server with some is not handed over. */
  profiles?: ProfileStore;
  /** Provider connections, whose keys are sealed the same way. */
  connections?: ProviderConnectionStore;
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
    if ((d.profiles?.list().length ?? 0) > 0 || (d.connections?.list().length ?? 0) > 0) throw new Conflict('This agent server already has LLM profiles or provider connections; it cannot be handed over');
    d.service.handOver({ ...(req.llm_api_key ? { llmApiKey: req.llm_api_key } : {}), ...(req.secret_key ? { sealer: new SecretSealer(req.secret_key) } : {}) });
    d.keys.replace([req.session_key]);
    d.setSinkKey?.(req.session_key);
    ctx.body = { success: true };
  });
  return r;
}
