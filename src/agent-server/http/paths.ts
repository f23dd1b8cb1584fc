// The two path rules of the agent server API: OpenHands' file and git routes take absolute paths
// only (400 otherwise), while project and listing directories may be relative, and are then taken
// inside the server's workspace, as conversations' working directories are.
import { isAbsolute, resolve } from 'node:path';
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
