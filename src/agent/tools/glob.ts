// `glob`: files by name pattern (OpenHands tools/glob), newest first, at most 100.
// Node's own fs.glob does the matching (braces, `**`); dotfiles need a pattern that names them.
import { glob } from 'node:fs/promises';
import { basename, join } from 'node:path';
import type { GlobAction, GlobObservation } from '../../api/events/index.ts';
import { newestFirst, SearchPathError, searchDir, SKIPPED_DIRS, TRUNCATION_NOTE } from './search-common.ts';
import { optional, requireString, textContent, type AgentTool } from './tool.ts';

/** A guard against patterns like `**` over a huge tree: matching stops after this many files. */
const MAX_SCANNED = 200_000;

function description(workspaceDir: string): string {
  return `Fast file pattern matching tool.
* Supports glob patterns like "**/*.js" or "src/**/*.ts"
* Use it to find files by name
* Returns the matching file paths, most recently modified first
* Only the first 100 results are returned; narrow the pattern or give a path for more.

Examples: all JavaScript files "**/*.js"; TypeScript files under src "src/**/*.ts"; Python tests "**/test_*.py"; configuration "**/*.{json,yaml,yml,toml}".

Your current working directory is: ${workspaceDir}
Patterns are relative to this directory unless path is given.`;
}

/** `/abs/dir/**\/*.ts` becomes dir `/abs/dir` and pattern `**\/*.ts`: the leading segments without glob characters. */
export function splitAbsolutePattern(pattern: string): { dir: string; pattern: string } | undefined {
  if (!pattern.startsWith('/')) return undefined;
  const parts = pattern.split('/');
  let i = 1;
  while (i < parts.length - 1 && !/[*?[\]{}]/.test(parts[i]!)) i++;
  return { dir: parts.slice(0, i).join('/') || '/', pattern: parts.slice(i).join('/') };
}

export function globTool(workspaceDir: string): AgentTool<GlobAction> {
  return {
    name: 'glob',
    definitionKind: 'GlobTool',
    actionKind: 'GlobAction',
    observationKind: 'GlobObservation',
    description: description(workspaceDir),
    parameters: {
      type: 'object',
      properties: {
        pattern: { type: 'string', description: 'The glob pattern to match files (e.g., "**/*.js", "src/**/*.ts")' },
        path: { type: 'string', description: 'The directory (absolute path) to search in. Defaults to the current working directory.' },
      },
      required: ['pattern'],
    },
    toAction: (args) => ({ kind: 'GlobAction', pattern: requireString(args, 'pattern'), path: optional<string>(args, 'path', 'string') ?? null }),
    readOnly: true,
    async execute(action, ctx): Promise<GlobObservation> {
      const split = action.path ? undefined : splitAbsolutePattern(action.pattern);
      let dir: string;
      try {
        dir = await searchDir(split?.dir ?? action.path, ctx.workspaceDir);
      } catch (err) {
        if (!(err instanceof SearchPathError)) throw err;
        return { kind: 'GlobObservation', content: textContent(err.message), is_error: true, files: [], pattern: action.pattern, search_path: action.path ?? ctx.workspaceDir, truncated: false };
      }
      const found: string[] = [];
      for await (const entry of glob(split?.pattern ?? action.pattern, { cwd: dir, withFileTypes: true, exclude: (d) => SKIPPED_DIRS.has(typeof d === 'string' ? basename(d) : d.name) })) {
        if (ctx.signal?.aborted || found.length >= MAX_SCANNED) break;
        if (entry.isFile()) found.push(join(entry.parentPath, entry.name));
      }
      const { files, truncated } = await newestFirst(found);
      const text = files.length
        ? `Found ${files.length} file(s) matching pattern '${action.pattern}' in '${dir}':\n${files.join('\n')}${truncated ? TRUNCATION_NOTE : ''}`
        : `No files found matching pattern '${action.pattern}' in directory '${dir}'`;
      return { kind: 'GlobObservation', content: textContent(ctx.mask(text)), is_error: false, files, pattern: action.pattern, search_path: dir, truncated };
    },
  };
}
