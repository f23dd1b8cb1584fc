// Skills of a conversation (public API; plugins add theirs through `extra`).
// Precedence, later overriding earlier by name (OpenHands skills_service.load_all_skills plus the
// request and plugins on top): user (~/.agents/skills, ...) < project (workspace, then git root)
// < skills sent in agent.agent_context.skills < `extra` (plugins); `agent_context.disabled_skills`
// leaves names out of all but the plugins'.
import type { AgentHost } from '../types.ts';
import { loadProjectSkillsSync, loadSkillsDirSync, loadUserSkillsSync, requestSkills } from './load.ts';
import { mergeByName, type Skill } from './types.ts';

export type { Skill, SkillType } from './types.ts';
export { mergeByName, skillInfo } from './types.ts';
export { gitRoot, loadProjectSkillsSync, loadUserSkillsSync, requestSkills } from './load.ts';
export { availableSkillsPrompt, keywordMatches, listedSkills, matchTriggers, repoContext, repoSkills, renderSkill, skillsPromptSection, triggeredSkillsText, type TriggerMatch } from './prompt.ts';

/**
 * A skills directory: `<name>/SKILL.md` folders (AgentSkills) and legacy `*.md` files below it.
 * `source` labels where they come from (`user`, `project`, `plugin:<name>`; recorded as `origin`).
 * Broken files are skipped with a warning; a missing directory gives [].
 */
export async function loadSkillsFromDir(dir: string, source: string, opts: { strict?: boolean } = {}): Promise<Skill[]> {
  return loadSkillsDirSync(dir, source, opts);
}

/** The synchronous core of resolveSkills (the agent builds its tools and prompt from it). */
export function resolveSkillsSync(host: Pick<AgentHost, 'workspaceDir' | 'request' | 'requestSkillsOnly' | 'userHome'>, extra: readonly Skill[] = []): Skill[] {
  const ctx = host.request.agent?.agent_context;
  // The deny-list (OpenHands' AgentContext.disabled_skills) applies to every source but plugins, which load later.
  const disabled = new Set(ctx?.disabled_skills ?? []);
  const allowed = (skills: Skill[]) => (disabled.size ? skills.filter((s) => !disabled.has(s.name)) : skills);
  if (host.requestSkillsOnly) return mergeByName(allowed(requestSkills(ctx?.skills)), extra);
  const user = ctx?.load_user_skills === false ? [] : loadUserSkillsSync(host.userHome);
  return mergeByName(allowed(mergeByName(user, loadProjectSkillsSync(host.workspaceDir), requestSkills(ctx?.skills))), extra);
}

/** Everything one conversation has: called once when it starts; `extra` (plugin skills) overrides by name. */
export async function resolveSkills(host: Pick<AgentHost, 'workspaceDir' | 'request'>, extra: readonly Skill[] = []): Promise<Skill[]> {
  return resolveSkillsSync(host, extra);
}
