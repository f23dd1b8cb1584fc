// POST /api/skills (OpenHands agent_server/skills_router.py): every skill a workspace would load,
// with a count per source. Schema and type share a name.
import Type, { type Static } from 'typebox';
import { Nullable, STRICT } from '../events/common.ts';

export const ExposedUrl = Type.Object({ name: Type.String(), url: Type.String(), port: Type.Integer() });
export type ExposedUrl = Static<typeof ExposedUrl>;

export const OrgConfig = Type.Object({
  /** The selected repository, e.g. `owner/repo`. */
  repository: Type.String(),
  /** github, gitlab, azure, bitbucket. */
  provider: Type.String(),
  /** Pre-authenticated clone URL of the organization's configuration repository (never logged). */
  org_repo_url: Type.String({ minLength: 1 }),
  org_name: Type.String(),
});
export type OrgConfig = Static<typeof OrgConfig>;

/** A marketplace registration (OpenHands MarketplaceRegistration): where plugins and skills are listed. */
export const MarketplaceRegistration = Type.Object({
  name: Type.String(),
  /** `github:owner/repo`, a git URL, or a local path. */
  source: Type.String(),
  ref: Nullable(Type.String()),
  /** A subdirectory of the repository: relative, `/` separators, no `..` (checked: 422). */
  repo_path: Nullable(Type.String()),
  /** true: every plugin and standalone skill; a list: those names; false or []: none. */
  auto_load: Type.Optional(Type.Union([Type.Boolean(), Type.Array(Type.String())], { default: false })),
});
export type MarketplaceRegistration = Static<typeof MarketplaceRegistration>;

export const SkillsRequest = Type.Object({
  load_public: Type.Optional(Type.Boolean({ default: true })),
  load_user: Type.Optional(Type.Boolean({ default: true })),
  load_project: Type.Optional(Type.Boolean({ default: true })),
  load_org: Type.Optional(Type.Boolean({ default: true })),
  marketplace_path: Nullable(Type.String()),
  /** Marketplaces whose auto_load plugins and standalone skills join the public skills (with load_public); the server's (OH_REGISTERED_MARKETPLACES) are merged under these by name. */
  registered_marketplaces: Type.Optional(Type.Array(MarketplaceRegistration, { default: [] })),
  /** Workspace directory whose project skills load (absolute). */
  project_dir: Nullable(Type.String()),
  org_configs: Nullable(Type.Array(OrgConfig)),
  /** Deprecated single form of org_configs. */
  org_config: Nullable(OrgConfig),
  sandbox_config: Nullable(Type.Object({ exposed_urls: Type.Optional(Type.Array(ExposedUrl, { default: [] })) })),
});
export type SkillsRequest = Static<typeof SkillsRequest>;

export const SkillInfo = Type.Object({
  name: Type.String(),
  type: Type.Union([Type.Literal('repo'), Type.Literal('knowledge'), Type.Literal('agentskills')]),
  content: Type.String(),
  triggers: Type.Array(Type.String()),
  /** Path of the file it came from; null for generated skills. */
  source: Type.Union([Type.String(), Type.Null()]),
  description: Type.Union([Type.String(), Type.Null()]),
  is_agentskills_format: Type.Boolean(),
  disable_model_invocation: Type.Boolean(),
}, STRICT);
export type SkillInfo = Static<typeof SkillInfo>;

export const SkillsResponse = Type.Object({
  skills: Type.Array(SkillInfo),
  /** Skills loaded per source: sandbox, registered_marketplaces, public, user, org, project. */
  sources: Type.Record(Type.String(), Type.Integer({ minimum: 0 })),
  /** agentyard: names defined in both the old-style (microagents/) and new-style (skills/) part of one configuration repository; the skills/ one is used. */
  conflicts: Type.Optional(Type.Array(Type.Object({ name: Type.String(), org: Type.String(), kept: Type.String(), ignored: Type.String() }))),
}, STRICT);
export type SkillsResponse = Static<typeof SkillsResponse>;
