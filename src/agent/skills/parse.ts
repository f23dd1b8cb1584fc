// One skill file to a Skill: AgentSkills `SKILL.md` (name must equal its directory), legacy
// OpenHands `.md` files with optional frontmatter, and third-party instruction files (AGENTS.md,
// CLAUDE.md, GEMINI.md, .cursorrules), which are always on. Rules follow OpenHands `skills/skill.py`.
import { basename, dirname, relative, sep } from 'node:path';
import { parse as parseYaml } from 'yaml';
import type { Skill } from './types.ts';

/** Lower-cased file name to skill name (OpenHands PATH_TO_THIRD_PARTY_SKILL_NAME). */
export const THIRD_PARTY_FILES: Readonly<Record<string, string>> = {
  '.cursorrules': 'cursorrules',
  'agents.md': 'agents',
  'agent.md': 'agents',
  'claude.md': 'claude',
  'gemini.md': 'gemini',
};

export const MAX_DESCRIPTION_LENGTH = 1024;
const NAME_PATTERN = /^[a-z0-9]+(-[a-z0-9]+)*$/;

/** A file that is not a usable skill; the loader logs it and goes on with the others. */
export class SkillFileError extends Error {}

export interface Frontmatter {
  meta: Record<string, unknown>;
  body: string;
}

/** `---\nyaml\n---\nbody`; a file without that header is all body. */
export function splitFrontmatter(text: string): Frontmatter {
  const m = /^\uFEFF?---[ \t]*\r?\n([\s\S]*?)\r?\n---[ \t]*(?:\r?\n|$)/.exec(text);
  if (!m) return { meta: {}, body: text };
  let meta: unknown;
  try {
    meta = parseYaml(m[1]!);
  } catch (err) {
    throw new SkillFileError(`invalid frontmatter: ${(err as Error).message}`);
  }
  if (meta != null && (typeof meta !== 'object' || Array.isArray(meta))) throw new SkillFileError('frontmatter must be a mapping');
  return { meta: (meta ?? {}) as Record<string, unknown>, body: text.slice(m[0].length) };
}

export function validateSkillName(name: string, dirName?: string): string[] {
  const errors: string[] = [];
  if (!name) return ['name cannot be empty'];
  if (name.length > 64) errors.push(`name exceeds 64 characters: ${name.length}`);
  if (!NAME_PATTERN.test(name)) errors.push("name must be lowercase alphanumeric with single hyphens (e.g. 'pdf-tools')");
  if (dirName !== undefined && name !== dirName) errors.push(`name '${name}' does not match directory '${dirName}'`);
  return errors;
}

export function thirdPartySkill(path: string, content: string, origin: string): Skill | undefined {
  const name = THIRD_PARTY_FILES[basename(path).toLowerCase()];
  if (!name) return undefined;
  return { name, type: 'repo', content, triggers: [], source: path, description: null, is_agentskills_format: false, disable_model_invocation: false, root: dirname(path), origin };
}

/** An AgentSkills `<dir>/<name>/SKILL.md`. `strict` enforces the naming rules (plugins may relax them). */
export function agentSkill(path: string, text: string, origin: string, strict = true): Skill {
  const dirName = basename(dirname(path));
  const { meta, body } = splitFrontmatter(text);
  const name = meta['name'] != null ? String(meta['name']) : dirName;
  if (strict) {
    const errors = validateSkillName(name, dirName);
    if (errors.length) throw new SkillFileError(`invalid skill name '${name}': ${errors.join('; ')}`);
  }
  return fromMeta(name, body, path, meta, origin, true);
}

/** A legacy `.md` skill under `base`: named by its path without `.md` unless the frontmatter names it. */
export function legacySkill(path: string, text: string, base: string, origin: string): Skill {
  const third = thirdPartySkill(path, text, origin);
  if (third) return third;
  const derived = relative(base, path).split(sep).join('/').replace(/\.md$/i, '');
  const { meta, body } = splitFrontmatter(text);
  const name = meta['name'] != null ? String(meta['name']) : derived;
  return fromMeta(name, body, path, meta, origin, false);
}

function fromMeta(name: string, content: string, path: string, meta: Record<string, unknown>, origin: string, agentskills: boolean): Skill {
  const triggers = stringList(meta['triggers'], 'triggers') ?? [];
  const inputs = meta['inputs'];
  if (inputs !== undefined && inputs !== null && !Array.isArray(inputs)) throw new SkillFileError('inputs must be a list');
  // A task skill (inputs) also answers to `/name`, as OpenHands' TaskTrigger does.
  if (Array.isArray(inputs) && inputs.length && !triggers.includes(`/${name}`)) triggers.push(`/${name}`);
  const paths = parsePaths(meta['paths']);
  const disable = meta['disable-model-invocation'] ?? meta['disable_model_invocation'];
  let description = meta['description'] != null ? String(meta['description']) : null;
  if (description && description.length > MAX_DESCRIPTION_LENGTH) {
    description = `${description.slice(0, MAX_DESCRIPTION_LENGTH)}... [description truncated; the full text is in ${path}]`;
  }
  return {
    name,
    type: agentskills ? 'agentskills' : triggers.length || paths != null ? 'knowledge' : 'repo',
    // Stripped, as OpenHands' frontmatter reader gives it (its SkillInfo.content has no surrounding blank lines).
    content: content.trim(),
    triggers,
    source: path,
    description,
    is_agentskills_format: agentskills,
    // Path rules are injected when a matching file is touched only: never offered to the model.
    disable_model_invocation: disable === true || disable === 'true' || paths != null,
    root: dirname(path),
    origin,
    ...(paths ? { paths } : {}),
  };
}

/** `paths: "a/**,b/*.ts"` or a list; none when empty. */
function parsePaths(v: unknown): string[] | undefined {
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'string' && !Array.isArray(v)) throw new SkillFileError('paths must be a string or list');
  const list = (typeof v === 'string' ? v.split(',') : v).map((p) => String(p).trim()).filter(Boolean);
  return list.length ? list : undefined;
}

function stringList(v: unknown, field: string): string[] | undefined {
  if (v === undefined || v === null) return undefined;
  if (!Array.isArray(v)) throw new SkillFileError(`${field} must be a list`);
  return v.map((x) => String(x)).filter((x) => x.length > 0);
}
