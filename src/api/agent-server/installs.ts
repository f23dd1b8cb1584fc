// Installed skills and plugins (OpenHands 1.58 skills_router.py / plugins_router.py): install from
// a local path, a git URL or `github:owner/repo[/path]`, list, read, enable/disable, uninstall,
// refresh; and a plugin fetched and described without installing it. Schema and type share a name.
import Type, { type Static } from 'typebox';
import { Nullable } from '../events/common.ts';
import { SecretInput } from './policy.ts';
import { PluginSkillSummary } from './plugins.ts';

/** The installed-extension name rule of OpenHands (kebab-case), for `{skill_name}` / `{plugin_name}`. */
export const INSTALLED_NAME_PATTERN = '^[a-z0-9]+(?:-[a-z0-9]+)*$';
export const SkillName = Type.String({ minLength: 1, maxLength: 255, pattern: INSTALLED_NAME_PATTERN, description: 'Skill name (lowercase alphanumeric, hyphens)' });
export const PluginName = Type.String({ minLength: 1, maxLength: 255, pattern: INSTALLED_NAME_PATTERN, description: 'Plugin name (lowercase alphanumeric, hyphens)' });

const installFields = (what: string, example: string) => ({
  source: Type.String({ minLength: 1, description: `${what} source - git URL, GitHub shorthand (github:owner/repo, optionally followed by the ${what.toLowerCase()}'s path in the repository), or local path (absolute, or relative to the workspace). Example: '${example}'` }),
  ref: Nullable(Type.String({ description: 'Optional branch, tag, or commit to install' })),
  repo_path: Nullable(Type.String({ description: 'Subdirectory path within the repository (for monorepos); must stay inside it' })),
  force: Type.Optional(Type.Boolean({ default: false, description: 'If true, overwrite existing installation' })),
});

export const InstallSkillRequest = Type.Object(installFields('Skill', 'github:OpenHands/extensions/skills/github'));
export type InstallSkillRequest = Static<typeof InstallSkillRequest>;
export const InstallPluginRequest = Type.Object(installFields('Plugin', 'github:OpenHands/extensions/plugins/city-weather'));
export type InstallPluginRequest = Static<typeof InstallPluginRequest>;

const installedFields = {
  name: Type.String(),
  version: Type.String({ default: '' }),
  description: Type.String({ default: '' }),
  enabled: Type.Boolean({ default: true }),
  /** As given at install time (e.g. 'github:owner/repo'); `local` for a directory copied into the store by hand. */
  source: Type.String(),
  /** The commit installed (git sources); null for a local directory. */
  resolved_ref: Type.Union([Type.String(), Type.Null()]),
  repo_path: Type.Union([Type.String(), Type.Null()]),
  /** ISO 8601. */
  installed_at: Type.String(),
  install_path: Type.String(),
};

export const InstalledSkill = Type.Object(installedFields);
export type InstalledSkill = Static<typeof InstalledSkill>;
export const InstalledSkillList = Type.Object({ skills: Type.Array(InstalledSkill) });
export type InstalledSkillList = Static<typeof InstalledSkillList>;

export const InstalledPlugin = Type.Object({
  ...installedFields,
  /** Skills and commands it brings; null when the installed copy no longer loads. */
  skills: Type.Union([Type.Array(PluginSkillSummary), Type.Null()]),
  /** Its files relative to install_path; null when it no longer loads. */
  files: Type.Union([Type.Array(Type.String()), Type.Null()]),
});
export type InstalledPlugin = Static<typeof InstalledPlugin>;
export const InstalledPluginList = Type.Object({ plugins: Type.Array(InstalledPlugin) });
export type InstalledPluginList = Static<typeof InstalledPluginList>;

export const UpdateInstalledStateRequest = Type.Object({ enabled: Type.Boolean() });
export type UpdateInstalledStateRequest = Static<typeof UpdateInstalledStateRequest>;
export const UpdateInstalledStateResponse = Type.Object({ name: Type.String(), enabled: Type.Boolean() });
export type UpdateInstalledStateResponse = Static<typeof UpdateInstalledStateResponse>;
export const UninstallResponse = Type.Object({ message: Type.String() });
export type UninstallResponse = Static<typeof UninstallResponse>;
export const RefreshSkillResponse = Type.Object({ message: Type.String(), skill: InstalledSkill });
export type RefreshSkillResponse = Static<typeof RefreshSkillResponse>;
export const RefreshPluginResponse = Type.Object({ message: Type.String(), plugin: InstalledPlugin });
export type RefreshPluginResponse = Static<typeof RefreshPluginResponse>;

/** POST /api/plugins/fetch: check a plugin source and pin its commit, without installing it. */
export const FetchPluginRequest = Type.Object({
  source: Type.String({ minLength: 1, description: 'Plugin git source (a local path is also taken)' }),
  ref: Nullable(Type.String({ description: 'Branch, tag, or commit' })),
  repo_path: Nullable(Type.String({ description: 'Subdirectory path within the repository (for monorepos)' })),
  /** Fill `${VAR}` placeholders of source and ref (never the environment); never echoed back. */
  secrets: Type.Optional(Type.Record(Type.String(), SecretInput, { default: {} })),
  timeout: Type.Optional(Type.Integer({ minimum: 1, maximum: 600, default: 60, description: 'Git timeout seconds' })),
});
export type FetchPluginRequest = Static<typeof FetchPluginRequest>;

export const FetchPluginResponse = Type.Object({
  /** The checked directory: the source itself for a local path, else a checkout pinned by commit in the server's plugin cache. */
  path: Type.String(),
  resolved_ref: Type.Union([Type.String(), Type.Null()]),
  /** As given (placeholders kept). */
  source: Type.String(),
  repo_path: Type.Union([Type.String(), Type.Null()]),
  /** plugin.json as written. */
  manifest: Type.Record(Type.String(), Type.Unknown()),
  skills: Type.Array(Type.String()),
  commands: Type.Array(Type.String()),
});
export type FetchPluginResponse = Static<typeof FetchPluginResponse>;
