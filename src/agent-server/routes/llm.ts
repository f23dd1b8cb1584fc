// LLM listings, as OpenHands 1.58's llm_router.py serves them, from the catalog generated out of that
// release (llm/catalog.ts). The ChatGPT subscription sign-in needs auth.openai.com, which a sandbox
// must not depend on: it is not built (501, routes/not-implemented.ts), and the status honestly says
// not connected.
import Router from '@koa/router';
import Type from 'typebox';
import type { ModelsResponse, ProvidersResponse, SubscriptionModelsResponse, SubscriptionStatusResponse, VerifiedModelsResponse } from '../../api/agent-server/llm.ts';
import { catalog, modelsOf } from '../llm/catalog.ts';
import { validate } from '../http/validate.ts';

export const ModelsQuery = Type.Object({ provider: Type.Optional(Type.String()) });

const notConnected = (): SubscriptionStatusResponse => ({ vendor: 'openai', connected: false, account_email: null, expires_at: null });

export function llmRoutes(): Router {
  const router = new Router({ prefix: '/llm' });
  router.get('/providers', async (ctx) => {
    const body: ProvidersResponse = { providers: catalog().providers };
    ctx.body = body;
  });
  router.get('/models', validate({ query: ModelsQuery }), async (ctx) => {
    const body: ModelsResponse = { models: modelsOf((ctx.state['query'] as { provider?: string }).provider) };
    ctx.body = body;
  });
  router.get('/models/verified', async (ctx) => {
    const body: VerifiedModelsResponse = { models: catalog().verified };
    ctx.body = body;
  });
  router.get('/subscription/openai/models', async (ctx) => {
    const body: SubscriptionModelsResponse = { vendor: 'openai', models: catalog().subscription_models.openai };
    ctx.body = body;
  });
  router.get('/subscription/openai/status', async (ctx) => {
    ctx.body = notConnected();
  });
  // Nothing is stored, so there is nothing to remove: the answer is the state after a logout.
  router.post('/subscription/openai/logout', async (ctx) => {
    ctx.body = notConnected();
  });
  return router;
}
