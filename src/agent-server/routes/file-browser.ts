// The workspace picker helpers of the OpenHands file API and directory creation:
//   GET  /api/file/home?include_hidden=        {home, favorites, locations}
//   GET  /api/file/search_subdirs?path=&page_id=&limit=&include_hidden=   {items: [{name, path}], next_page_id}
//   POST /api/file/create_directory?path=      idempotent mkdir -p
// Paths must be absolute (400 otherwise, as OpenHands); a missing one is a 422 on ['query','path'].
import { mkdir, readdir, stat } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join } from 'node:path';
import Router from '@koa/router';
import { BadRequest, Forbidden, NotFound } from '../../api/errors.ts';
import { HomeQuery, SubdirsQuery, PathQuery } from '../http/queries.ts';
import { requireAbsolute } from '../http/paths.ts';
import { validate } from '../http/validate.ts';

/** The subdirectories of `dir` (symbolic links to directories included), sorted by name. */
async function subdirectories(dir: string, includeHidden: boolean): Promise<{ name: string; path: string }[]> {
  let entries;
  try {
    entries = await readdir(dir, { withFileTypes: true });
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') throw new NotFound(`${dir} does not exist`);
    if (code === 'ENOTDIR') throw new BadRequest(`${dir} is not a directory`);
    if (code === 'EACCES' || code === 'EPERM') throw new Forbidden(`Cannot read ${dir}: permission denied`);
    throw err;
  }
  const out: { name: string; path: string }[] = [];
  for (const e of entries) {
    if (!includeHidden && e.name.startsWith('.')) continue;
    const path = join(dir, e.name);
    const isDir = e.isDirectory() || (e.isSymbolicLink() && (await stat(path).then((s) => s.isDirectory(), () => false)));
    if (isDir) out.push({ name: e.name, path });
  }
  return out.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

/** `discovery: false`: only create_directory (a conversation's runtime routes have no picker helpers, as in OpenHands). */
export function fileBrowserRoutes(workspaceDir: string, { discovery = true } = {}): Router {
  const r = new Router({ prefix: '/file' });
  if (discovery) addPickerRoutes(r, workspaceDir);
  r.post('/create_directory', validate({ query: PathQuery }), async (ctx) => {
    const path = requireAbsolute((ctx.state['query'] as PathQuery).path);
    try {
      await mkdir(path, { recursive: true });
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'EEXIST' || code === 'ENOTDIR') throw new BadRequest(`Cannot create ${path}: it or a parent of it is a file`);
      if (code === 'EACCES' || code === 'EPERM' || code === 'EROFS') throw new Forbidden(`Cannot create ${path}: permission denied`);
      throw err;
    }
    ctx.body = { success: true };
  });

  return r;
}

function addPickerRoutes(r: Router, workspaceDir: string): void {
  // Where a picker starts: the home directory with its top-level directories as favorites, and
  // the places that matter here (this server's workspace, the file system root) as locations.
  r.get('/home', validate({ query: HomeQuery }), async (ctx) => {
    const { include_hidden } = ctx.state['query'] as HomeQuery;
    const home = homedir();
    const favorites = await subdirectories(home, include_hidden === true).catch(() => []);
    ctx.body = {
      home,
      favorites: favorites.map((d) => ({ label: d.name, path: d.path })),
      locations: [
        { label: 'Workspace', path: workspaceDir },
        { label: 'Home', path: home },
        { label: 'File system', path: '/' },
      ],
    };
  });

  // Paged by name: next_page_id is the name of the first subdirectory of the next page, so a
  // cursor stays valid while directories come and go.
  r.get('/search_subdirs', validate({ query: SubdirsQuery }), async (ctx) => {
    const q = ctx.state['query'] as SubdirsQuery;
    const all = await subdirectories(requireAbsolute(q.path), q.include_hidden === true);
    const from = q.page_id ? all.findIndex((d) => d.name >= q.page_id!) : 0;
    const rest = from < 0 ? [] : all.slice(from);
    const limit = q.limit ?? 100;
    ctx.body = { items: rest.slice(0, limit), next_page_id: rest.length > limit ? rest[limit]!.name : null };
  });
}
