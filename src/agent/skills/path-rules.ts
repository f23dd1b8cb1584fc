// Path-scoped rules (OpenHands PathTrigger): a nested `sub/dir/AGENTS.md` (or CLAUDE.md, ...) and
// skills with `paths:` frontmatter apply to files under their globs. When a tool touches such a
// file, the rule's text is added to that ObservationEvent's extended_content, once per conversation.
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, isAbsolute, join, relative, sep } from 'node:path';
import { THIRD_PARTY_FILES } from './parse.ts';
import type { Skill } from './types.ts';

/** A walk outside git stops here (a workspace full of generated files). */
const MAX_WALK = 50_000;

/** gitignore-style: `**` crosses directories, `*` and `?` stay within one; a pattern without `/` matches at any depth. */
export function pathGlobRegex(pattern: string): RegExp {
  const p = pattern.includes('/') ? pattern : `**/${pattern}`;
  const body = (p.match(/\*\*\/|\*\*|\*|\?|[^*?]+/g) ?? [])
    .map((t) => (t === '**/' ? '(?:.*/)?' : t === '**' ? '.*' : t === '*' ? '[^/]*' : t === '?' ? '[^/]' : t.replace(/[.+^${}()|[\]\\]/g, '\\$&')))
    .join('');
  return new RegExp(`^(?:${body})$`, 's');
}

export function matchPathRule(skill: Skill, relPath: string): string | undefined {
  return skill.paths?.find((p) => pathGlobRegex(p).test(relPath));
}

/**
 * Files under `dir` relative to it: git's view (tracked and not ignored) when it is in a repository,
 * else a walk. `inGit` false (no `.git` at or above `dir`, the caller looked): git would only fail,
 * so it is not run — a synchronous spawn of git blocks the agent server's one thread for 5-20 ms,
 * and a warm-pool start without a repository paid it while its conversation waited (issue #16).
 */
function relativeFiles(dir: string, inGit: boolean): string[] {
  if (inGit || process.env['GIT_DIR']) {
    try {
      const out = execFileSync('git', ['-C', dir, 'ls-files', '-z', '--cached', '--others', '--exclude-standard'], { timeout: 10_000, stdio: ['ignore', 'pipe', 'ignore'], maxBuffer: 256 * 1024 * 1024 });
      return out.toString('utf8').split('\0').filter(Boolean);
    } catch {
      // not a repository git accepts after all (or no git): walk
    }
  }
  const found: string[] = [];
  const walk = (d: string) => {
    let entries;
    try {
      entries = readdirSync(join(dir, d), { withFileTypes: true });
    } catch {
      return;
    }
    for (const e of entries) {
      if (found.length >= MAX_WALK) return;
      const rel = d ? `${d}/${e.name}` : e.name;
      if (e.isDirectory()) {
        if (!e.name.startsWith('.') && e.name !== 'node_modules') walk(rel);
      } else found.push(rel);
    }
  };
  walk('');
  return found;
}

/**
 * Nested instruction files below the working directory (the top level ones are repo skills).
 * `inGit`: whether the working directory is in a git repository (gitRoot found one).
 */
export function nestedRuleSkills(workDir: string, origin: string, inGit = true): Skill[] {
  const rules: Skill[] = [];
  for (const rel of relativeFiles(workDir, inGit).sort()) {
    const base = THIRD_PARTY_FILES[rel.slice(rel.lastIndexOf('/') + 1).toLowerCase()];
    const relDir = rel.includes('/') ? rel.slice(0, rel.lastIndexOf('/')) : '';
    if (!base || !relDir) continue;
    const path = join(workDir, rel);
    let content: string;
    try {
      if (!statSync(path).isFile()) continue;
      content = readFileSync(path, 'utf8');
    } catch {
      continue;
    }
    rules.push({ name: `${base}:${relDir}`, type: 'knowledge', content, triggers: [], source: path, description: null, is_agentskills_format: false, disable_model_invocation: true, root: dirname(path), origin, paths: [`${relDir}/**`] });
  }
  return rules;
}

/** The workspace-relative POSIX path an action names in its `path` field; undefined outside the workspace. */
export function touchedPath(action: unknown, workspaceDir: string): string | undefined {
  const raw = (action as { path?: unknown } | null | undefined)?.path;
  if (typeof raw !== 'string' || !raw) return undefined;
  if (!isAbsolute(raw)) return raw.split(sep).join('/');
  const rel = relative(workspaceDir, raw);
  if (!rel || rel.startsWith('..') || isAbsolute(rel)) return undefined;
  return rel.split(sep).join('/');
}

const LOCATION = 'Rule location: ';

export function pathRulesText(matches: readonly { skill: Skill; pattern: string }[]): string {
  return matches
    .map(({ skill, pattern }) => `<EXTRA_INFO>\nThis rule applies because a file you touched matches "${pattern}". Follow it when working with matching files.\n${skill.source ? `${LOCATION}${skill.source}\n` : ''}\n${skill.content}\n</EXTRA_INFO>`)
    .join('\n');
}

/** Rules already added to an observation of this conversation (recognised by their location line). */
export function firedPathRules(rules: readonly Skill[], events: readonly { kind: string; extended_content?: readonly { text?: string }[] }[]): Set<string> {
  const fired = new Set<string>();
  const texts = events.filter((e) => e.kind === 'ObservationEvent' && e.extended_content?.length).map((e) => e.extended_content!.map((c) => c.text ?? '').join('\n'));
  for (const r of rules) if (r.source && texts.some((t) => t.includes(`${LOCATION}${r.source}\n`))) fired.add(r.name);
  return fired;
}
