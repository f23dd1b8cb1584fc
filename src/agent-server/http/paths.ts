// The two path rules of the agent server API: OpenHands' file and git routes take absolute paths
// only (400 otherwise), while project and listing directories may be relative, and are then taken
// inside the server's workspace, as conversations' working directories are.
import { realpath } from 'node:fs/promises';
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { BadRequest } from '../../api/errors.ts';

/** `path` itself, or 400 naming `what` when it is relative. */
export function requireAbsolute(path: string, what = 'path'): string {
  if (!isAbsolute(path)) throw new BadRequest(`${what} must be absolute, got '${path}'`);
  return path;
}

/** `path` itself when absolute, else resolved inside `workspaceDir`. */
export function inWorkspace(workspaceDir: string, path: string): string {
  return isAbsolute(path) ? path : resolve(workspaceDir, path);
}

/**
 * `path` made absolute and free of symbolic links, as Python's `Path.resolve()`: the part that
 * exists is resolved by the file system (every link followed), the part that does not yet exist
 * (an upload's target, a directory to create) is appended as written, `..` normalised first.
 */
export async function realResolve(path: string): Promise<string> {
  let head = resolve(path);
  const rest: string[] = [];
  for (;;) {
    try {
      return join(await realpath(head), ...rest.reverse());
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code !== 'ENOENT' && code !== 'ENOTDIR') throw err;
      const parent = dirname(head);
      if (parent === head) return join(head, ...rest.reverse());
      rest.push(basename(head));
      head = parent;
    }
  }
}

/**
 * Whether `path`, links followed, is `root` or inside it (`root` links followed too). A path that
 * cannot be resolved (a link loop, a NUL byte, a directory it may not read) is not inside.
 */
export async function isInside(root: string, path: string): Promise<boolean> {
  if (path.includes('\0')) return false;
  const resolved = await Promise.all([realResolve(root), realResolve(path)]).catch(() => undefined);
  if (!resolved) return false;
  const [r, p] = resolved;
  const rel = relative(r, p);
  return rel === '' || (rel !== '..' && !rel.startsWith(`..${sep}`) && !isAbsolute(rel));
}
