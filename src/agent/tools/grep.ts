// `grep`: files whose content matches a regular expression (OpenHands tools/grep, its Python
// fallback: case-insensitive, hidden files and directories skipped), newest first, at most 100.
import { open, readdir } from 'node:fs/promises';
import { join, matchesGlob } from 'node:path';
import type { GrepAction, GrepObservation } from '../../api/events/index.ts';
import { newestFirst, SearchPathError, searchDir, SKIPPED_DIRS, TRUNCATION_NOTE } from './search-common.ts';
import { optional, requireString, textContent, type AgentTool } from './tool.ts';

/** Larger files are not searched (logs, data, build output). */
const MAX_FILE_BYTES = 5 * 1024 * 1024;

function description(workspaceDir: string): string {
  return `Fast content search tool.
* Searches file contents with regular expressions (full regex syntax, e.g. "log.*Error", "function\\s+\\w+"), ignoring case
* Filter files with the include parameter (e.g. "*.js", "*.{ts,tsx}")
* Returns the paths of matching files, most recently modified first (at most 100)
* Use it to find files containing a pattern; read them with file_editor. For counting matches or lines, use the terminal (grep -c, wc).

Your current working directory is: ${workspaceDir}
Searches run in this directory unless path is given.`;
}

/** Python's named groups, which the model may write, in JavaScript spelling. */
function toJsRegex(pattern: string): RegExp {
  return new RegExp(pattern.replace(/\(\?P<(\w+)>/g, '(?<$1>').replace(/\(\?P=(\w+)\)/g, '\\k<$1>'), 'im');
}

async function* files(dir: string, include: string | null, signal?: AbortSignal): AsyncGenerator<string> {
  let entries;
  try {
    entries = await readdir(dir, { withFileTypes: true });
  } catch {
    return;
  }
  for (const e of entries.sort((a, b) => a.name.localeCompare(b.name))) {
    if (signal?.aborted) return;
    const path = join(dir, e.name);
    if (e.isDirectory()) {
      if (!e.name.startsWith('.') && !SKIPPED_DIRS.has(e.name)) yield* files(path, include, signal);
    } else if (e.isFile()) {
      if (include ? matchesGlob(e.name, include) : !e.name.startsWith('.')) yield path;
    }
  }
}

async function fileMatches(path: string, re: RegExp): Promise<boolean> {
  const fh = await open(path, 'r').catch(() => undefined);
  if (!fh) return false;
  try {
    const { size } = await fh.stat();
    if (size > MAX_FILE_BYTES) return false;
    const buf = await fh.readFile();
    // Binary files (a NUL early on) are not text to search.
    if (buf.subarray(0, 8192).includes(0)) return false;
    return re.test(buf.toString('utf8'));
  } finally {
    await fh.close();
  }
}

export function grepTool(workspaceDir: string): AgentTool<GrepAction> {
  return {
    name: 'grep',
    definitionKind: 'GrepTool',
    actionKind: 'GrepAction',
    observationKind: 'GrepObservation',
    description: description(workspaceDir),
    parameters: {
      type: 'object',
      properties: {
        pattern: { type: 'string', description: 'The regex pattern to search for in file contents' },
        path: { type: 'string', description: 'The directory (absolute path) to search in. Defaults to the current working directory.' },
        include: { type: 'string', description: 'Optional file pattern to filter which files to search (e.g., "*.js", "*.{ts,tsx}")' },
      },
      required: ['pattern'],
    },
    toAction: (args) => ({
      kind: 'GrepAction',
      pattern: requireString(args, 'pattern'),
      path: optional<string>(args, 'path', 'string') ?? null,
      include: optional<string>(args, 'include', 'string') ?? null,
    }),
    readOnly: true,
    async execute(action, ctx): Promise<GrepObservation> {
      const fail = (text: string): GrepObservation => ({ kind: 'GrepObservation', content: textContent(text), is_error: true, matches: [], pattern: action.pattern, search_path: action.path ?? ctx.workspaceDir, include_pattern: action.include ?? null, truncated: false });
      let dir: string;
      let re: RegExp;
      try {
        dir = await searchDir(action.path, ctx.workspaceDir);
      } catch (err) {
        if (!(err instanceof SearchPathError)) throw err;
        return fail(err.message);
      }
      try {
        re = toJsRegex(action.pattern);
      } catch (err) {
        return fail(`Invalid regex pattern: ${(err as Error).message}`);
      }
      const hits: string[] = [];
      for await (const path of files(dir, action.include ?? null, ctx.signal)) if (await fileMatches(path, re)) hits.push(path);
      const { files: matches, truncated } = await newestFirst(hits);
      const filter = action.include ? ` (filtered by '${action.include}')` : '';
      const text = matches.length
        ? `Found ${matches.length} file(s) containing pattern '${action.pattern}' in '${dir}'${filter}:\n${matches.join('\n')}${truncated ? TRUNCATION_NOTE : ''}`
        : `No files found containing pattern '${action.pattern}' in directory '${dir}'${filter}`;
      return { kind: 'GrepObservation', content: textContent(ctx.mask(text)), is_error: false, matches, pattern: action.pattern, search_path: dir, include_pattern: action.include ?? null, truncated };
    },
  };
}
