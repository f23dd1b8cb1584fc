// The extensions repository routes (OpenHands 1.58.2 skills_router.py / plugins_router.py):
// GET /api/skills/catalog, POST /api/skills/sync, GET /api/skills/marketplace,
// GET /api/plugins/marketplace. Schema and type share a name.
import Type, { type Static } from 'typebox';
import { Nullable, STRICT } from '../events/common.ts';
import { PluginSkillSummary } from './plugins.ts';
import { SkillInfo } from './skills.ts';

export const SkillCatalogEntry = Type.Object({
  ...SkillInfo.properties,
  /** `public`: the extensions repository; `user`: the user's own skills (a user skill shadowing a public one is `user`). */
  origin: Type.Union([Type.Literal('public'), Type.Literal('user')]),
}, STRICT);
export type SkillCatalogEntry = Static<typeof SkillCatalogEntry>;

export const SkillCatalogResponse = Type.Object({ skills: Type.Array(SkillCatalogEntry) }, STRICT);
export type SkillCatalogResponse = Static<typeof SkillCatalogResponse>;

export const SyncResponse = Type.Object({
  status: Type.Union([Type.Literal('success'), Type.Literal('error')]),
  message: Type.String(),
}, STRICT);
export type SyncResponse = Static<typeof SyncResponse>;

export const MarketplaceSkillInfo = Type.Object({
  name: Type.String(),
  description: Type.Union([Type.String(), Type.Null()]),
  /** What POST /api/skills/install takes: `github:owner/repo@ref/path`, a URL, or a path. */
  source: Type.String(),
  installed: Type.Boolean(),
}, STRICT);
export type MarketplaceSkillInfo = Static<typeof MarketplaceSkillInfo>;

export const MarketplaceCatalogResponse = Type.Object({ skills: Type.Array(MarketplaceSkillInfo) }, STRICT);
export type MarketplaceCatalogResponse = Static<typeof MarketplaceCatalogResponse>;

export const MarketplacePluginInfo = Type.Object({
  name: Type.String(),
  description: Type.Union([Type.String(), Type.Null()]),
  /** Plugin source coordinates a start request's `plugins` takes. */
  source: Type.String(),
  ref: Nullable(Type.String()),
  repo_path: Nullable(Type.String()),
  installed: Type.Boolean(),
  /** The plugin's contents when it lies in the extensions clone; null when it is in another repository. */
  path: Nullable(Type.String()),
  skills: Nullable(Type.Array(PluginSkillSummary)),
  files: Nullable(Type.Array(Type.String())),
}, STRICT);
export type MarketplacePluginInfo = Static<typeof MarketplacePluginInfo>;

export const PluginsMarketplaceCatalogResponse = Type.Object({ plugins: Type.Array(MarketplacePluginInfo) }, STRICT);
export type PluginsMarketplaceCatalogResponse = Static<typeof PluginsMarketplaceCatalogResponse>;
