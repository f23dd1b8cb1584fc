// LLM listings, as OpenHands 1.58's llm_router.py serves them, from the catalog generated out of that
// release (llm/catalog.ts), and the ChatGPT subscription sign-in (subscription/service.ts).
import Router from '@koa/router';
import Type from 'typebox';
import { SubscriptionDevicePollRequest, type ModelsResponse, type ProvidersResponse, type SubscriptionModelsResponse, type VerifiedModelsResponse } from '../../api/agent-server/llm.ts';
import type { SubscriptionService } from '../subscription/service.ts';
import { catalog, modelsOf } from '../llm/catalog.ts';
import { validate } from '../http/validate.ts';

export const ModelsQuery = Type.Object({ provider: Type.Optional(Type.String()) });

export function llmRoutes(subscription: SubscriptionService): Router {
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
    ctx.body = await subscription.status();
  });
  router.post('/subscription/openai/device/start', async (ctx) => {
    ctx.body = await subscription.start();
  });
  router.post('/subscription/openai/device/poll', validate({ body: SubscriptionDevicePollRequest }), async (ctx) => {
    ctx.body = await subscription.poll((ctx.state['body'] as SubscriptionDevicePollRequest).device_code);
  });
  router.post('/subscription/openai/logout', async (ctx) => {
    ctx.body = subscription.logout();
  });
  return router;
}
