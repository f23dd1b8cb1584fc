// The extensions repository's configuration and marketplace manifests, as OpenHands 1.58.2 reads them.
import { describe, expect, it } from 'vitest';
import { extensionsConfigFromEnv, mergeRegistrations, parseMarketplace, PUBLIC_SKILLS_REPO, resolvePluginSource } from './extensions-repo.ts';

describe('extensionsConfigFromEnv', () => {
  it('reads OpenHands\' variables: EXTENSIONS_REF, EXTENSIONS_PATH, OH_PERSISTENCE_DIR, OH_REGISTERED_MARKETPLACES', () => {
    expect(extensionsConfigFromEnv({ HOME: '/h' })).toEqual({ repoUrl: PUBLIC_SKILLS_REPO, ref: 'main', localPath: null, persistenceDir: '/h/.openhands', registeredMarketplaces: [] });
    const c = extensionsConfigFromEnv({
      HOME: '/h',
      EXTENSIONS_REF: 'v1.2.0',
      EXTENSIONS_PATH: '~/ext',
      OH_PERSISTENCE_DIR: '/data/oh',
      OH_REGISTERED_MARKETPLACES: JSON.stringify([{ name: 'team', source: 'github:acme/market', auto_load: ['a'] }, { name: 'b', source: '/m', ref: 'x', repo_path: 'sub', auto_load: true }]),
    });
    expect(c).toMatchObject({ ref: 'v1.2.0', localPath: '/h/ext', persistenceDir: '/data/oh' });
    expect(c.registeredMarketplaces).toEqual([
      { name: 'team', source: 'github:acme/market', ref: null, repo_path: null, auto_load: ['a'] },
      { name: 'b', source: '/m', ref: 'x', repo_path: 'sub', auto_load: true },
    ]);
  });

  it('refuses an OH_REGISTERED_MARKETPLACES that is not a list of registrations (the server does not start)', () => {
    expect(() => extensionsConfigFromEnv({ OH_REGISTERED_MARKETPLACES: '{nope' })).toThrow(/not valid JSON/);
    expect(() => extensionsConfigFromEnv({ OH_REGISTERED_MARKETPLACES: '{}' })).toThrow(/JSON list/);
    expect(() => extensionsConfigFromEnv({ OH_REGISTERED_MARKETPLACES: '[{"name": "x"}]' })).toThrow(/\[0\] needs string name and source/);
  });

  it('refuses a registration OpenHands\' settings refuse, instead of reading it as no auto-load (the server does not start)', () => {
    const env = (reg: Record<string, unknown>) => ({ OH_REGISTERED_MARKETPLACES: JSON.stringify([{ name: 'ok', source: '/m' }, { name: 'team', source: '/m', ...reg }]) });
    expect(() => extensionsConfigFromEnv(env({ repo_path: '../up' }))).toThrow("OH_REGISTERED_MARKETPLACES[1]: repo_path cannot contain '..' path traversal");
    expect(() => extensionsConfigFromEnv(env({ repo_path: '/abs' }))).toThrow(/\[1\]: repo_path must be relative/);
    expect(() => extensionsConfigFromEnv(env({ repo_path: '' }))).toThrow(/\[1\]: repo_path must not be empty/);
    expect(() => extensionsConfigFromEnv(env({ repo_path: 7 }))).toThrow(/\[1\]\.repo_path must be a string/);
    expect(() => extensionsConfigFromEnv(env({ ref: ['main'] }))).toThrow(/\[1\]\.ref must be a string/);
    expect(() => extensionsConfigFromEnv(env({ auto_load: 'all' }))).toThrow(/\[1\]\.auto_load must be true, false or a list/);
    expect(() => extensionsConfigFromEnv(env({ auto_load: ['a', 1] }))).toThrow(/\[1\]\.auto_load/);
    expect(() => extensionsConfigFromEnv(env({ auto_load: null }))).toThrow(/\[1\]\.auto_load/);
    // What OpenHands takes, ours takes: null fields, a path inside the repository, no auto_load (false).
    expect(extensionsConfigFromEnv(env({ ref: null, repo_path: 'sub/dir' })).registeredMarketplaces).toEqual([
      { name: 'ok', source: '/m', ref: null, repo_path: null, auto_load: false },
      { name: 'team', source: '/m', ref: null, repo_path: 'sub/dir', auto_load: false },
    ]);
  });
});

describe('marketplaces', () => {
  it('a request registration replaces the server one of its name', () => {
    expect(mergeRegistrations([{ name: 'a', source: '1' }, { name: 'b', source: '2' }], [{ name: 'a', source: '3' }])).toEqual([{ name: 'a', source: '3' }, { name: 'b', source: '2' }]);
  });

  it('needs a name and an owner, as OpenHands\' Marketplace model', () => {
    expect(() => parseMarketplace({ name: 'm', plugins: [] }, '/r')).toThrow(/owner/);
    expect(() => parseMarketplace({ owner: { name: 'o' } }, '/r')).toThrow(/name/);
    expect(() => parseMarketplace({ name: 'm', owner: { name: 'o' }, plugins: [{ name: 'p', source: { source: 'github' } }] }, '/r')).toThrow(/repo/);
  });

  it('resolves plugin sources as resolve_plugin_source: objects to coordinates, relative paths joined (leading dots and slashes dropped)', () => {
    const m = parseMarketplace({ name: 'm', owner: { name: 'o' }, plugins: [
      { name: 'a', source: './plugins/a' },
      { name: 'b', source: '../b' },
      { name: 'c', source: 'https://host/c.git' },
      { name: 'd', source: { source: 'github', repo: 'acme/d', ref: 'v1', path: 'plugins/d' } },
      { name: 'e', source: { source: 'url', url: 'https://host/e.git' } },
    ] }, '/repo');
    expect(m.plugins.map((p) => resolvePluginSource(m, p))).toEqual([
      { source: '/repo/plugins/a', ref: null, repo_path: null },
      { source: '/repo/b', ref: null, repo_path: null },
      { source: 'https://host/c.git', ref: null, repo_path: null },
      { source: 'github:acme/d', ref: 'v1', repo_path: 'plugins/d' },
      { source: 'https://host/e.git', ref: null, repo_path: null },
    ]);
  });
});
