// /api/llm/provider-connections (OpenHands 1.58's provider_connections_router.py): shared LLM
// credentials (an API key and an optional base URL) that LLM profiles reference by id. Limits and
// field rules are OpenHands'; the key is write-only (responses say only `api_key_set`).
import Type, { type Static } from 'typebox';
import { Nullable, STRICT } from '../events/common.ts';

/** At most this many connections are kept (OpenHands' MAX_PROVIDER_CONNECTIONS). */
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
  STRICT,
);
export type ProviderConnectionCreateRequest = Static<typeof ProviderConnectionCreateRequest>;

/** Only the fields given change; `base_url: null` clears it; `display_name`, `provider` and `api_key` cannot be cleared. */
export const ProviderConnectionUpdateRequest = Type.Object(
  {
    display_name: Nullable(DisplayName),
    provider: Nullable(Provider),
    api_key: Nullable(Type.String()),
    base_url: Nullable(BaseUrl),
  },
  STRICT,
);
export type ProviderConnectionUpdateRequest = Static<typeof ProviderConnectionUpdateRequest>;

export const ProviderConnectionResponse = Type.Object({
  /** 32 hex digits. */
  id: Type.String(),
  display_name: Type.String(),
  provider: Type.String(),
  base_url: Type.Union([Type.String(), Type.Null()]),
  /** Unix epoch seconds. */
  created_at: Type.Integer(),
  updated_at: Type.Integer(),
  api_key_set: Type.Boolean(),
});
export type ProviderConnectionResponse = Static<typeof ProviderConnectionResponse>;
