// Schemas of a user's agent settings as OpenHands' app API carries them: the agent's LLM
// (agent_settings), the conversation defaults (conversation_settings), named LLM profiles and
// switching a running conversation to one, and the settings forms that describe them.
import Type, { type Static } from 'typebox';

const STRICT = { additionalProperties: false } as const;
const Nullable = <T extends Parameters<typeof Type.Optional>[0]>(s: T) => Type.Optional(Type.Union([s, Type.Null()]));

/** OpenHands' ProfileName. */
export const PROFILE_NAME_PATTERN = '^[A-Za-z0-9._-]{1,64}$';
/** OpenHands' MAX_PROFILES_PER_USER. */
export const MAX_PROFILES = 10;

export const ProfileParams = Type.Object({ name: Type.String({ pattern: PROFILE_NAME_PATTERN }) });
export type ProfileParams = Static<typeof ProfileParams>;

/** The fields of OpenHands' LLM model besides model, api_key and base_url (openhands-sdk 1.34). */
export const OPENHANDS_LLM_FIELDS = (
  'auth_type subscription_vendor api_version aws_access_key_id aws_secret_access_key aws_session_token aws_region_name aws_profile_name ' +
  'aws_role_name aws_session_name aws_bedrock_runtime_endpoint openrouter_site_url openrouter_app_name num_retries retry_multiplier ' +
  'retry_min_wait retry_max_wait timeout max_message_chars temperature top_p top_k max_input_tokens max_output_tokens model_canonical_name ' +
  'extra_headers input_cost_per_token output_cost_per_token ollama_base_url stream drop_params modify_params disable_vision disable_stop_word ' +
  'caching_prompt log_completions log_completions_folder custom_tokenizer native_tool_calling force_string_serializer inline_image_urls ' +
  'reasoning_effort reasoning_summary enable_encrypted_reasoning prompt_cache_retention extended_thinking_budget seed usage_id litellm_extra_body'
).split(' ');

/**
 * An LLM configuration as OpenHands' (strict) LLM model carries it. `model` is applied (through the
 * model gateway, as llm_model at start); the other fields are taken and kept so that its clients
 * can round-trip a profile, and `unapplied_fields` says they change nothing here. Unknown fields
 * are refused (422), as there.
 */
export const ProfileLlm = Type.Object(
  {
    model: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })),
    api_key: Nullable(Type.String({ maxLength: 4096 })),
    base_url: Nullable(Type.String({ maxLength: 2048 })),
    ...Object.fromEntries(OPENHANDS_LLM_FIELDS.map((f) => [f, Type.Optional(Type.Unknown())])),
  },
  STRICT,
);
export type ProfileLlm = Static<typeof ProfileLlm>;

/** POST /settings/profiles/{name} (OpenHands' SaveProfileRequest). */
export const SaveProfileRequest = Type.Object(
  {
    include_secrets: Type.Optional(Type.Boolean({ default: true, description: 'false: the api_key is not stored with the profile' })),
    llm: Nullable(ProfileLlm),
    preserve_existing_api_key: Type.Optional(Type.Boolean({ default: false, description: "Keep the profile's stored key (the caller has no new one)" })),
  },
  STRICT,
);
export type SaveProfileRequest = Static<typeof SaveProfileRequest>;

export const RenameProfileRequest = Type.Object({ new_name: Type.String({ pattern: PROFILE_NAME_PATTERN }) }, STRICT);
export type RenameProfileRequest = Static<typeof RenameProfileRequest>;

/** POST /app-conversations/{id}/switch_profile. */
export const SwitchProfileRequest = Type.Object({ profile_name: Type.String({ minLength: 1 }) }, STRICT);
export type SwitchProfileRequest = Static<typeof SwitchProfileRequest>;

const Unapplied = Type.Record(Type.String(), Type.String(), { description: 'Fields given that change nothing here, each with the reason' });

export const ProfileInfo = Type.Object({
  name: Type.String(),
  model: Type.Union([Type.String(), Type.Null()]),
  base_url: Type.Union([Type.String(), Type.Null()]),
  api_key_set: Type.Boolean(),
});
export const ProfileListResponse = Type.Object({ profiles: Type.Array(ProfileInfo), active_profile: Type.Union([Type.String(), Type.Null()]) });
export const ProfileDetailResponse = Type.Object({
  name: Type.String(),
  config: Type.Record(Type.String(), Type.Unknown(), { description: 'The stored configuration; api_key is always null (see api_key_set)' }),
  api_key_set: Type.Boolean(),
  unapplied_fields: Unapplied,
});
export const ProfileMutationResponse = Type.Object({ name: Type.String(), message: Type.String() });
export const ActivateProfileResponse = Type.Object({ name: Type.String(), message: Type.String(), model: Type.Union([Type.String(), Type.Null()]) });

/** What POST /settings takes as agent_settings_diff: the agent's LLM (model applied; see ProfileLlm). */
export const AgentSettingsDiff = Type.Object({ llm: Type.Optional(ProfileLlm) }, STRICT);
export type AgentSettingsDiff = Static<typeof AgentSettingsDiff>;

/** What POST /settings takes as conversation_settings_diff: defaults for the caller's new conversations. */
export const ConversationSettingsDiff = Type.Object(
  {
    /** OpenHands' version of the stored form, as its clients send it back; there is one here. */
    schema_version: Type.Optional(Type.Literal(1)),
    max_iterations: Nullable(Type.Integer({ minimum: 1, maximum: 100_000 })),
    confirmation_mode: Nullable(Type.Boolean()),
    /** With confirmation mode: llm asks only for actions the model rates risky; none for every action (OpenHands' mapping). */
    security_analyzer: Nullable(Type.Union([Type.Literal('llm'), Type.Literal('none')])),
  },
  STRICT,
);
export type ConversationSettingsDiff = Static<typeof ConversationSettingsDiff>;

/** The settings as GET /settings shows them (api keys never: api_key null, api_key_set). */
export const AgentSettingsView = Type.Object({
  llm: Type.Object({ model: Type.Union([Type.String(), Type.Null()]), base_url: Type.Union([Type.String(), Type.Null()]), api_key: Type.Null(), api_key_set: Type.Boolean() }, { additionalProperties: true }),
});
export const ConversationSettingsView = Type.Object({
  schema_version: Type.Literal(1),
  max_iterations: Type.Union([Type.Integer(), Type.Null()]),
  confirmation_mode: Type.Boolean(),
  security_analyzer: Type.Union([Type.Literal('llm'), Type.Literal('none')]),
});

/** One field of a settings form (OpenHands' SettingsFieldSchema). */
export const SettingsField = Type.Object({
  key: Type.String({ description: 'Dotted path of the value in agent_settings / conversation_settings' }),
  label: Type.String(),
  description: Type.Union([Type.String(), Type.Null()]),
  section: Type.String(),
  section_label: Type.String(),
  value_type: Type.Union([Type.Literal('string'), Type.Literal('integer'), Type.Literal('number'), Type.Literal('boolean'), Type.Literal('array'), Type.Literal('object')]),
  default: Type.Unknown(),
  prominence: Type.Union([Type.Literal('critical'), Type.Literal('major'), Type.Literal('minor')]),
  depends_on: Type.Array(Type.String()),
  secret: Type.Boolean(),
  choices: Type.Array(Type.Object({ label: Type.String(), value: Type.Unknown() })),
  variant: Type.Union([Type.String(), Type.Null()]),
});
export type SettingsField = Static<typeof SettingsField>;
export const SettingsSection = Type.Object({ key: Type.String(), label: Type.String(), variant: Type.Union([Type.String(), Type.Null()]), fields: Type.Array(SettingsField) });
/** GET /settings/agent-schema and /settings/conversation-schema (OpenHands' SettingsSchema). */
export const SettingsForm = Type.Object({ model_name: Type.String(), sections: Type.Array(SettingsSection) });
export type SettingsForm = Static<typeof SettingsForm>;

/** GET /skills/search (OpenHands' SkillPage items). */
export const SkillInfo = Type.Object({
  name: Type.String(),
  type: Type.String({ description: 'knowledge (triggered by keywords), repo (always loaded), agentskills, or plugin' }),
  source: Type.String({ description: 'Where it comes from: marketplace:<registered name>' }),
  triggers: Type.Union([Type.Array(Type.String()), Type.Null()]),
});
export const SkillSearchQuery = Type.Object({
  query: Type.Optional(Type.String({ description: 'Substring the name must contain (case-insensitive)' })),
  page_id: Type.Optional(Type.String()),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 100 })),
});
export type SkillSearchQuery = Static<typeof SkillSearchQuery>;
