// GET /api/file/archive?path=&format=git-delta|tar.gz&base_ref=&use_default_excludes=&exclude=
// (OpenHands 1.58): a workspace directory as a patch of its git changes or as a tarball, built in
// a temporary file beside the directory (the same volume, never inside it) and removed once sent.
// Repository identity goes in X-Archive-* headers, percent-encoded; a patch names its base commit.
import { createReadStream } from 'node:fs';
import { access, constants, mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import Router from '@koa/router';
import { ArchiveQuery } from '../../api/agent-server/runtime.ts';
import { BadRequest, NotFound } from '../../api/errors.ts';
import { archiveRoot, DEFAULT_ARCHIVE_EXCLUDES } from '../archive/excludes.ts';
import { repositoryMetadata, writeGitDelta } from '../archive/git-delta.ts';
import { writeTarGz } from '../archive/tar.ts';
import { realResolve, requireAbsolute } from '../http/paths.ts';
import { validate } from '../http/validate.ts';

const SUFFIX = { 'git-delta': '.patch', 'tar.gz': '.tar.gz' } as const;
const MEDIA = { 'git-delta': 'text/x-patch', 'tar.gz': 'application/gzip' } as const;

/** A directory for the temporary archive: beside `target` when writable there, else the system's. */
async function scratch(target: string): Promise<string> {
  const parent = dirname(target);
  const where = parent !== target && (await access(parent, constants.W_OK).then(() => true, () => false)) ? parent : tmpdir();
  return mkdtemp(join(where, '.archive-'));
}

export function archiveRoutes(): Router {
  const r = new Router();
  r.get('/file/archive', validate({ query: ArchiveQuery }), async (ctx) => {
    const q = ctx.state['query'] as ArchiveQuery;
    requireAbsolute(q.path, 'Path');
    const info = await stat(q.path).catch(() => undefined);
    if (!info) throw new NotFound('Directory not found');
    if (!info.isDirectory()) throw new BadRequest('Path is not a directory');
    if (q.base_ref?.startsWith('-')) throw new BadRequest("base_ref must not start with '-'");
    const format = q.format ?? 'git-delta';
    const excludes = [...(q.use_default_excludes === false ? [] : DEFAULT_ARCHIVE_EXCLUDES), ...(q.exclude ?? [])];
    const root = await archiveRoot(await realResolve(q.path));
    const dir = await scratch(root);
    const file = join(dir, `archive${SUFFIX[format]}`);
    let baseCommit = '';
    try {
      if (format === 'git-delta') baseCommit = await writeGitDelta(root, file, q.base_ref, excludes);
      else await writeTarGz(root, file, excludes);
    } catch (err) {
      await rm(dir, { recursive: true, force: true });
      throw err;
    }
    const enc = encodeURIComponent;
    if (await stat(join(root, '.git')).then(() => true, () => false)) {
      const meta = await repositoryMetadata(root);
      if (meta.remote) ctx.set('X-Archive-Repo-Remote', enc(meta.remote));
      if (meta.branch) ctx.set('X-Archive-Branch', enc(meta.branch));
      if (meta.head) ctx.set('X-Archive-Head-Commit', enc(meta.head));
      ctx.set('X-Archive-Repo-Root', enc(root));
    }
    if (baseCommit) {
      ctx.set('X-Archive-Base-Commit', baseCommit);
      ctx.set('X-Archive-Base-Ref', q.base_ref ?? 'auto');
    }
    const size = (await stat(file)).size;
    const body = createReadStream(file);
    body.once('close', () => void rm(dir, { recursive: true, force: true }));
    ctx.attachment(`${basename(root)}${SUFFIX[format]}`);
    ctx.type = MEDIA[format];
    ctx.length = size;
    ctx.body = body;
  });
  return r;
}
