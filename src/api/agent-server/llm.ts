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

/**
 * ChatGPT subscription state (OpenHands 1.58 `SubscriptionStatusResponse`): never a token. `expires_at`
 * is the access token's expiry in Unix milliseconds; `account_email` the signed-in account's address
 * when the issuer's verified token carries one.
 */
export const SubscriptionStatusResponse = Type.Object({
  vendor: Type.String({ default: 'openai' }),
  connected: Type.Boolean(),
  account_email: Nullable(Type.String()),
  expires_at: Nullable(Type.Integer()),
});
export type SubscriptionStatusResponse = Static<typeof SubscriptionStatusResponse>;

/** The challenge of a device-code sign-in: the user opens `verification_uri` and types `user_code`. */
export const SubscriptionDeviceStartResponse = Type.Object({
  /** Opaque: names this sign-in to `/device/poll`; not OpenAI's device id, which stays on the server. */
  device_code: Type.String(),
  user_code: Type.String(),
  verification_uri: Type.String(),
  verification_uri_complete: Nullable(Type.String()),
  /** Unix milliseconds after which the sign-in is forgotten (15 minutes, as OpenHands). */
  expires_at: Type.Integer(),
  interval_seconds: Type.Integer(),
});
export type SubscriptionDeviceStartResponse = Static<typeof SubscriptionDeviceStartResponse>;

export const SubscriptionDevicePollRequest = Type.Object({ device_code: Type.String() });
export type SubscriptionDevicePollRequest = Static<typeof SubscriptionDevicePollRequest>;
