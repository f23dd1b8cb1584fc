// POST /api/plugins over HTTP (the agent server): user and project plugin directories, project overriding user by name.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { startTestServer, tempDir, type TestServer } from '../test-support.ts';

let dir: ReturnType<typeof tempDir>;
let s: TestServer;
const savedHome = process.env.HOME;

function write(path: string, text: string): void {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, text);
}

beforeEach(async () => {
  dir = tempDir('plugins-route-');
  // User plugins live under the home directory.
  process.env.HOME = join(dir.path, 'home');
  s = await startTestServer(dir.path);
});
afterEach(async () => {
  process.env.HOME = savedHome;
  await s.close();
  dir.remove();
});

const post = (path: string, body: unknown) => s.api(`/api${path}`, { method: 'POST', body });

describe('POST /api/plugins', () => {
  it('lists user and project plugins with skills, files and agents', async () => {
    const home = join(dir.path, 'home');
    write(join(home, '.agents', 'plugins', 'a', '.claude-plugin', 'plugin.json'), JSON.stringify({ name: 'shared', version: '0.1.0', description: 'user copy' }));
    write(join(home, '.openhands', 'plugins', 'b', '.plugin', 'plugin.json'), JSON.stringify({ name: 'only-user' }));
    const proj = join(dir.path, 'workspace', 'proj');
    write(join(proj, '.agents', 'plugins', 'shared', '.plugin', 'plugin.json'), JSON.stringify({ name: 'shared', version: '2.0.0', description: 'project copy' }));
    write(join(proj, '.agents', 'plugins', 'shared', 'commands', 'fix.md'), '---\ndescription: Fix it\n---\nFix $ARGUMENTS\n');
    write(join(proj, '.agents', 'plugins', 'shared', 'agents', 'rev.md'), '---\nname: rev\ndescription: Reviews\n---\nReview.\n');
    write(join(proj, '.agents', 'plugins', 'broken', '.plugin', 'plugin.json'), '{not json');

    const all = await post('/plugins', { project_dir: 'proj' });
    expect(all.status).toBe(200);
    const names = all.body.plugins.map((p: any) => p.name).sort();
    expect(names).toEqual(['only-user', 'shared']);
    const shared = all.body.plugins.find((p: any) => p.name === 'shared');
    expect(shared).toMatchObject({ version: '2.0.0', description: 'project copy', path: join(proj, '.agents', 'plugins', 'shared'), skills: [{ name: 'shared:fix', description: 'Fix it' }], agents: [{ name: 'rev', description: 'Reviews', runnable: true }] });
    expect(shared.files).toEqual(['.plugin/plugin.json', 'agents/rev.md', 'commands/fix.md']);

    expect((await post('/plugins', { load_user: false, project_dir: proj })).body.plugins.map((p: any) => p.name)).toEqual(['shared']);
    expect((await post('/plugins', { load_project: false, project_dir: proj })).body.plugins.find((p: any) => p.name === 'shared').description).toBe('user copy');
    expect((await post('/plugins', { extra: 1 })).status).toBe(422);
  });
});
