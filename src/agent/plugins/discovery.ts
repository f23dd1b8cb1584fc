// Plugins already on disk (OpenHands plugin/discovery.py): user plugins in ~/.agents/plugins and
// ~/.openhands/plugins, project plugins in {dir}/.agents/plugins and {dir}/.openhands/plugins of the
// working directory and of its git root. Earlier directories win on a name conflict; project
// plugins override user plugins. A broken plugin is logged and skipped.
import { existsSync, readdirSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { createLogger } from '../../util/log.ts';
import { gitRoot } from '../skills/load.ts';
import { loadPluginDir, type LoadedPlugin } from './load.ts';
import { enabledInstalledDirs, installedDir, type ExtensionMeta } from '../extensions/installed.ts';

const log = createLogger('plugins');

function fromDir(dir: string): LoadedPlugin[] {
  if (!existsSync(dir) || !statSync(dir).isDirectory()) return [];
  const out: LoadedPlugin[] = [];
  for (const name of readdirSync(dir).sort()) {
    const p = join(dir, name);
    // `installed` is OpenHands' install store, not a plugin.
    if (name === 'installed' || !statSync(p).isDirectory()) continue;
    try {
      out.push(loadPluginDir(p));
    } catch (err) {
      log.warn({ dir: p, err: err instanceof Error ? err.message : String(err) }, 'plugin skipped');
    }
  }
  return out;
}

/** First one of a name wins. */
function firstByName(dirs: readonly string[]): LoadedPlugin[] {
  const seen = new Map<string, LoadedPlugin>();
  for (const d of dirs) for (const p of fromDir(d)) if (!seen.has(p.name)) seen.set(p.name, p);
  return [...seen.values()];
}

/**
 * `~/.agents/plugins`, then `~/.openhands/plugins` (its `installed` store is not a plugin), then the
 * enabled installed plugins (POST /api/plugins/install) below them on a name conflict, as OpenHands'
 * load_user_plugins.
 */
export function userPlugins(home = homedir()): LoadedPlugin[] {
  const dirs = firstByName([join(home, '.agents', 'plugins'), join(home, '.openhands', 'plugins')]);
  const names = new Set(dirs.map((p) => p.name));
  for (const dir of enabledInstalledDirs(installedDir('plugins', home), installedPluginMeta)) {
    try {
      const p = loadPluginDir(dir);
      if (!names.has(p.name)) (names.add(p.name), dirs.push(p));
    } catch (err) {
      log.warn({ dir, err: err instanceof Error ? err.message : String(err) }, 'installed plugin skipped');
    }
  }
  return dirs;
}

/** What the install store records of a plugin (OpenHands PluginManifest: version 1.0.0 unless the manifest says). */
export function installedPluginMeta(dir: string): ExtensionMeta {
  const p = loadPluginDir(dir);
  return { name: p.name, version: p.version ?? '1.0.0', description: p.description ?? '' };
}

export function projectPlugins(workDir: string): LoadedPlugin[] {
  const roots = [workDir];
  const git = gitRoot(workDir);
  if (git && git !== workDir) roots.push(git);
  return firstByName(roots.flatMap((r) => [join(r, '.agents', 'plugins'), join(r, '.openhands', 'plugins')]));
}

/** User plugins, then project plugins overriding them by name. */
export function availablePlugins(o: { loadUser: boolean; loadProject: boolean; projectDir?: string | null; home?: string }): LoadedPlugin[] {
  const byName = new Map<string, LoadedPlugin>();
  for (const p of o.loadUser ? userPlugins(o.home) : []) byName.set(p.name, p);
  for (const p of o.loadProject && o.projectDir ? projectPlugins(o.projectDir) : []) byName.set(p.name, p);
  return [...byName.values()];
}
