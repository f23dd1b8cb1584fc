// POST /api/plugins (OpenHands agent_server/plugins_router.py): the plugins a workspace has locally
// (user and project plugin directories). Schema and type share a name.
import Type, { type Static } from 'typebox';
import { Nullable, STRICT } from '../events/common.ts';

export const PluginsRequest = Type.Object(
  {
    /** ~/.agents/plugins, ~/.openhands/plugins. */
    load_user: Type.Optional(Type.Boolean({ default: true })),
    /** {project_dir}/.agents/plugins, {project_dir}/.openhands/plugins (and the same under its git root). */
    load_project: Type.Optional(Type.Boolean({ default: true })),
    /** Absolute, or relative to the server's workspace. */
    project_dir: Nullable(Type.String()),
  },
  STRICT,
);
export type PluginsRequest = Static<typeof PluginsRequest>;

export const PluginSkillSummary = Type.Object({ name: Type.String(), description: Nullable(Type.String()) }, STRICT);
export type PluginSkillSummary = Static<typeof PluginSkillSummary>;

/** A subagent definition the plugin ships (agents/*.md): run by the task tool of conversations whose agent.tools name task_tool_set. */
export const PluginAgentSummary = Type.Object({ name: Type.String(), description: Nullable(Type.String()), runnable: Type.Boolean() }, STRICT);
export type PluginAgentSummary = Static<typeof PluginAgentSummary>;

export const PluginInfo = Type.Object(
  {
    name: Type.String(),
    version: Type.String({ default: '' }),
    description: Type.String({ default: '' }),
    /** The plugin's directory. */
    path: Type.String({ default: '' }),
    skills: Type.Array(PluginSkillSummary, { default: [] }),
    /** Files relative to `path`. */
    files: Type.Array(Type.String(), { default: [] }),
    /** agentyard addition: the plugin's subagent definitions (run by the task tool). */
    agents: Type.Optional(Type.Array(PluginAgentSummary, { default: [] })),
  },
  STRICT,
);
export type PluginInfo = Static<typeof PluginInfo>;

export const PluginsResponse = Type.Object({ plugins: Type.Array(PluginInfo) }, STRICT);
export type PluginsResponse = Static<typeof PluginsResponse>;
