// LLM listings (OpenHands 1.58 `/api/llm`, llm_router.py): providers and models as litellm knows
// them, and OpenHands' verified models. Served from src/agent-server/llm/catalog.gen.json, generated
// from the OpenHands release this server is compatible with (hack/gen-llm-catalog.py).
import Type, { type Static } from 'typebox';
import { Nullable } from '../events/common.ts';

export const ProvidersResponse = Type.Object({ providers: Type.Array(Type.String()) });
export type ProvidersResponse = Static<typeof ProvidersResponse>;

export const ModelsResponse = Type.Object({ models: Type.Array(Type.String()) });
export type ModelsResponse = Static<typeof ModelsResponse>;

export const VerifiedModelsResponse = Type.Object({ models: Type.Record(Type.String(), Type.Array(Type.String())) });
export type VerifiedModelsResponse = Static<typeof VerifiedModelsResponse>;

export const SubscriptionModelsResponse = Type.Object({ vendor: Type.String({ default: 'openai' }), models: Type.Array(Type.String()) });
export type SubscriptionModelsResponse = Static<typeof SubscriptionModelsResponse>;

/** No ChatGPT subscription sign-in happens here (it needs auth.openai.com): never connected. */
export const SubscriptionStatusResponse = Type.Object({
  vendor: Type.String({ default: 'openai' }),
  connected: Type.Boolean(),
  account_email: Nullable(Type.String()),
  expires_at: Nullable(Type.Integer()),
});
export type SubscriptionStatusResponse = Static<typeof SubscriptionStatusResponse>;
