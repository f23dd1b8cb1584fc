// The workspace picker helpers and directory creation over HTTP, on a real directory tree.
import { mkdirSync, symlinkSync, writeFileSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { useTestServer } from '../test-support.ts';

const t = useTestServer();
let root: string;
beforeEach(() => {
  root = join(t.dir.path, 'tree');
  for (const d of ['beta', 'alpha', 'gamma', 'delta', '.hidden']) mkdirSync(join(root, d), { recursive: true });
  writeFileSync(join(root, 'file.txt'), 'not a directory');
  symlinkSync(join(root, 'alpha'), join(root, 'linked'));
});

const q = encodeURIComponent;
const names = (body: { items: { name: string }[] }) => body.items.map((i) => i.name);

describe('GET /api/file/search_subdirs', () => {
  it('lists subdirectories by name (links to directories too, files never, hidden ones on request)', async () => {
    const r = await t.s.api(`/api/file/search_subdirs?path=${q(root)}`);
    expect(r.status).toBe(200);
    expect(r.body).toEqual({
      items: ['alpha', 'beta', 'delta', 'gamma', 'linked'].map((name) => ({ name, path: join(root, name) })),
      next_page_id: null,
    });
    expect(names((await t.s.api(`/api/file/search_subdirs?path=${q(root)}&include_hidden=true`)).body)).toEqual(['.hidden', 'alpha', 'beta', 'delta', 'gamma', 'linked']);
  });

  it('pages with next_page_id, a cursor that survives a directory removed before it', async () => {
    const first = (await t.s.api(`/api/file/search_subdirs?path=${q(root)}&limit=2`)).body;
    expect(names(first)).toEqual(['alpha', 'beta']);
    expect(first.next_page_id).toBe('delta');
    const second = (await t.s.api(`/api/file/search_subdirs?path=${q(root)}&limit=2&page_id=${first.next_page_id}`)).body;
    expect(names(second)).toEqual(['delta', 'gamma']);
    const last = (await t.s.api(`/api/file/search_subdirs?path=${q(root)}&limit=2&page_id=${second.next_page_id}`)).body;
    expect(last).toEqual({ items: [{ name: 'linked', path: join(root, 'linked') }], next_page_id: null });
  });

  it('answers 400 for a relative path or a file, 404 for a missing directory, 422 for a bad limit', async () => {
    expect((await t.s.api('/api/file/search_subdirs?path=relative')).status).toBe(400);
    expect((await t.s.api(`/api/file/search_subdirs?path=${q(join(root, 'file.txt'))}`)).status).toBe(400);
    expect((await t.s.api(`/api/file/search_subdirs?path=${q(join(root, 'missing'))}`)).status).toBe(404);
    const bad = await t.s.api(`/api/file/search_subdirs?path=${q(root)}&limit=0`);
    expect(bad.status).toBe(422);
    expect(bad.body.detail[0].loc).toEqual(['query', 'limit']);
  });
});

describe('GET /api/file/home', () => {
  it('names the home directory, its top-level directories as favorites, the workspace among the locations', async () => {
    const r = await t.s.api('/api/file/home');
    expect(r.status).toBe(200);
    expect(r.body.home).toBe(homedir());
    for (const f of r.body.favorites) {
      expect(f.path).toBe(join(homedir(), f.label));
      expect(f.label.startsWith('.')).toBe(false);
      expect(statSync(f.path).isDirectory()).toBe(true);
    }
    expect(r.body.locations).toContainEqual({ label: 'Workspace', path: join(t.dir.path, 'workspace') });
    const hidden = (await t.s.api('/api/file/home?include_hidden=true')).body.favorites.map((f: { label: string }) => f.label);
    expect(hidden.length).toBeGreaterThanOrEqual(r.body.favorites.length);
  });
});

describe('POST /api/file/create_directory', () => {
  it('creates a directory with its parents, idempotently; 400 when a file is in the way', async () => {
    const target = join(root, 'new', 'deep', 'dir');
    expect(await t.s.api(`/api/file/create_directory?path=${q(target)}`, { method: 'POST' })).toEqual({ status: 200, body: { success: true } });
    expect(statSync(target).isDirectory()).toBe(true);
    expect((await t.s.api(`/api/file/create_directory?path=${q(target)}`, { method: 'POST' })).status).toBe(200);
    expect((await t.s.api(`/api/file/create_directory?path=${q(join(root, 'file.txt'))}`, { method: 'POST' })).status).toBe(400);
    expect((await t.s.api(`/api/file/create_directory?path=${q(join(root, 'file.txt', 'below'))}`, { method: 'POST' })).status).toBe(400);
    expect((await t.s.api('/api/file/create_directory?path=relative', { method: 'POST' })).status).toBe(400);
  });
});
