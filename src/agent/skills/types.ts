// A skill as the agent and the skills API see it: the OpenHands SkillInfo wire fields plus where it
// came from. Plugins (src/agent/plugins) build these too, so the shape is a public contract.

/** `repo`: always on (full text in the system prompt); `knowledge`: keyword-triggered; `agentskills`: SKILL.md. */
export type SkillType = 'repo' | 'knowledge' | 'agentskills';

export interface Skill {
  name: string;
  type: SkillType;
  /** The body (frontmatter removed; third-party files such as AGENTS.md verbatim). */
  content: string;
  /** Keywords that inject the content when a user message contains one (whole token, any case). */
  triggers: string[];
  /** Path of the file it was read from (OpenHands SkillInfo.source); null for skills sent in a request. */
  source: string | null;
  description: string | null;
  is_agentskills_format: boolean;
  /** Listed nowhere and not invocable by the model; only triggers inject it. */
  disable_model_invocation: boolean;
  /** Directory of the skill (`${SKILL_ROOT}`; where scripts/ and references/ live); null when not on disk. */
  root: string | null;
  /** Where it was loaded from: `user`, `project`, `request`, `org`, `plugin:<name>`, ... (not on the wire). */
  origin: string;
  /** A path rule: workspace-relative globs; touching a matching file injects it (not on the wire). */
  paths?: string[];
}

/** SkillInfo as POST /api/skills answers it (OpenHands `skills_router.py`). */
export function skillInfo(s: Skill) {
  return {
    name: s.name,
    type: s.type,
    content: s.content,
    triggers: s.triggers,
    source: s.source,
    description: s.description,
    is_agentskills_format: s.is_agentskills_format,
    disable_model_invocation: s.disable_model_invocation,
  };
}

/** Later lists override earlier ones by name; the order of first appearance is kept. */
export function mergeByName(...lists: readonly (readonly Skill[])[]): Skill[] {
  const byName = new Map<string, Skill>();
  for (const list of lists) for (const s of list) byName.set(s.name, s);
  return [...byName.values()];
}
