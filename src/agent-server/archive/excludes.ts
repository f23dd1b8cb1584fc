// Which paths a workspace archive leaves out (OpenHands 1.58 `file_router.py` semantics, so that
// both servers' archives hold the same files): gitignore-like globs where a trailing `/` means a
// directory only, a pattern with a `/` is anchored at the archive root (and takes what is under
// it), and a bare name matches any one component at any depth. Credential-bearing git internals
// are never archived, whatever the excludes.
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';

export const DEFAULT_ARCHIVE_EXCLUDES = ['.git/', 'node_modules/', '.venv/', 'venv/', '__pycache__/', '.mypy_cache/', '.pytest_cache/', '.ruff_cache/', 'dist/', 'build/', '.next/', 'target/', '*.pyc'];

/** fnmatch: `*` any run, `?` one character, `[...]` a class (`[!...]` negated); case-sensitive. */
export function globRegExp(pattern: string): RegExp {
  let re = '';
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i]!;
    if (c === '*') re += '.*';
    else if (c === '?') re += '.';
    else if (c === '[') {
      const end = pattern.indexOf(']', i + 2);
      if (end < 0) re += '\\[';
      else {
        let body = pattern.slice(i + 1, end);
        const negate = body.startsWith('!');
        if (negate) body = body.slice(1);
        re += `[${negate ? '^' : ''}${body.replace(/[\\\]^]/g, '\\$&')}]`;
        i = end;
      }
    } else re += c.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
  }
  return new RegExp(`^${re}$`, 's');
}

export function compileExcludes(patterns: readonly string[]): (parts: readonly string[], isDir: boolean) => boolean {
  const compiled = patterns.map((raw) => {
    const dirOnly = raw.endsWith('/');
    const pattern = raw.replace(/\/+$/, '');
    return { dirOnly, multi: pattern.includes('/'), parts: pattern.split('/').map(globRegExp), whole: globRegExp(pattern), empty: pattern === '' };
  });
  return (parts, isDir) => {
    for (const p of compiled) {
      if (p.empty) continue;
      if (p.multi) {
        if (parts.length >= p.parts.length && p.parts.every((re, i) => re.test(parts[i]!))) {
          if (p.dirOnly && !isDir && parts.length === p.parts.length) continue;
          return true;
        }
      } else {
        const candidates = isDir || !p.dirOnly ? parts : parts.slice(0, -1);
        if (candidates.some((part) => p.whole.test(part))) return true;
      }
    }
    return false;
  };
}

const SENSITIVE_GIT = new Set(['config', 'config.worktree', 'credentials', '.git-credentials', 'FETCH_HEAD']);

/** A file in a `.git` directory that may hold a credential (a tokenized remote URL, saved credentials, reflogs). */
export function isSensitiveGitInternal(parts: readonly string[]): boolean {
  const at = parts.indexOf('.git');
  if (at < 0) return false;
  const internal = parts.slice(at + 1);
  if (internal.length === 0) return false;
  return internal.includes('logs') || SENSITIVE_GIT.has(internal[internal.length - 1]!);
}

const DESCENT_SKIP = new Set(['node_modules', 'venv', 'site-packages', 'vendor']);

/**
 * What to archive for `target`: itself when it is a git work tree, else the one git work tree below
 * it (up to three levels, skipping hidden and vendored directories and links), else itself (zero or
 * several: no guess). A repository-backed conversation clones into a subdirectory of its workspace.
 */
export async function archiveRoot(target: string, maxDepth = 3): Promise<string> {
  const hasGit = async (dir: string) => (await readdir(dir).catch(() => [] as string[])).includes('.git');
  if (await hasGit(target)) return target;
  const found: string[] = [];
  const frontier: [string, number][] = [[target, 0]];
  while (frontier.length) {
    const [dir, depth] = frontier.pop()!;
    if (depth >= maxDepth) continue;
    const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
    for (const e of entries.sort((a, b) => (a.name < b.name ? -1 : 1))) {
      if (e.name.startsWith('.') || DESCENT_SKIP.has(e.name) || !e.isDirectory()) continue;
      const child = join(dir, e.name);
      if (await hasGit(child)) {
        found.push(child);
        if (found.length > 1) return target;
      } else frontier.push([child, depth + 1]);
    }
  }
  return found.length === 1 ? found[0]! : target;
}
