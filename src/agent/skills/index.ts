// Skills of a conversation (public API; plugins add theirs through `extra`), as OpenHands 1.58 builds
// them: agent_context.skills (explicit), the user's skills only with `load_user_skills: true`, and
// the workspace's (then its git root's) only with `load_project_skills: true` — both flags default
// to false, as 1.58's AgentContext. Precedence by name, 1.58's: user skills yield to explicit ones
// (AgentContext.resolve_auto_skills), plugin skills override both (Plugin.add_skills_to), project
// skills override everything (LocalConversation resolves them last, "authoritative").
// `agent_context.disabled_skills` leaves names out of all but the plugins'.
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

/** The sources apart: `base` (user and explicit skills, user yielding) under plugins, `project` over them; both less disabled_skills. */
export function conversationSkillSources(host: Pick<AgentHost, 'workspaceDir' | 'request' | 'requestSkillsOnly' | 'userHome'>): { base: Skill[]; project: Skill[] } {
  const ctx = host.request.agent?.agent_context;
  // The deny-list (OpenHands' AgentContext.disabled_skills) applies to every source but plugins, which load later.
  const disabled = new Set(ctx?.disabled_skills ?? []);
  const allowed = (skills: Skill[]) => (disabled.size ? skills.filter((s) => !disabled.has(s.name)) : skills);
  const explicit = requestSkills(ctx?.skills);
  if (host.requestSkillsOnly) return { base: allowed(explicit), project: [] };
  const user = ctx?.load_user_skills === true ? loadUserSkillsSync(host.userHome) : [];
  const project = ctx?.load_project_skills === true ? loadProjectSkillsSync(host.workspaceDir) : [];
  return { base: allowed(mergeByName(user, explicit)), project: allowed(project) };
}

/** The synchronous core of resolveSkills (the agent builds its tools and prompt from it). */
export function resolveSkillsSync(host: Pick<AgentHost, 'workspaceDir' | 'request' | 'requestSkillsOnly' | 'userHome'>, extra: readonly Skill[] = []): Skill[] {
  const { base, project } = conversationSkillSources(host);
  return mergeByName(base, extra, project);
}

/** Everything one conversation has: called once when it starts; `extra` (plugin skills) overrides by name. */
export async function resolveSkills(host: Pick<AgentHost, 'workspaceDir' | 'request'>, extra: readonly Skill[] = []): Promise<Skill[]> {
  return resolveSkillsSync(host, extra);
}
