// The extensions repository over real HTTP: a real git repository shaped like OpenHands/extensions
// (cloned by the server into its cache and fetched again on sync), a local copy (EXTENSIONS_PATH),
// a registered marketplace repository, and installed directories as OpenHands 1.58.2 lays them out.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ExtensionsConfig } from '../../agent/skills/extensions-repo.ts';
import { addPublicSkill, extensionsRepo, marketplaceRepo, writeFiles } from '../../testing/extensions/repos.ts';
import { startTestServer, tempDir, type TestServer } from '../test-support.ts';

let dir: ReturnType<typeof tempDir>;
let s: TestServer | undefined;
let cfg: ExtensionsConfig;
let origin: string;

beforeEach(() => {
  dir = tempDir('extensions-');
  origin = extensionsRepo(join(dir.path, 'origin'));
  cfg = { repoUrl: origin, ref: 'main', localPath: null, persistenceDir: join(dir.path, 'persist'), home: join(dir.path, 'home'), registeredMarketplaces: [] };
});
afterEach(async () => {
  await s?.close();
  s = undefined;
  dir.remove();
});

const start = async (c: Partial<ExtensionsConfig> = {}) => (s = await startTestServer(join(dir.path, 'server'), { extensions: { ...cfg, ...c }, ...(c.home ? { home: c.home } : {}) }));
const only = { load_user: false, load_project: false, load_org: false };
const names = (body: { skills: { name: string }[] }) => body.skills.map((x) => x.name).sort();

describe('public skills (POST /api/skills load_public)', () => {
  it('loads the default marketplace\'s skills from a clone, all of skills/ with marketplace_path null, none with load_public false', async () => {
    await start();
    const res = await s!.api('/api/skills', { method: 'POST', body: only });
    expect(res.status).toBe(200);
    // default.json lists alpha, legacy (a legacy .md, named by its path) and a name with no skill.
    expect(names(res.body)).toEqual(['alpha', 'skills/legacy']);
    expect(res.body.sources).toMatchObject({ public: 2, sdk_base: 2, registered_marketplaces: 0 });
    const alpha = res.body.skills.find((x: any) => x.name === 'alpha');
    expect(alpha).toMatchObject({ type: 'agentskills', description: 'Alpha skill.', is_agentskills_format: true, source: join(cfg.persistenceDir, 'cache/skills/public-skills/skills/alpha/SKILL.md') });
    expect(res.body.skills.find((x: any) => x.name === 'skills/legacy')).toMatchObject({ type: 'knowledge', triggers: ['legacy-word'] });

    const all = await s!.api('/api/skills', { method: 'POST', body: { ...only, marketplace_path: null } });
    // Only skills/ (the plugin's own skills are not public skills).
    expect(names(all.body)).toEqual(['alpha', 'beta', 'skills/legacy']);
    const other = await s!.api('/api/skills', { method: 'POST', body: { ...only, marketplace_path: 'marketplaces/none.json' } });
    expect(other.body.sources.public).toBe(0);
    const off = await s!.api('/api/skills', { method: 'POST', body: { ...only, load_public: false } });
    expect(off.body).toEqual({ skills: [], sources: { sandbox: 0, registered_marketplaces: 0, sdk_base: 0, public: 0, user: 0, org: 0, project: 0 } });
  });

  it('reads EXTENSIONS_PATH instead of cloning; a user skill overrides a public one of its name', async () => {
    const local = join(dir.path, 'local-copy');
    writeFiles(local, { 'skills/alpha/SKILL.md': '---\nname: alpha\ndescription: Local alpha.\n---\nLocal.\n', 'skills/zeta/SKILL.md': '---\nname: zeta\ndescription: Zeta.\n---\nZ.\n' });
    writeFiles(cfg.home!, { '.agents/skills/zeta/SKILL.md': '---\nname: zeta\ndescription: Mine.\n---\nMine.\n' });
    await start({ localPath: local, repoUrl: join(dir.path, 'unreachable') });
    const res = await s!.api('/api/skills', { method: 'POST', body: { load_project: false, load_org: false } });
    // No marketplaces/default.json in the copy: every skill of skills/.
    expect(res.body.sources).toMatchObject({ public: 2, user: 1, sdk_base: 2 });
    expect(res.body.skills.map((x: any) => [x.name, x.description])).toEqual([['alpha', 'Local alpha.'], ['zeta', 'Mine.']]);
    const catalog = await s!.api('/api/skills/catalog');
    expect(catalog.status).toBe(200);
    expect(catalog.body.skills.map((x: any) => [x.name, x.origin])).toEqual([['alpha', 'public'], ['zeta', 'user']]);
  });

  it('says so where the repository cannot be reached: no public skills, a sync error, empty catalogs', async () => {
    await start({ repoUrl: join(dir.path, 'unreachable') });
    const res = await s!.api('/api/skills', { method: 'POST', body: only });
    expect(res.body.sources.public).toBe(0);
    expect((await s!.api('/api/skills/sync', { method: 'POST' })).body).toEqual({ status: 'error', message: 'Failed to sync skills repository' });
    expect((await s!.api('/api/skills/marketplace')).body).toEqual({ skills: [] });
    expect((await s!.api('/api/plugins/marketplace')).body).toEqual({ plugins: [] });
    expect((await s!.api('/api/skills/catalog')).body).toEqual({ skills: [] });
  });
});

describe('POST /api/skills/sync', () => {
  it('fetches the repository again: a skill committed since shows at once; a fetch failure is an error', async () => {
    await start();
    expect(names((await s!.api('/api/skills', { method: 'POST', body: only })).body)).toEqual(['alpha', 'skills/legacy']);
    addPublicSkill(origin, 'omega');
    // Within the minute the parsed skills are cached, as OpenHands caches them.
    expect(names((await s!.api('/api/skills', { method: 'POST', body: only })).body)).toEqual(['alpha', 'skills/legacy']);
    expect((await s!.api('/api/skills/sync', { method: 'POST' })).body).toEqual({ status: 'success', message: 'Skills repository synced successfully' });
    expect(names((await s!.api('/api/skills', { method: 'POST', body: only })).body)).toEqual(['alpha', 'omega', 'skills/legacy']);
  });

  it('checks out EXTENSIONS_REF (a commit), also in a clone made at another ref', async () => {
    const { execFileSync } = await import('node:child_process');
    const before = execFileSync('git', ['-C', origin, 'rev-parse', 'HEAD'], { encoding: 'utf8' }).trim();
    addPublicSkill(origin, 'omega');
    // The first server clones main (with omega); the second, on the same cache, pins the older commit.
    const first = await start();
    expect(names((await first.api('/api/skills', { method: 'POST', body: only })).body)).toEqual(['alpha', 'omega', 'skills/legacy']);
    await first.close();
    s = undefined;
    await start({ ref: before });
    expect(names((await s!.api('/api/skills', { method: 'POST', body: only })).body)).toEqual(['alpha', 'skills/legacy']);
  });
});

describe('marketplace catalogs', () => {
  it('GET /api/skills/marketplace: plugins then standalone skills, installed from the installed directory', async () => {
    // Installed as OpenHands records it (.installed.json), and one unrecorded directory holding a valid skill of its name.
    const installed = join(cfg.persistenceDir, 'skills', 'installed');
    writeFiles(installed, { 'beta/SKILL.md': '---\nname: beta\ndescription: b\n---\nb\n', 'delta/SKILL.md': '---\nname: delta\ndescription: d\n---\nd\n', 'gone-skill/.keep': '' });
    writeFileSync(join(installed, '.installed.json'), JSON.stringify({ extensions: { beta: { name: 'beta' }, 'tool-kit': { name: 'tool-kit' } } }));
    await start();
    const res = await s!.api('/api/skills/marketplace');
    expect(res.status).toBe(200);
    const repo = join(cfg.persistenceDir, 'cache/skills/public-skills');
    expect(res.body.skills).toEqual([
      { name: 'alpha', description: 'Alpha skill.', source: join(repo, 'skills/alpha'), installed: false },
      { name: 'beta', description: 'Beta skill.', source: join(repo, 'skills/beta'), installed: true },
      // Recorded but its directory is gone: not installed.
      { name: 'tool-kit', description: 'A kit of tools.', source: join(repo, 'plugins/tool-kit'), installed: false },
      { name: 'remote-kit', description: 'Elsewhere.', source: 'github:acme/remote-kit@v1/plugins/remote-kit', installed: false },
      { name: 'delta', description: 'A standalone skill.', source: 'github:acme/delta', installed: true },
    ]);
  });

  it('flags what POST /api/skills/install installs, and what uninstall removes', async () => {
    const home = join(dir.path, 'home');
    await start({ persistenceDir: join(home, '.openhands'), home });
    const flag = async () => Object.fromEntries((await s!.api('/api/skills/marketplace')).body.skills.map((x: any) => [x.name, x.installed]));
    expect((await flag())['alpha']).toBe(false);
    const installed = await s!.api('/api/skills/install', { method: 'POST', body: { source: join(origin, 'skills', 'alpha') } });
    expect(installed.status).toBe(200);
    expect((await flag())['alpha']).toBe(true);
    expect((await s!.api('/api/skills/installed/alpha', { method: 'DELETE' })).status).toBe(200);
    expect((await flag())['alpha']).toBe(false);
  });

  it('GET /api/plugins/marketplace: the true plugins, with contents when they lie in the clone', async () => {
    const installed = join(cfg.persistenceDir, 'plugins', 'installed');
    writeFiles(installed, { 'tool-kit/.plugin/plugin.json': JSON.stringify({ name: 'tool-kit' }) });
    await start();
    const res = await s!.api('/api/plugins/marketplace');
    expect(res.status).toBe(200);
    const kit = join(cfg.persistenceDir, 'cache/skills/public-skills/plugins/tool-kit');
    expect(res.body.plugins).toEqual([
      {
        name: 'tool-kit', description: 'A kit of tools.', source: kit, ref: null, repo_path: null, installed: true, path: kit,
        skills: [{ name: 'kit-use', description: 'How to use the kit.' }, { name: 'tool-kit:run', description: 'Run the kit.' }],
        files: ['.plugin/plugin.json', 'commands/run.md', 'skills/kit-use/SKILL.md'],
      },
      { name: 'remote-kit', description: 'Elsewhere.', source: 'github:acme/remote-kit', ref: 'v1', repo_path: 'plugins/remote-kit', installed: false, path: null, skills: null, files: null },
    ]);
  });
});

describe('registered marketplaces', () => {
  it('adds the skills of auto_load registrations: all, or the plugins and skills named; the request replaces a server registration of its name', async () => {
    const market = marketplaceRepo(join(dir.path, 'market'));
    const server = [{ name: 'team', source: market, auto_load: ['team-style'] }];
    await start({ repoUrl: join(dir.path, 'unreachable'), registeredMarketplaces: server });
    const byServer = await s!.api('/api/skills', { method: 'POST', body: only });
    expect(names(byServer.body)).toEqual(['team-style']);
    expect(byServer.body.sources.registered_marketplaces).toBe(1);

    const all = await s!.api('/api/skills', { method: 'POST', body: { ...only, registered_marketplaces: [{ name: 'team', source: `file://${market}`, ref: 'main', auto_load: true }] } });
    expect(names(all.body)).toEqual(['docs-style', 'lint-rules', 'team-style']);
    expect(all.body.sources.registered_marketplaces).toBe(3);

    const some = await s!.api('/api/skills', { method: 'POST', body: { ...only, registered_marketplaces: [{ name: 'team', source: market, auto_load: ['lint-kit'] }, { name: 'broken', source: join(dir.path, 'nowhere'), auto_load: true }] } });
    expect(names(some.body)).toEqual(['lint-rules']);
    const none = await s!.api('/api/skills', { method: 'POST', body: { ...only, registered_marketplaces: [{ name: 'team', source: market, auto_load: [] }] } });
    expect(none.body.sources.registered_marketplaces).toBe(0);
    // Marketplace skills come with the public ones: not without load_public.
    const off = await s!.api('/api/skills', { method: 'POST', body: { ...only, load_public: false } });
    expect(off.body.sources.registered_marketplaces).toBe(0);
  });
});
