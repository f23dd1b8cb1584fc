// `POST /api/sub-agents` (OpenHands sub_agents_router.py): the agent definitions a workspace has.
import Type, { type Static } from 'typebox';
import { JsonObject, LiteralUnion, Nullable } from '../events/common.ts';

export const SubAgentsRequest = Type.Object({
  /** ~/.agents/agents and ~/.openhands/agents. */
  load_user: Type.Optional(Type.Boolean({ default: true })),
  /** <project_dir>/.agents/agents and <project_dir>/.openhands/agents. */
  load_project: Type.Optional(Type.Boolean({ default: true })),
  /** Built-in agents (bash-runner, code-explorer, general-purpose). */
  load_builtin: Type.Optional(Type.Boolean({ default: true })),
  /** Relative: inside the server's workspace. */
  project_dir: Nullable(Type.String()),
});
export type SubAgentsRequest = Static<typeof SubAgentsRequest>;

export const SubAgentInfo = Type.Object({
  name: Type.String(),
  description: Type.String(),
  model: Type.String(),
  color: Nullable(Type.String()),
  tools: Type.Array(Type.String()),
  skills: Type.Array(Type.String()),
  system_prompt: Type.String(),
  when_to_use_examples: Type.Array(Type.String()),
  permission_mode: Nullable(Type.String()),
  max_iteration_per_run: Nullable(Type.Integer()),
  max_budget_per_run: Nullable(Type.Number()),
  mcp_config: Nullable(JsonObject),
  /** Deprecated alias of mcp_config. */
  mcp_servers: Nullable(JsonObject),
  profile_store_dir: Nullable(Type.String()),
  hooks: Nullable(JsonObject),
  condenser: Nullable(JsonObject),
  metadata: JsonObject,
  level: Nullable(LiteralUnion(['project', 'user', 'builtin', 'plugin', 'programmatic'] as const)),
  source: Nullable(Type.String()),
  is_builtin: Type.Boolean(),
});
export type SubAgentInfo = Static<typeof SubAgentInfo>;

export const SubAgentsResponse = Type.Object({ agents: Type.Array(SubAgentInfo) });
export type SubAgentsResponse = Static<typeof SubAgentsResponse>;
