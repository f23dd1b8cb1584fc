// GET /api/conversations/{id}/workspace[/{file_path}] (OpenHands 1.58 `workspace_router.py`): the
// conversation's working directory as a static file server, for previews of what the agent built.
// A file comes with the type its extension says; a directory serves its index.html (404 without
// one). Nothing outside the workspace is served: a path that leaves it (`..`, an encoded `..`, a
// link the agent planted) is a 400, and the file is checked again once open, so a link swapped in
// between check and open cannot lead out either.
import { createReadStream } from 'node:fs';
import { open, readlink, stat } from 'node:fs/promises';
import { extname, join, resolve } from 'node:path';
import Router from '@koa/router';
import type { Context } from 'koa';
import { BadRequest, NotFound } from '../../api/errors.ts';
import type { ConversationService } from '../conversation/service.ts';
import { isInside, realResolve } from '../http/paths.ts';
import { withConversationIdParam } from '../http/validate.ts';

async function serve(ctx: Context, service: ConversationService, filePath: string): Promise<void> {
  const rt = service.get(ctx.params['conversation_id']!);
  const root = await realResolve(rt.workspaceDir);
  if (!(await stat(root).then((s) => s.isDirectory(), () => false))) throw new NotFound('Workspace directory does not exist');
  if (!(await isInside(root, resolve(root, `./${filePath}`)))) throw new BadRequest('Path is outside the workspace');
  let target = await realResolve(resolve(root, `./${filePath}`));
  const info = await stat(target).catch(() => undefined);
  if (info?.isDirectory()) {
    target = join(target, 'index.html');
    if (!(await stat(target).then((s) => s.isFile(), () => false))) throw new NotFound('No index.html in directory');
  } else if (!info?.isFile()) throw new NotFound('File not found');
  const fh = await open(target, 'r');
  try {
    // What was opened, links and all: inside the workspace still, and a regular file.
    const opened = await readlink(`/proc/self/fd/${fh.fd}`).catch(() => target);
    if (!(await isInside(root, opened))) throw new BadRequest('Path is outside the workspace');
    const st = await fh.stat();
    if (!st.isFile()) throw new NotFound('File not found');
    // As Starlette's FileResponse: the type the extension says, else text/plain; a charset for text types only.
    ctx.type = extname(target) || 'text/plain';
    if (!ctx.type) ctx.type = 'text/plain';
    if (!ctx.type.startsWith('text/')) ctx.set('Content-Type', ctx.type);
    ctx.length = st.size;
    ctx.lastModified = st.mtime;
    ctx.body = createReadStream('', { fd: fh, autoClose: true });
  } catch (err) {
    await fh.close();
    throw err;
  }
}

export function workspaceFileRoutes(service: ConversationService): Router {
  const r = withConversationIdParam(new Router({ prefix: '/conversations/:conversation_id/workspace' }));
  r.get('/', (ctx) => serve(ctx, service, ''));
  r.get('/*file_path', (ctx) => serve(ctx, service, ctx.params['file_path'] ?? ''));
  return r;
}
