// What glob and grep share: the directory to search, files to leave out, and newest-first order
// capped at 100 results (OpenHands tools/glob and tools/grep).
import { stat } from 'node:fs/promises';
import { isAbsolute, resolve } from 'node:path';

export const MAX_RESULTS = 100;
/** Directories never searched: version control internals and installed dependencies. */
export const SKIPPED_DIRS = new Set(['.git', 'node_modules']);

export class SearchPathError extends Error {}

/** `path` (absolute, or relative to the workspace), defaulting to the workspace; must be a directory. */
export async function searchDir(path: string | null | undefined, workspaceDir: string): Promise<string> {
  const dir = path ? (isAbsolute(path) ? path : resolve(workspaceDir, path)) : workspaceDir;
  const s = await stat(dir).catch(() => undefined);
  if (!s?.isDirectory()) throw new SearchPathError(`Search path '${path ?? dir}' is not a valid directory`);
  return dir;
}

/** Newest first; the first MAX_RESULTS and whether there were more. */
export async function newestFirst(paths: readonly string[]): Promise<{ files: string[]; truncated: boolean }> {
  const dated = await Promise.all(paths.map(async (p) => ({ p, t: (await stat(p).catch(() => undefined))?.mtimeMs ?? -Infinity })));
  dated.sort((a, b) => b.t - a.t || a.p.localeCompare(b.p));
  return { files: dated.slice(0, MAX_RESULTS).map((d) => d.p), truncated: dated.length > MAX_RESULTS };
}

export const TRUNCATION_NOTE = '\n\n[Results truncated to first 100 files. Consider using a more specific pattern.]';
