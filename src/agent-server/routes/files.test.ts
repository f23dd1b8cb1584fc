// GET /api/agentyard/files against a real directory tree.
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { useTestServer } from '../test-support.ts';

describe('GET /api/agentyard/files', () => {
  const t = useTestServer();
  let ws: string;
  beforeEach(() => {
    ws = join(t.dir.path, 'workspace');
    for (const d of ['project/src/lib', 'project/node_modules/left-pad', 'project/.git/objects', 'project/target', 'other']) mkdirSync(join(ws, d), { recursive: true });
    writeFileSync(join(ws, 'project/README.md'), '#');
    writeFileSync(join(ws, 'project/src/main.ts'), '');
    writeFileSync(join(ws, 'project/src/lib/util.ts'), '');
    writeFileSync(join(ws, 'project/node_modules/left-pad/index.js'), '');
    writeFileSync(join(ws, 'project/.git/objects/ab'), '');
    writeFileSync(join(ws, 'project/target/out.bin'), '');
    writeFileSync(join(ws, 'project/.env.example'), '');
    writeFileSync(join(ws, 'other/x.txt'), '');
    symlinkSync(join(ws, 'other'), join(ws, 'project/link-to-other'));
  });

  it('lists the files under a directory, relative and sorted, pruning dependency and build directories', async () => {
    const r = await t.s.api(`/api/agentyard/files?path=${encodeURIComponent(join(ws, 'project'))}`);
    expect(r.status).toBe(200);
    expect(r.body).toEqual(['.env.example', 'README.md', 'link-to-other', 'src/lib/util.ts', 'src/main.ts']);
    // A relative path is taken inside the workspace; no path lists the workspace.
    expect((await t.s.api('/api/agentyard/files?path=project/src')).body).toEqual(['lib/util.ts', 'main.ts']);
    expect((await t.s.api('/api/agentyard/files')).body).toContain('other/x.txt');
  });

  it('stops at the limit, shallow files first', async () => {
    expect((await t.s.api(`/api/agentyard/files?limit=2&path=${encodeURIComponent(join(ws, 'project'))}`)).body).toEqual(['.env.example', 'README.md']);
  });

  it('answers 404 for a missing directory and 422 for a file or a bad limit', async () => {
    expect((await t.s.api(`/api/agentyard/files?path=${encodeURIComponent(join(ws, 'nope'))}`)).status).toBe(404);
    const file = await t.s.api(`/api/agentyard/files?path=${encodeURIComponent(join(ws, 'project/README.md'))}`);
    expect(file.status).toBe(422);
    expect(file.body.detail[0].loc).toEqual(['query', 'path']);
    const limit = await t.s.api('/api/agentyard/files?limit=0');
    expect(limit.status).toBe(422);
    expect(limit.body.detail[0].loc).toEqual(['query', 'limit']);
  });
});
