// LLM profiles (OpenHands 1.58 `/api/profiles`, profiles_router.py): named LLM settings kept by the
// agent server, which a conversation can switch to (`switch_profile`). The api_key is a secret:
// stored sealed, never returned (`api_key` is null in every answer; `api_key_set` says whether one
// is stored).
import Type, { type Static } from 'typebox';
import { Nullable } from '../events/common.ts';
import { LLM } from './agent.ts';

/** OpenHands' PROFILE_NAME_PATTERN: the name is also a file name there. */
export const PROFILE_NAME_PATTERN = '^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$';
export const ProfileName = Type.String({ minLength: 1, maxLength: 64, pattern: PROFILE_NAME_PATTERN });

/** At most this many profiles (OpenHands' MAX_PROFILES): saving a new one past it is a 409. */
export const MAX_PROFILES = 50;

export const ProfileInfo = Type.Object({
  name: Type.String(),
  model: Nullable(Type.String()),
  base_url: Nullable(Type.String()),
  /** Provider connections are not kept by this agent server: always null. */
  provider_connection_id: Nullable(Type.String()),
  provider_connection_broken: Type.Boolean({ default: false }),
  api_key_set: Type.Boolean({ default: false }),
});
export type ProfileInfo = Static<typeof ProfileInfo>;

export const ProfileListResponse = Type.Object({ profiles: Type.Array(ProfileInfo), active_profile: Nullable(Type.String()) });
export type ProfileListResponse = Static<typeof ProfileListResponse>;

/** `GET /api/profiles/{name}`: the stored LLM settings, `api_key` null. */
export const ProfileDetailResponse = Type.Object({ name: Type.String(), config: Type.Record(Type.String(), Type.Unknown()), api_key_set: Type.Boolean({ default: false }) });
export type ProfileDetailResponse = Static<typeof ProfileDetailResponse>;

export const ProfileMutationResponse = Type.Object({ name: Type.String(), message: Type.String() });
export type ProfileMutationResponse = Static<typeof ProfileMutationResponse>;

export const SaveProfileRequest = Type.Object({
  llm: LLM,
  /** Whether to store the API key with the profile (OpenHands' default: yes). */
  include_secrets: Type.Optional(Type.Boolean({ default: true })),
});
export type SaveProfileRequest = Static<typeof SaveProfileRequest>;

export const RenameProfileRequest = Type.Object({ new_name: ProfileName });
export type RenameProfileRequest = Static<typeof RenameProfileRequest>;

export const ActivateProfileResponse = Type.Object({ name: Type.String(), message: Type.String(), llm_applied: Type.Boolean({ default: true }) });
export type ActivateProfileResponse = Static<typeof ActivateProfileResponse>;

/** `POST /api/conversations/{id}/switch_profile`: the conversation's LLM from its next model call on. */
export const SwitchProfileRequest = Type.Object({ profile_name: Type.String() });
export type SwitchProfileRequest = Static<typeof SwitchProfileRequest>;

/** `POST /api/profiles/{name}/validate`: a draft LLM, tried with one short model call before it is saved. */
export const ValidateProfileRequest = Type.Object({ llm: LLM });
export type ValidateProfileRequest = Static<typeof ValidateProfileRequest>;

export const ValidateProfileError = Type.Object({ type: Type.String(), message: Type.String() });
export const ValidateProfileResponse = Type.Object({ valid: Type.Boolean(), error: Nullable(ValidateProfileError) });
export type ValidateProfileResponse = Static<typeof ValidateProfileResponse>;
