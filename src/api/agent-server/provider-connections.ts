// Shared LLM provider connections (OpenHands 1.58 `/api/llm/provider-connections`): one api_key and
// base_url that several LLM profiles use by `provider_connection_id`, resolved when a profile is
// used, so rotating the key here reaches every linked profile at its next use. The key is a secret:
// stored sealed, never returned (`api_key_set`).
import Type, { type Static } from 'typebox';
import { Nullable } from '../events/common.ts';

/** At most this many connections (OpenHands' MAX_PROVIDER_CONNECTIONS). */
export const MAX_PROVIDER_CONNECTIONS = 64;

const DisplayName = Type.String({ minLength: 1, maxLength: 128 });
const Provider = Type.String({ minLength: 1, maxLength: 128 });
const BaseUrl = Type.String({ maxLength: 2048 });

export const ProviderConnectionCreateRequest = Type.Object(
  {
    display_name: DisplayName,
    provider: Type.Optional(Type.String({ minLength: 1, maxLength: 128, default: 'custom' })),
    api_key: Type.String({ minLength: 1 }),
    base_url: Nullable(BaseUrl),
  },
  { additionalProperties: false },
);
export type ProviderConnectionCreateRequest = Static<typeof ProviderConnectionCreateRequest>;

/** A partial update: only the fields given change; `base_url: null` clears it, `api_key` cannot be cleared. */
export const ProviderConnectionUpdateRequest = Type.Object(
  {
    display_name: Nullable(DisplayName),
    provider: Nullable(Provider),
    api_key: Nullable(Type.String()),
    base_url: Nullable(BaseUrl),
  },
  { additionalProperties: false },
);
export type ProviderConnectionUpdateRequest = Static<typeof ProviderConnectionUpdateRequest>;

export const ProviderConnectionResponse = Type.Object({
  id: Type.String(),
  display_name: Type.String(),
  provider: Type.String(),
  base_url: Nullable(Type.String()),
  /** Unix seconds. */
  created_at: Type.Integer(),
  updated_at: Type.Integer(),
  api_key_set: Type.Boolean({ default: false }),
});
export type ProviderConnectionResponse = Static<typeof ProviderConnectionResponse>;
