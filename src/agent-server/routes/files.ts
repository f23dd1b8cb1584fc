// GET /api/agentyard/files?path=&limit=: the files under a directory of the workspace, as paths
// relative to it, for the application API's file listing (OpenHands answers the same list by
// running `find` through the bash API; a walk here needs no shell quoting and no bash session).
// Dependency, build and cache directories are pruned; symlinks are listed, never followed.
import { opendir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import Router from '@koa/router';
import { Type, type Static } from 'typebox';
import { Invalid, NotFound } from '../../api/errors.ts';
import { inWorkspace } from '../http/paths.ts';
import { validate } from '../http/validate.ts';

export const FileListQuery = Type.Object({
  path: Type.Optional(Type.String({ minLength: 1, description: 'Directory to list; relative paths are taken inside the workspace. Default: the workspace' })),
  limit: Type.Integer({ minimum: 1, maximum: 10_000, default: 2000 }),
});
export type FileListQuery = Static<typeof FileListQuery>;

/** Directories nobody wants listed file by file; the same set OpenHands prunes. */
export const PRUNED_DIRS = new Set(['.git', 'node_modules', '.venv', 'venv', '__pycache__', 'dist', 'build', '.next', '.cache', '.pytest_cache', '.mypy_cache', '.turbo', '.parcel-cache', 'target']);

/** Relative paths of the files under `root`, breadth first, sorted, at most `limit`. */
export async function listFiles(root: string, limit: number): Promise<string[]> {
  const found: string[] = [];
  const queue = [''];
  while (queue.length && found.length < limit) {
    const rel = queue.shift()!;
    const entries: { name: string; dir: boolean }[] = [];
    for await (const e of await opendir(join(root, rel))) entries.push({ name: e.name, dir: e.isDirectory() });
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const e of entries) {
      const path = rel ? `${rel}/${e.name}` : e.name;
      if (!e.dir) found.push(path);
      else if (!PRUNED_DIRS.has(e.name)) queue.push(path);
    }
  }
  return found.slice(0, limit).sort();
}

export function fileListRoutes(workspaceDir: string): Router {
  const router = new Router({ prefix: '/agentyard/files' });
  router.get('/', validate({ query: FileListQuery }), async (ctx) => {
    const q = ctx.state['query'] as FileListQuery;
    const dir = q.path === undefined ? workspaceDir : inWorkspace(workspaceDir, q.path);
    const info = await stat(dir).catch(() => undefined);
    if (!info) throw new NotFound(`${dir} does not exist`);
    if (!info.isDirectory()) throw new Invalid([{ loc: ['query', 'path'], msg: `${dir} is not a directory`, type: 'value_error' }]);
    ctx.body = await listFiles(dir, q.limit);
  });
  return router;
}
