// Installed skills and plugins over HTTP (the agent server): from a local directory, from real git
// repositories made here (file:// URLs, refs, repo_path), refresh, enable/disable, uninstall; what
// an installed skill or plugin changes (POST /api/skills, POST /api/plugins); and untrusted
// sources (links out of the package, repo_path with '..', bad names, git hooks).
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { startTestServer, tempDir, type TestServer } from '../test-support.ts';

let dir: ReturnType<typeof tempDir>;
let s: TestServer;
let home: string;

function write(path: string, text: string): void {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, text);
}

const skillMd = (name: string, description: string, body = `Use ${name}.`) => `---\nname: ${name}\ndescription: ${description}\n---\n${body}\n`;

function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@t', '-c', 'init.defaultBranch=main', ...args], { cwd, encoding: 'utf8' }).trim();
}

/** A git repository at `path` with `files`, committed; returns the commit. */
function repo(path: string, files: Record<string, string>): string {
  mkdirSync(path, { recursive: true });
  if (!existsSync(join(path, '.git'))) git(path, 'init', '--quiet');
  for (const [f, t] of Object.entries(files)) write(join(path, f), t);
  git(path, 'add', '-A');
  git(path, 'commit', '--quiet', '-m', 'c');
  return git(path, 'rev-parse', 'HEAD');
}

beforeEach(async () => {
  dir = tempDir('installs-route-');
  home = join(dir.path, 'home');
  s = await startTestServer(dir.path, { home });
});
afterEach(async () => {
  await s.close();
  dir.remove();
});

const api = (path: string, method = 'GET', body?: unknown) => s.api(`/api${path}`, { method, ...(body !== undefined ? { body } : {}) });

describe('installed skills', () => {
  it('installs from a local directory, loads as a user skill while enabled, uninstalls', async () => {
    const src = join(dir.path, 'src', 'pdf-tools');
    write(join(src, 'SKILL.md'), skillMd('pdf-tools', 'Work with PDFs'));
    write(join(src, 'references', 'notes.md'), 'not a skill of its own');
    const r = await api('/skills/install', 'POST', { source: src });
    expect(r.status).toBe(200);
    const store = join(home, '.openhands', 'skills', 'installed');
    expect(r.body).toMatchObject({ name: 'pdf-tools', version: '1.0.0', description: 'Work with PDFs', enabled: true, source: src, resolved_ref: null, repo_path: null, install_path: join(store, 'pdf-tools') });
    expect(Object.keys(r.body).sort()).toEqual(['description', 'enabled', 'install_path', 'installed_at', 'name', 'repo_path', 'resolved_ref', 'source', 'version']);
    expect(readFileSync(join(store, 'pdf-tools', 'SKILL.md'), 'utf8')).toContain('Use pdf-tools.');
    // OpenHands' metadata format, so a home shared with it reads the same.
    expect(JSON.parse(readFileSync(join(store, '.installed.json'), 'utf8')).extensions['pdf-tools']).toMatchObject({ name: 'pdf-tools', requested_ref: null });

    expect((await api('/skills/install', 'POST', { source: src })).status).toBe(409);
    expect((await api('/skills/install', 'POST', { source: src, force: true })).status).toBe(200);

    const skills = async () => (await api('/skills', 'POST', { load_public: false, load_project: false })).body.skills.map((x: any) => x.name).sort();
    // The store's other .md files are not skills.
    expect(await skills()).toEqual(['pdf-tools']);
    expect((await api('/skills/installed')).body.skills.map((x: any) => [x.name, x.enabled])).toEqual([['pdf-tools', true]]);
    expect(await api('/skills/installed/pdf-tools', 'PATCH', { enabled: false })).toMatchObject({ status: 200, body: { name: 'pdf-tools', enabled: false } });
    expect(await skills()).toEqual([]);
    // A forced reinstall keeps the disabled state.
    expect((await api('/skills/install', 'POST', { source: src, force: true })).body.enabled).toBe(false);
    await api('/skills/installed/pdf-tools', 'PATCH', { enabled: true });
    expect(await skills()).toEqual(['pdf-tools']);
    // A user skill of the same name wins over the installed one.
    write(join(home, '.openhands', 'skills', 'pdf-tools', 'SKILL.md'), skillMd('pdf-tools', 'mine'));
    expect((await api('/skills', 'POST', { load_public: false, load_project: false })).body.skills.map((x: any) => x.description)).toEqual(['mine']);

    expect(await api('/skills/installed/pdf-tools', 'DELETE')).toMatchObject({ status: 200, body: { message: "Skill 'pdf-tools' uninstalled" } });
    expect(existsSync(join(store, 'pdf-tools'))).toBe(false);
    expect(await api('/skills/installed/pdf-tools')).toMatchObject({ status: 404, body: { detail: "Skill 'pdf-tools' is not installed" } });
    expect((await api('/skills/installed/pdf-tools', 'DELETE')).status).toBe(404);
    expect((await api('/skills/installed/pdf-tools', 'PATCH', { enabled: true })).status).toBe(404);
    expect((await api('/skills/installed/pdf-tools/refresh', 'POST')).status).toBe(404);
  });

  it('installs from a git repository at a ref and repo_path, and refreshes to the newest commit', async () => {
    const r = join(dir.path, 'monorepo');
    const first = repo(r, { 'skills/lint/SKILL.md': skillMd('lint', 'v1') });
    git(r, 'tag', 'v1');
    const second = repo(r, { 'skills/lint/SKILL.md': skillMd('lint', 'v2') });
    const url = `file://${r}`;
    const at = await api('/skills/install', 'POST', { source: url, ref: 'v1', repo_path: 'skills/lint' });
    expect(at.status).toBe(200);
    expect(at.body).toMatchObject({ name: 'lint', description: 'v1', source: url, resolved_ref: first, repo_path: 'skills/lint' });
    // .git is not copied in.
    expect(existsSync(join(at.body.install_path, '.git'))).toBe(false);
    const refreshed = await api('/skills/installed/lint/refresh', 'POST');
    expect(refreshed.status).toBe(200);
    expect(refreshed.body).toMatchObject({ message: "Skill 'lint' updated", skill: { name: 'lint', description: 'v2', resolved_ref: second } });

    // A refresh that cannot fetch, or whose source no longer holds the skill, keeps the installed copy.
    repo(r, { 'skills/lint/SKILL.md': skillMd('other-name', 'v3') });
    const invalid = await api('/skills/installed/lint/refresh', 'POST');
    expect(invalid.status).toBe(422);
    expect((await api('/skills/installed/lint')).body.description).toBe('v2');
    execFileSync('mv', [r, `${r}-gone`]);
    const gone = await api('/skills/installed/lint/refresh', 'POST');
    expect(gone.status).toBe(400);
    expect(gone.body.detail).toMatch(/^Failed to fetch the source of skill 'lint'\. The installed copy was kept\./);
    expect((await api('/skills/installed/lint')).body.resolved_ref).toBe(second);
  });

  it('a repository root is loaded under the repository name (so its SKILL.md must use it)', async () => {
    const r = join(dir.path, 'my-skill');
    const sha = repo(r, { 'SKILL.md': skillMd('my-skill', 'root') });
    const res = await api('/skills/install', 'POST', { source: `file://${r}` });
    expect(res).toMatchObject({ status: 200, body: { name: 'my-skill', resolved_ref: sha } });
  });

  it('refuses what is not a valid skill, a missing source, an escaping repo_path, and bad names', async () => {
    const noMd = join(dir.path, 'empty');
    mkdirSync(noMd);
    const r1 = await api('/skills/install', 'POST', { source: noMd });
    expect(r1.status).toBe(422);
    expect(r1.body.detail[0].loc).toEqual(['body', 'source']);
    expect(r1.body.detail[0].msg).toMatch(/^Invalid skill\. Ensure the source contains a valid SKILL\.md\./);
    const badName = join(dir.path, 'Bad_Name');
    write(join(badName, 'SKILL.md'), '---\ndescription: x\n---\nbody\n');
    expect((await api('/skills/install', 'POST', { source: badName })).status).toBe(422);
    const missing = await api('/skills/install', 'POST', { source: join(dir.path, 'nowhere') });
    expect(missing.status).toBe(400);
    expect(missing.body.detail).toMatch(/^Failed to fetch skill source\. Check that the source is valid\./);
    const outside = join(dir.path, 'outer');
    write(join(outside, 'x', 'SKILL.md'), skillMd('x', 'x'));
    expect((await api('/skills/install', 'POST', { source: join(outside, 'x'), repo_path: '../x' })).status).toBe(400);
    expect((await api('/skills/install', 'POST', { source: '' })).body.detail[0].loc).toEqual(['body', 'source']);
    expect((await api('/skills/install', 'POST', {})).status).toBe(422);
    const traversal = await api('/skills/installed/..%2F..%2Fetc');
    expect(traversal.status).toBe(422);
    expect(traversal.body.detail[0].loc).toEqual(['path', 'skill_name']);
    expect((await api('/skills/installed/Bad_Name', 'DELETE')).status).toBe(422);
    expect(existsSync(join(home, '.openhands', 'skills', 'installed', 'x'))).toBe(false);
  });

  it('refuses a package with a link that leads outside it, and never answers the linked file', async () => {
    const secret = join(dir.path, 'secret.txt');
    writeFileSync(secret, 'TOP-SECRET');
    const src = join(dir.path, 'leaky');
    write(join(src, 'notes.md'), 'x');
    symlinkSync(secret, join(src, 'notes-link.md'));
    write(join(src, 'SKILL.md'), skillMd('leaky', 'leaks'));
    const r = await api('/skills/install', 'POST', { source: src });
    expect(r.status).toBe(422);
    expect(r.body.detail[0].msg).toContain('links that lead outside it');
    expect(JSON.stringify(r.body)).not.toContain('TOP-SECRET');
    // SKILL.md itself a link out.
    const src2 = join(dir.path, 'leaky2');
    mkdirSync(src2);
    symlinkSync(secret, join(src2, 'SKILL.md'));
    expect((await api('/skills/install', 'POST', { source: src2 })).status).toBe(422);
    // A repo_path that leads out of the repository through a link in it: nothing is read from there.
    const lr = join(dir.path, 'linky-repo');
    mkdirSync(lr);
    symlinkSync(join(dir.path, 'outer'), join(lr, 'escape'));
    write(join(dir.path, 'outer', 'y', 'SKILL.md'), skillMd('y', 'outside'));
    repo(lr, { 'README.md': 'x' });
    const escaped = await api('/skills/install', 'POST', { source: `file://${lr}`, repo_path: 'escape/y' });
    expect(escaped.status).toBe(400);
    expect(escaped.body.detail).toContain('leads outside the repository');
    // A link inside the package is kept as a link.
    const ok = join(dir.path, 'linked');
    write(join(ok, 'SKILL.md'), skillMd('linked', 'ok'));
    symlinkSync('SKILL.md', join(ok, 'README.md'));
    expect((await api('/skills/install', 'POST', { source: ok })).status).toBe(200);
    expect(existsSync(join(home, '.openhands', 'skills', 'installed', 'leaky'))).toBe(false);
  });

  it("runs none of the source repository's hooks", async () => {
    const r = join(dir.path, 'hooked');
    repo(r, { 'SKILL.md': skillMd('hooked', 'h') });
    const marker = join(dir.path, 'hook-ran');
    // A global hooksPath as a user's config might set: the clone must not run it.
    const hooks = join(dir.path, 'hooks');
    write(join(hooks, 'post-checkout'), `#!/bin/sh\ntouch ${marker}\n`);
    execFileSync('chmod', ['+x', join(hooks, 'post-checkout')]);
    write(join(home, '.gitconfig'), `[core]\n\thooksPath = ${hooks}\n`);
    const saved = process.env['HOME'];
    process.env['HOME'] = home;
    try {
      expect((await api('/skills/install', 'POST', { source: `file://${r}` })).status).toBe(200);
    } finally {
      process.env['HOME'] = saved;
    }
    expect(existsSync(marker)).toBe(false);
  });
});

describe('installed plugins', () => {
  it('installs from git with the skills and files it brings, takes effect in POST /api/plugins while enabled', async () => {
    const r = join(dir.path, 'plugins-repo');
    const sha = repo(r, {
      'plugins/city-weather/.plugin/plugin.json': JSON.stringify({ name: 'city-weather', version: '0.2.0', description: 'Weather' }),
      'plugins/city-weather/commands/now.md': '---\ndescription: Weather now\n---\nSay it.\n',
      'plugins/city-weather/skills/forecast/SKILL.md': skillMd('forecast', 'Forecasts'),
    });
    const res = await api('/plugins/install', 'POST', { source: `file://${r}`, repo_path: 'plugins/city-weather' });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ name: 'city-weather', version: '0.2.0', description: 'Weather', enabled: true, resolved_ref: sha, repo_path: 'plugins/city-weather' });
    expect(res.body.skills.map((x: any) => x.name).sort()).toEqual(['city-weather:now', 'forecast']);
    expect(res.body.files).toEqual(['.plugin/plugin.json', 'commands/now.md', 'skills/forecast/SKILL.md']);
    const listed = async () => (await api('/plugins', 'POST', { load_project: false })).body.plugins.map((p: any) => p.name);
    expect(await listed()).toEqual(['city-weather']);
    expect((await api('/plugins/installed')).body.plugins.map((p: any) => [p.name, p.enabled, p.files.length])).toEqual([['city-weather', true, 3]]);
    await api('/plugins/installed/city-weather', 'PATCH', { enabled: false });
    expect(await listed()).toEqual([]);
    expect((await api('/plugins/installed/city-weather')).body.enabled).toBe(false);
    expect((await api('/plugins/install', 'POST', { source: `file://${r}`, repo_path: 'plugins/city-weather' })).status).toBe(409);
    // A manifest-less plugin at a repository root is named after the repository (400 for an unknown ref).
    expect((await api('/plugins/install', 'POST', { source: `file://${r}`, ref: 'no-such-ref' })).status).toBe(400);
    const refreshed = await api('/plugins/installed/city-weather/refresh', 'POST');
    expect(refreshed).toMatchObject({ status: 200, body: { message: "Plugin 'city-weather' updated", plugin: { name: 'city-weather', enabled: false } } });
    expect(await api('/plugins/installed/city-weather', 'DELETE')).toMatchObject({ status: 200, body: { message: "Plugin 'city-weather' uninstalled" } });
    expect((await api('/plugins/installed')).body.plugins).toEqual([]);
  });

  it('refuses an invalid plugin name (422) and answers an unreachable github: shorthand 400', async () => {
    const bad = join(dir.path, 'bad');
    write(join(bad, '.plugin', 'plugin.json'), JSON.stringify({ name: 'Bad.Name' }));
    const r = await api('/plugins/install', 'POST', { source: bad });
    expect(r.status).toBe(422);
    expect(r.body.detail[0].msg).toMatch(/^Invalid plugin\. Ensure it has a valid kebab-case name\./);
    // No network here (or an unknown repository): the shorthand resolves to GitHub and fails as a fetch.
    const gh = await api('/plugins/install', 'POST', { source: 'github:agentyard-test-owner/no-such-repo-4f1c' });
    expect(gh.status).toBe(400);
    expect(gh.body.detail).toMatch(/^Failed to fetch plugin source\./);
    expect((await api('/plugins/install', 'POST', { source: 'github:only-owner' })).status).toBe(400);
  }, 150_000);

  it('a hand-copied plugin directory is adopted into the listing (source local)', async () => {
    const store = join(home, '.openhands', 'plugins', 'installed');
    write(join(store, 'handmade', '.plugin', 'plugin.json'), JSON.stringify({ name: 'handmade' }));
    write(join(store, 'mismatch', '.plugin', 'plugin.json'), JSON.stringify({ name: 'other' }));
    const list = await api('/plugins/installed');
    expect(list.body.plugins.map((p: any) => [p.name, p.source, p.version])).toEqual([['handmade', 'local', '1.0.0']]);
    expect((await api('/plugins/installed/handmade', 'PATCH', { enabled: false })).status).toBe(200);
  });
});

describe('POST /api/plugins/fetch', () => {
  it('pins a git source by commit, fills ${VAR} from secrets, and answers OpenHands codes', async () => {
    const r = join(dir.path, 'fetched');
    const sha = repo(r, { '.plugin/plugin.json': JSON.stringify({ name: 'fetched', version: '1.2.3' }), 'commands/go.md': 'Go.\n', 'skills/s1/SKILL.md': skillMd('s1', 'one') });
    const ok = await api('/plugins/fetch', 'POST', { source: `file://${dir.path}/\${REPO}`, secrets: { REPO: 'fetched' } });
    expect(ok.status).toBe(200);
    expect(ok.body).toMatchObject({ resolved_ref: sha, source: `file://${dir.path}/\${REPO}`, repo_path: null, manifest: { name: 'fetched', version: '1.2.3' }, skills: ['s1'], commands: ['go'] });
    expect(ok.body.path).toBe(join(home, '.openhands', 'cache', 'plugins', `fetched-${ok.body.path.split('fetched-')[1]!.split('/')[0]}`, 'resolved-refs', sha));
    expect(existsSync(join(ok.body.path, '.git'))).toBe(false);
    // Pinned: the same commit is answered from the cache even when the repository is gone.
    execFileSync('mv', [r, `${r}-moved`]);
    expect((await api('/plugins/fetch', 'POST', { source: `file://${r}`, ref: sha })).body.path).toBe(ok.body.path);
    expect(await api('/plugins/fetch', 'POST', { source: `file://${r}` })).toMatchObject({ status: 502, body: { detail: { code: 'source_unavailable' } } });
    expect(await api('/plugins/fetch', 'POST', { source: `file://${r}-moved`, ref: 'nope' })).toMatchObject({ status: 422, body: { detail: { code: 'ref_not_found' } } });
    expect(await api('/plugins/fetch', 'POST', { source: '${MISSING}' })).toMatchObject({ status: 422, body: { detail: { code: 'missing_secret', message: 'Missing secret: MISSING' } } });
    expect(await api('/plugins/fetch', 'POST', { source: 'plainword' })).toMatchObject({ status: 422, body: { detail: { code: 'invalid_source' } } });
    expect(await api('/plugins/fetch', 'POST', { source: `${r}-moved`, repo_path: '../x' })).toMatchObject({ status: 422, body: { detail: { code: 'repo_path_not_found' } } });
    const local = await api('/plugins/fetch', 'POST', { source: `${r}-moved` });
    expect(local).toMatchObject({ status: 200, body: { path: `${r}-moved`, resolved_ref: null } });
    const noManifest = join(dir.path, 'nomanifest');
    mkdirSync(noManifest);
    expect(await api('/plugins/fetch', 'POST', { source: noManifest })).toMatchObject({ status: 422, body: { detail: { code: 'invalid_plugin', message: 'Invalid plugin: plugin.json not found.' } } });
    expect((await api('/plugins/fetch', 'POST', { source: 'x/y', timeout: 0 })).body.detail[0].loc).toEqual(['body', 'timeout']);
    // Secret values never come back.
    const leak = await api('/plugins/fetch', 'POST', { source: 'file:///nowhere/${TOKEN}', secrets: { TOKEN: 's3cr3t-value' } });
    expect(leak.status).toBe(502);
    expect(JSON.stringify(leak.body)).not.toContain('s3cr3t-value');
  });
});
