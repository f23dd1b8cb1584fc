// `POST /api/file/upload?path=<abs>` (and the older path-style `POST /api/file/upload/{path}`):
// a multipart body whose field `file` is streamed to disk (never held whole in memory), into a
// temporary file beside the target that replaces it only once complete. Parent dirs are created.
import { randomBytes } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdir, rename, rm } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import Router from '@koa/router';
import { requireAbsolute } from '../http/paths.ts';
import busboy from 'busboy';
import type { Context } from 'koa';
import { BadRequest, Forbidden, Invalid } from '../../api/errors.ts';

const FIELD = 'file';

function missingFile(): Invalid {
  return new Invalid([{ loc: ['body', FIELD], msg: `Field required: a multipart/form-data body with the file in a field named '${FIELD}'`, type: 'missing' }]);
}

/** File system errors a caller can act on, as 4xx; the rest stay 500s. */
function mapFsError(err: unknown, path: string): unknown {
  const code = (err as NodeJS.ErrnoException).code;
  if (code === 'EACCES' || code === 'EPERM' || code === 'EROFS') return new Forbidden(`Cannot write ${path}: permission denied`);
  if (code === 'ENOTDIR' || code === 'EEXIST') return new BadRequest(`Cannot write ${path}: a parent of it is a file`);
  if (code === 'EISDIR') return new BadRequest(`Cannot write ${path}: it is a directory`);
  return err;
}

/** Streams the request's `file` field to `target`; the number of bytes written. */
async function receive(ctx: Context, target: string): Promise<number> {
  if (!ctx.is('multipart/form-data')) throw missingFile();
  try {
    await mkdir(dirname(target), { recursive: true });
  } catch (err) {
    throw mapFsError(err, target);
  }
  const tmp = join(dirname(target), `.${basename(target)}.upload-${randomBytes(6).toString('hex')}`);
  let writing: Promise<unknown> | undefined;
  let size = 0;
  try {
    await new Promise<void>((resolve, reject) => {
      const bb = busboy({ headers: ctx.req.headers, limits: { files: 1 } });
      bb.on('file', (name, stream) => {
        if (name !== FIELD || writing) {
          stream.resume(); // not ours: drained and dropped
          return;
        }
        stream.on('data', (chunk: Buffer) => (size += chunk.length));
        writing = pipeline(stream, createWriteStream(tmp)).then(
          () => undefined,
          (err: unknown) => err,
        );
      });
      bb.on('error', (err) => reject(new BadRequest(`Malformed multipart body: ${(err as Error).message}`)));
      bb.on('close', resolve);
      ctx.req.on('aborted', () => reject(new BadRequest('The upload was aborted by the client')));
      ctx.req.pipe(bb);
    });
    if (!writing) throw missingFile();
    const failed = await writing;
    if (failed) throw mapFsError(failed, target);
    await rename(tmp, target).catch((err: unknown) => {
      throw mapFsError(err, target);
    });
    return size;
  } catch (err) {
    await writing?.catch(() => undefined);
    await rm(tmp, { force: true });
    throw err;
  }
}

function absolute(path: unknown, what: string): string {
  if (typeof path !== 'string' || path === '') throw new Invalid([{ loc: ['query', 'path'], msg: 'Field required: the absolute path of the file to write', type: 'missing' }]);
  return requireAbsolute(path, what);
}

/** `legacy: false`: the query form only (a conversation's runtime routes, as in OpenHands 1.58). */
export function uploadRoutes({ legacy = true } = {}): Router {
  const r = new Router({ prefix: '/file' });
  r.post('/upload', async (ctx) => {
    // OpenHands 1.58's FileUploadResult: the bytes written too.
    ctx.body = { success: true, file_size: await receive(ctx, absolute(ctx.query['path'], 'path')) };
  });
  // Older clients put the path in the URL: /api/file/upload//workspace/a.txt (or without the
  // doubled slash: a URL path is rooted either way).
  if (legacy) r.post('/upload/*path', async (ctx) => {
    const raw = ctx.params['path'] ?? '';
    ctx.body = { success: true, file_size: await receive(ctx, absolute(raw.startsWith('/') ? raw : `/${raw}`, 'The path')) };
  });
  return r;
}
