// Finding skills on disk: a skills directory (AgentSkills folders and legacy .md files), a project
// (third-party files at the workspace and its git root, then .agents/skills, .openhands/skills and
// .openhands/microagents), the user's home, and skills sent in the start request. Reads are
// synchronous: they are a handful of small local files, and the agent needs them before it answers
// a user message (trigger matching happens while the message is recorded).
import { existsSync, readdirSync, readFileSync, realpathSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { createLogger } from '../../util/log.ts';
import { agentSkill, legacySkill, SkillFileError, THIRD_PARTY_FILES, thirdPartySkill } from './parse.ts';
import { nestedRuleSkills } from './path-rules.ts';
import { enabledInstalledDirs, installedDir, type ExtensionMeta } from '../extensions/installed.ts';
import type { Skill, SkillType } from './types.ts';

const log = createLogger('skills');

function isDir(p: string): boolean {
  try {
    return statSync(p).isDirectory();
  } catch {
    return false;
  }
}

function tryLoad(path: string, load: () => Skill): Skill | undefined {
  try {
    return load();
  } catch (err) {
    if (!(err instanceof SkillFileError) && !(err instanceof Error && 'code' in err)) throw err;
    log.warn({ path, reason: (err as Error).message }, 'skill file skipped');
    return undefined;
  }
}

/** `<dir>/<name>/SKILL.md` folders first, then every other `.md` below (README.md excluded); first of a name wins. */
/** `exclude`: directories below `dir` not read (the install store under ~/.openhands/skills is not a skill). */
export function loadSkillsDirSync(dir: string, origin: string, opts: { strict?: boolean; exclude?: string[] } = {}): Skill[] {
  if (!isDir(dir)) return [];
  const skills: Skill[] = [];
  const skillDirs = new Set<string>(opts.exclude ?? []);
  for (const entry of readdirSync(dir, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
    if (!entry.isDirectory()) continue;
    const sub = join(dir, entry.name);
    if (skillDirs.has(sub)) continue;
    const md = readdirSync(sub).find((f) => f.toLowerCase() === 'skill.md');
    if (!md) continue;
    skillDirs.add(sub);
    const path = join(sub, md);
    const s = tryLoad(path, () => agentSkill(path, readFileSync(path, 'utf8'), origin, opts.strict ?? true));
    if (s) skills.push(s);
  }
  for (const path of markdownFiles(dir, skillDirs)) {
    const s = tryLoad(path, () => legacySkill(path, readFileSync(path, 'utf8'), dir, origin));
    if (s) skills.push(s);
  }
  return firstByName(skills);
}

function markdownFiles(dir: string, exclude: Set<string>): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (!entry.isFile() || !entry.name.toLowerCase().endsWith('.md')) continue;
    if (entry.name === 'README.md' || entry.name.toLowerCase() === 'skill.md') continue;
    const path = join(entry.parentPath, entry.name);
    if ([...exclude].some((d) => path.startsWith(d + '/'))) continue;
    out.push(path);
  }
  return out.sort();
}

function firstByName(skills: Skill[]): Skill[] {
  const seen = new Set<string>();
  return skills.filter((s) => !seen.has(s.name) && seen.add(s.name));
}

/** The nearest directory at or above `dir` holding `.git` (a directory, or a file for worktrees). */
export function gitRoot(dir: string): string | undefined {
  for (let d = resolve(dir); ; d = dirname(d)) {
    if (existsSync(join(d, '.git'))) return d;
    if (dirname(d) === d) return undefined;
  }
}

/** AGENTS.md and friends directly in `root`, any case; a symlink to a file already taken counts once. */
function thirdPartyFiles(root: string, origin: string): Skill[] {
  if (!isDir(root)) return [];
  const out: Skill[] = [];
  const real = new Set<string>();
  // Real files before symlinks, so CLAUDE.md -> AGENTS.md loads once, under the real file's name.
  const names = readdirSync(root, { withFileTypes: true }).filter((e) => THIRD_PARTY_FILES[e.name.toLowerCase()]);
  for (const e of names.sort((a, b) => Number(a.isSymbolicLink()) - Number(b.isSymbolicLink()) || a.name.localeCompare(b.name))) {
    const path = join(root, e.name);
    const s = tryLoad(path, () => {
      if (!statSync(path).isFile()) throw new SkillFileError('not a file');
      const target = realpathSync(path);
      if (real.has(target)) throw new SkillFileError('same file as another instruction file');
      real.add(target);
      return thirdPartySkill(path, readFileSync(path, 'utf8'), origin)!;
    });
    if (s) out.push(s);
  }
  return out;
}

/** Project skills: the working directory wins over its git root; earlier directories win over later ones. */
export function loadProjectSkillsSync(workDir: string, origin = 'project'): Skill[] {
  const roots = [resolve(workDir)];
  const git = gitRoot(workDir);
  if (git && git !== roots[0]) roots.push(git);
  const found: Skill[] = [];
  for (const root of roots) found.push(...thirdPartyFiles(root, origin));
  // sub/dir/AGENTS.md and friends: rules for files under their directory (relative to the working directory).
  found.push(...nestedRuleSkills(roots[0]!, origin, git !== undefined));
  for (const root of roots) {
    for (const sub of ['.agents/skills', '.openhands/skills', '.openhands/microagents']) found.push(...loadSkillsDirSync(join(root, sub), origin));
  }
  return firstByName(found);
}

/**
 * `~/.agents/skills`, then `~/.openhands/skills`, then `~/.openhands/microagents`; the first of a
 * name wins. Then the enabled installed skills (`~/.openhands/skills/installed`, POST
 * /api/skills/install), below those on a name conflict, as OpenHands' load_user_skills.
 */
export function loadUserSkillsSync(home?: string): Skill[] {
  // `home` undefined: the installed store follows OH_PERSISTENCE_DIR (installedDir), the skill dirs the user's home.
  const store = installedDir('skills', home);
  const dirs = firstByName(['.agents/skills', '.openhands/skills', '.openhands/microagents'].flatMap((sub) => loadSkillsDirSync(join(home ?? homedir(), sub), 'user', { exclude: [store] })));
  const installed: Skill[] = [];
  for (const dir of enabledInstalledDirs(store, installedSkillMeta)) {
    const s = tryLoad(dir, () => loadSkillDir(dir));
    if (s) installed.push(s);
  }
  return firstByName([...dirs, ...installed]);
}

/** A skill's own directory (an installed skill): its SKILL.md (any case), AgentSkills name rules enforced (OpenHands strict load). */
export function loadSkillDir(dir: string, origin = 'user'): Skill {
  const md = readdirSync(dir)
    .sort()
    .find((f) => f.toLowerCase() === 'skill.md' && statSync(join(dir, f)).isFile());
  if (!md) throw new SkillFileError(`Skill directory is missing SKILL.md: ${dir}`);
  const path = join(dir, md);
  return agentSkill(path, readFileSync(path, 'utf8'), origin, true);
}

/** What the install store records of a skill (OpenHands: a skill's version is always 1.0.0, the frontmatter's is not read). */
export function installedSkillMeta(dir: string): ExtensionMeta {
  const s = loadSkillDir(dir);
  return { name: s.name, version: '1.0.0', description: s.description ?? '' };
}

/**
 * Skills sent in `agent.agent_context.skills`: OpenHands Skill objects (`trigger: {type, keywords|triggers}`)
 * or SkillInfo objects (`type`, `triggers`). Entries without a name or content are ignored.
 */
export function requestSkills(list: readonly Record<string, unknown>[] | undefined): Skill[] {
  const out: Skill[] = [];
  for (const raw of list ?? []) {
    const name = typeof raw['name'] === 'string' ? raw['name'] : '';
    const content = typeof raw['content'] === 'string' ? raw['content'] : undefined;
    if (!name || content === undefined) continue;
    const trigger = raw['trigger'] as Record<string, unknown> | null | undefined;
    const fromTrigger = trigger && typeof trigger === 'object' ? (trigger['keywords'] ?? trigger['triggers']) : undefined;
    const triggers = (Array.isArray(fromTrigger) ? fromTrigger : Array.isArray(raw['triggers']) ? raw['triggers'] : []).map(String);
    const agentskills = raw['is_agentskills_format'] === true || raw['type'] === 'agentskills';
    const type: SkillType = agentskills ? 'agentskills' : triggers.length ? 'knowledge' : 'repo';
    const source = typeof raw['source'] === 'string' ? raw['source'] : null;
    out.push({
      name,
      type,
      content,
      triggers,
      source,
      description: typeof raw['description'] === 'string' ? raw['description'] : null,
      is_agentskills_format: agentskills,
      disable_model_invocation: raw['disable_model_invocation'] === true,
      root: source && source.startsWith('/') ? dirname(source) : null,
      origin: 'request',
    });
  }
  return out;
}
