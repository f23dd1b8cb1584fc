// The marketplace catalogs of the extensions repository (OpenHands 1.58.2 skills_service
// service_get_marketplace_catalog, plugins_service service_get_plugins_marketplace_catalog): the
// clone's marketplace, each entry with an `installed` flag read fresh from the installed
// directories at every call. The entries themselves are cached five minutes (an empty list never:
// one failed fetch must not blank the tab for the whole TTL); a sync drops the skills catalog's.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { MarketplacePluginInfo, MarketplaceSkillInfo } from '../../api/agent-server/extensions.ts';
import { createLogger } from '../../util/log.ts';
import { pluginInfo } from '../plugins/index.ts';
import { loadPluginDir } from '../plugins/load.ts';
import { CATALOG_TTL_MS, DEFAULT_MARKETPLACE_PATH, loadMarketplaceDir, parseMarketplace, resolvePluginSource, updateExtensionsRepo, type ExtensionsConfig, type Marketplace } from '../skills/extensions-repo.ts';
import { installedPluginMeta } from '../plugins/discovery.ts';
import { installedSkillMeta } from '../skills/load.ts';
import { listInstalled, type ExtensionKind } from './installed.ts';

const log = createLogger('extensions');

/**
 * Names installed (enabled or not) under the configuration's persistence directory, as OpenHands'
 * catalogs read them: list_installed, which also adopts a directory copied in by hand (installed.ts).
 */
function installedNames(cfg: ExtensionsConfig, kind: ExtensionKind): Set<string> {
  return new Set(listInstalled(join(cfg.persistenceDir, kind, 'installed'), kind === 'skills' ? installedSkillMeta : installedPluginMeta).map((r) => r.name));
}

/** Per repository, ref and persistence directory (one process may serve several configurations: tests). */
const skillsCatalogs = new Map<string, { at: number; entries: Omit<MarketplaceSkillInfo, 'installed'>[] }>();
const pluginsCatalogs = new Map<string, { at: number; entries: Omit<MarketplacePluginInfo, 'installed'>[] }>();
const cacheKey = (cfg: ExtensionsConfig, marketplacePath: string) => JSON.stringify([cfg.repoUrl, cfg.ref, cfg.persistenceDir, marketplacePath]);

/** After a sync (OpenHands drops only the skills catalog's cache then). */
export function invalidateSkillsCatalog(): void {
  skillsCatalogs.clear();
}

/** The `.plugin/` manifest, else the marketplace file; undefined (logged) when neither can be read. */
function marketplaceOf(repo: string, marketplacePath: string): Marketplace | undefined {
  try {
    const m = loadMarketplaceDir(repo);
    if (m) return m;
  } catch (err) {
    log.warn({ reason: (err as Error).message }, 'marketplace manifest unreadable; trying the marketplace file');
  }
  const file = join(repo, marketplacePath);
  if (!existsSync(file)) {
    log.warn({ file }, 'marketplace file not found');
    return undefined;
  }
  try {
    return parseMarketplace(JSON.parse(readFileSync(file, 'utf8')), repo);
  } catch (err) {
    log.warn({ file, reason: (err as Error).message }, 'marketplace file unreadable');
    return undefined;
  }
}

async function skillEntries(cfg: ExtensionsConfig, marketplacePath: string): Promise<Omit<MarketplaceSkillInfo, 'installed'>[]> {
  const repo = await updateExtensionsRepo(cfg);
  if (!repo) return [];
  // OpenHands' skills catalog requires the marketplace file itself, even when a .plugin/ manifest exists.
  if (!existsSync(join(repo, marketplacePath))) {
    log.warn({ file: join(repo, marketplacePath) }, 'marketplace file not found');
    return [];
  }
  const m = marketplaceOf(repo, marketplacePath);
  if (!m) return [];
  // Plugins first: a name in both lists is the plugin's. The source is one string the install route
  // takes (`github:owner/repo@ref/path`).
  const entries = new Map<string, Omit<MarketplaceSkillInfo, 'installed'>>();
  for (const p of m.plugins) {
    const r = resolvedOrSkipped(m, p);
    if (!r) continue;
    entries.set(p.name, { name: p.name, description: p.description, source: `${r.source}${r.ref ? `@${r.ref}` : ''}${r.repo_path ? `/${r.repo_path}` : ''}` });
  }
  for (const s of m.skills) if (!entries.has(s.name)) entries.set(s.name, { name: s.name, description: s.description, source: s.source as string });
  return [...entries.values()];
}

/** A catalog's entries, kept for CATALOG_TTL_MS; an empty read is not kept (as OpenHands: a failed fetch is tried again). */
async function cached<T>(cache: Map<string, { at: number; entries: T[] }>, key: string, now: number, load: () => Promise<T[]>): Promise<T[]> {
  const hit = cache.get(key);
  if (hit && now - hit.at < CATALOG_TTL_MS) return hit.entries;
  const entries = await load();
  if (entries.length) cache.set(key, { at: now, entries });
  return entries;
}

/** GET /api/skills/marketplace. */
export async function skillsMarketplace(cfg: ExtensionsConfig, now = Date.now(), marketplacePath = DEFAULT_MARKETPLACE_PATH): Promise<MarketplaceSkillInfo[]> {
  const entries = await cached(skillsCatalogs, cacheKey(cfg, marketplacePath), now, () => skillEntries(cfg, marketplacePath));
  const installed = installedNames(cfg, 'skills');
  return entries.map((e) => ({ ...e, installed: installed.has(e.name) }));
}

/** A true plugin: a string source under ./plugins/, or a source object whose path is under plugins/ (skills sit under ./skills/). */
function truePlugin(source: Marketplace['plugins'][number]['source']): boolean {
  return typeof source === 'string' ? source.startsWith('./plugins/') : (source.path ?? '').startsWith('plugins/');
}

/** A marketplace entry's source resolved; undefined (logged) for an entry that cannot be, which the catalog leaves out. */
function resolvedOrSkipped(m: Marketplace, p: Marketplace['plugins'][number]): ReturnType<typeof resolvePluginSource> | undefined {
  try {
    return resolvePluginSource(m, p);
  } catch (err) {
    log.warn({ name: p.name, reason: (err as Error).message }, 'marketplace entry skipped');
    return undefined;
  }
}

async function pluginEntries(cfg: ExtensionsConfig, marketplacePath: string): Promise<Omit<MarketplacePluginInfo, 'installed'>[]> {
  const repo = await updateExtensionsRepo(cfg);
  if (!repo) return [];
  const m = marketplaceOf(repo, marketplacePath);
  if (!m) return [];
  const out: Omit<MarketplacePluginInfo, 'installed'>[] = [];
  for (const p of m.plugins) {
    if (!truePlugin(p.source)) continue;
    const r = resolvedOrSkipped(m, p);
    if (!r) continue;
    const entry: Omit<MarketplacePluginInfo, 'installed'> = { name: p.name, description: p.description, source: r.source, ref: r.ref, repo_path: r.repo_path, path: null, skills: null, files: null };
    // A plugin inside the clone: its contents are on disk to show; one in another repository's are not.
    if (r.ref === null && r.repo_path === null && existsSync(r.source)) {
      try {
        const info = pluginInfo(loadPluginDir(r.source));
        Object.assign(entry, { path: r.source, skills: info.skills, files: info.files });
      } catch (err) {
        log.warn({ name: p.name, reason: (err as Error).message }, 'marketplace plugin contents unreadable');
      }
    }
    out.push(entry);
  }
  return out;
}

/** GET /api/plugins/marketplace. */
export async function pluginsMarketplace(cfg: ExtensionsConfig, now = Date.now(), marketplacePath = DEFAULT_MARKETPLACE_PATH): Promise<MarketplacePluginInfo[]> {
  const entries = await cached(pluginsCatalogs, cacheKey(cfg, marketplacePath), now, () => pluginEntries(cfg, marketplacePath));
  const installed = installedNames(cfg, 'plugins');
  // OpenHands' field order (clients that compare documents byte for byte see the same one).
  return entries.map((e) => ({ name: e.name, description: e.description, source: e.source, ref: e.ref, repo_path: e.repo_path, installed: installed.has(e.name), path: e.path, skills: e.skills, files: e.files }));
}
