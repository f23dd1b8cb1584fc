// The file and git parts of the agent server API (OpenHands query-parameter forms):
// GET /api/file/download?path=<abs>, GET /api/git/changes?path=<repo>&ref=, GET /api/git/diff?path=<file>&ref= (or &commit=),
// and the path-style forms older clients still call (/api/file/download/<abs>, /api/git/changes/<abs>, /api/git/diff/<abs>).
import { existsSync, readFileSync, statSync } from 'node:fs';
import { dirname, relative } from 'node:path';
import Router from '@koa/router';
import type { Context } from 'koa';
import { BadRequest, NotFound } from '../../api/errors.ts';
import { gitOut, repoRoot } from '../git/exec.ts';
import { commitFileDiff } from '../git/history.ts';
import { GitDiffQuery, PathQuery } from '../http/queries.ts';
import { requireAbsolute } from '../http/paths.ts';
import { parseQuery } from '../http/validate.ts';

/** The absolute path (422 when missing, 400 when relative, as OpenHands) and `ref` of a request. */
export function pathOf(ctx: Context, legacy: boolean): { path: string; ref: string | undefined } {
  let path: string;
  if (legacy) {
    // A URL path is rooted either way: /api/file/download//workspace/a.txt and /api/file/download/workspace/a.txt.
    const raw = ctx.params['path'] ?? '';
    path = raw.startsWith('/') ? raw : `/${raw}`;
  } else {
    path = parseQuery(PathQuery, ctx.query).path;
  }
  requireAbsolute(path);
  const ref = typeof ctx.query['ref'] === 'string' && ctx.query['ref'] !== '' ? ctx.query['ref'] : undefined;
  return { path, ref };
}

const STATUS: Record<string, 'ADDED' | 'UPDATED' | 'DELETED' | 'MOVED'> = { A: 'ADDED', '?': 'ADDED', M: 'UPDATED', T: 'UPDATED', D: 'DELETED', R: 'MOVED', C: 'ADDED' };

/** Changes of the working tree against HEAD (or `ref`), untracked files included. */
export async function gitChanges(path: string, ref?: string): Promise<{ status: string; path: string }[]> {
  if (!existsSync(path)) throw new NotFound(`${path} does not exist`);
  const root = await repoRoot(path);
  if (!root) return [];
  const changes = new Map<string, string>();
  const hasHead = await gitOut(root, ['rev-parse', '--verify', '--quiet', ref ?? 'HEAD']).then(() => true, () => false);
  if (hasHead) {
    const diff = (await gitOut(root, ['diff', '--name-status', '-z', '-M', ref ?? 'HEAD'])).split('\0').filter(Boolean);
    for (let i = 0; i < diff.length; ) {
      const code = diff[i]![0]!;
      const file = code === 'R' || code === 'C' ? diff[i + 2]! : diff[i + 1]!;
      changes.set(file, STATUS[code] ?? 'UPDATED');
      i += code === 'R' || code === 'C' ? 3 : 2;
    }
  } else {
    for (const file of (await gitOut(root, ['ls-files', '-z'])).split('\0').filter(Boolean)) changes.set(file, 'ADDED');
  }
  for (const file of (await gitOut(root, ['ls-files', '--others', '--exclude-standard', '-z'])).split('\0').filter(Boolean)) changes.set(file, 'ADDED');
  return [...changes].map(([file, status]) => ({ status, path: file })).sort((a, b) => a.path.localeCompare(b.path));
}

/** Whole file before (at HEAD or `ref`) and now, as OpenHands returns it. */
export async function gitDiff(path: string, ref?: string): Promise<{ modified: string | null; original: string | null }> {
  const modified = existsSync(path) && statSync(path).isFile() ? readFileSync(path, 'utf8') : null;
  const root = await repoRoot(dirname(path));
  if (!root) {
    if (modified === null) throw new NotFound(`${path} does not exist`);
    return { modified, original: null };
  }
  const rel = relative(root, path);
  const original = await gitOut(root, ['show', `${ref ?? 'HEAD'}:${rel}`]).then((t) => t, () => null);
  if (modified === null && original === null) throw new NotFound(`${path} does not exist`);
  return { modified, original };
}

/** `legacy: false`: the query forms only (a conversation's runtime routes, as in OpenHands 1.58). */
export function workspaceRoutes({ legacy: withLegacy = true } = {}): Router {
  const r = new Router();
  for (const legacy of withLegacy ? [false, true] : [false]) {
    const suffix = legacy ? '/*path' : '';
    r.get(`/file/download${suffix}`, (ctx) => {
      const { path } = pathOf(ctx, legacy);
      if (!existsSync(path) || !statSync(path).isFile()) throw new NotFound(`${path} is not a file`);
      ctx.type = 'application/octet-stream';
      ctx.attachment(path.split('/').pop());
      ctx.body = readFileSync(path);
    });
    r.get(`/git/changes${suffix}`, async (ctx) => {
      const { path, ref } = pathOf(ctx, legacy);
      ctx.body = await gitChanges(path, ref);
    });
    r.get(`/git/diff${suffix}`, async (ctx) => {
      const { path, ref } = pathOf(ctx, legacy);
      // ?commit=: the change that one commit made to the file (OpenHands), exclusive with ref.
      const { commit } = parseQuery(GitDiffQuery, ctx.query);
      if (commit !== undefined && ref !== undefined) throw new BadRequest("'ref' and 'commit' are mutually exclusive");
      ctx.body = commit === undefined ? await gitDiff(path, ref) : await commitFileDiff(path, commit);
    });
  }
  return r;
}
