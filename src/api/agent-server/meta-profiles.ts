// Meta-profiles (OpenHands 1.58 `/api/meta-profiles`): model-routing configurations (a classifier LLM
// profile and task classes, each naming the LLM profile for it, or a direct-routing prompt) that
// OpenHands' route_task_to_model tool reads. Secret-free.
import Type, { type Static } from 'typebox';
import { Nullable } from '../events/common.ts';

export const MAX_META_PROFILES = 50;

export const MetaProfileClass = Type.Object({ description: Type.String(), model: Type.String() });
export const MetaProfile = Type.Object({
  classifier_model: Type.String(),
  classes: Type.Optional(Type.Array(MetaProfileClass, { default: [] })),
  prompt_template: Nullable(Type.String()),
  model_table: Nullable(Type.String()),
});
export type MetaProfile = Static<typeof MetaProfile>;

export const MetaProfileListResponse = Type.Object({
  meta_profiles: Type.Array(Type.Object({ name: Type.String(), classifier_model: Nullable(Type.String()), num_classes: Type.Integer({ default: 0 }) })),
  active_meta_profile: Nullable(Type.String()),
});
export const MetaProfileDetailResponse = Type.Object({ name: Type.String(), config: MetaProfile });
export const MetaProfileMutationResponse = Type.Object({ name: Type.String(), message: Type.String() });
export const ActivateMetaProfileResponse = Type.Object({ name: Type.String(), message: Type.String(), applied: Type.Boolean({ default: true }) });
