// Skills from registered marketplaces (OpenHands 1.58.2 skills_service
// load_registered_marketplace_skills): for each registration that auto-loads (auto_load true, or a
// list of names), its marketplace is fetched like a plugin (github:, git URL or local path, with
// ref and repo_path), then its standalone skills and its plugins' skills that auto-load are read.
// A marketplace without a manifest is read as a folder of skills (skills/, .skills/, or the folder
// itself: `<name>/SKILL.md`). One bad marketplace or entry is logged and skipped, never fatal.
import { existsSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { createLogger } from '../../util/log.ts';
import { loadMarketplaceDir, resolvePluginSource, type Marketplace, type MarketplaceRegistration } from '../skills/extensions-repo.ts';
import { agentSkill } from '../skills/parse.ts';
import type { Skill } from '../skills/types.ts';
import { loadPluginDir } from './load.ts';
import { fetchPlugin, parseSource, type PluginSourceSpec } from './source.ts';

const log = createLogger('plugins');

export const autoLoads = (r: MarketplaceRegistration, name: string) => (Array.isArray(r.auto_load) ? r.auto_load.includes(name) : r.auto_load === true);
export const autoLoading = (r: MarketplaceRegistration) => (Array.isArray(r.auto_load) ? r.auto_load.length > 0 : r.auto_load === true);

/** `<dir>/<name>/SKILL.md` folders, any depth, sorted. */
function skillFolders(dir: string): string[] {
  if (!existsSync(dir) || !statSync(dir).isDirectory()) return [];
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && e.name === 'SKILL.md')
    .map((e) => e.parentPath)
    .sort();
}

/** A folder of skills with no manifest, as OpenHands' Marketplace.from_skills_dir reads it; undefined when it has none. */
function skillsFolderMarketplace(dir: string, name: string): Marketplace | undefined {
  const roots = [join(dir, 'skills'), join(dir, '.skills')].filter((d) => existsSync(d) && statSync(d).isDirectory());
  const skills = new Map<string, Marketplace['skills'][number]>();
  for (const root of roots.length ? roots : [dir]) {
    for (const folder of skillFolders(root)) {
      try {
        const s = agentSkill(join(folder, 'SKILL.md'), readFileSync(join(folder, 'SKILL.md'), 'utf8'), 'marketplace', false);
        if (!skills.has(s.name)) skills.set(s.name, { name: s.name, source: `./${relative(dir, folder)}`, description: s.description });
      } catch (err) {
        log.warn({ folder, reason: (err as Error).message }, 'marketplace skill skipped');
      }
    }
  }
  return skills.size ? { name, path: dir, plugins: [], skills: [...skills.values()] } : undefined;
}

export interface AutoLoads {
  /** Standalone skills of the marketplaces (read into memory). */
  skills: Skill[];
  /** The plugins to load, as plugin sources, marketplace by marketplace. */
  plugins: { marketplace: string; name: string; source: PluginSourceSpec }[];
}

/**
 * What the registrations auto-load (OpenHands' registry.get_auto_load_registrations): each
 * marketplace fetched (a failure logged and skipped), its standalone skills read, its plugins'
 * sources resolved. `fetchOpts.cacheDir` holds the git clones; the caller removes it.
 */
export async function resolveAutoLoads(registrations: readonly MarketplaceRegistration[], fetchOpts: { cacheDir: string; baseDir: string; signal?: AbortSignal }): Promise<AutoLoads> {
  const out: AutoLoads = { skills: [], plugins: [] };
  for (const reg of registrations.filter(autoLoading)) {
    let m: Marketplace | undefined;
    try {
      const { dir } = await fetchPlugin({ source: reg.source, ref: reg.ref ?? null, repo_path: reg.repo_path ?? null }, fetchOpts);
      m = loadMarketplaceDir(dir) ?? skillsFolderMarketplace(dir, reg.name);
      if (!m) throw new Error('it has no .plugin/marketplace.json or .claude-plugin/marketplace.json, and no skill folders (<name>/SKILL.md)');
    } catch (err) {
      log.warn({ marketplace: reg.name, reason: (err as Error).message }, 'marketplace not loaded; continuing without it');
      continue;
    }
    for (const e of m.skills) {
      if (!autoLoads(reg, e.name)) continue;
      try {
        const src = e.source as string;
        const parsed = parseSource(src, m.path);
        const { dir } = parsed.kind === 'local' ? { dir: parsed.path } : await fetchPlugin({ source: src }, fetchOpts);
        out.skills.push(agentSkill(join(dir, 'SKILL.md'), readFileSync(join(dir, 'SKILL.md'), 'utf8'), `marketplace:${reg.name}`, false));
      } catch (err) {
        log.warn({ marketplace: reg.name, skill: e.name, reason: (err as Error).message }, 'marketplace skill skipped');
      }
    }
    for (const e of m.plugins) {
      if (!autoLoads(reg, e.name)) continue;
      try {
        out.plugins.push({ marketplace: reg.name, name: e.name, source: resolvePluginSource(m, e) });
      } catch (err) {
        log.warn({ marketplace: reg.name, plugin: e.name, reason: (err as Error).message }, 'marketplace plugin skipped');
      }
    }
  }
  return out;
}

/**
 * The skills the registrations auto-load (POST /api/skills): per marketplace, its standalone skills
 * first, then its plugins' (a plugin's skill wins over a same-named standalone one). `baseDir`
 * anchors relative local sources. Git sources are cloned into a directory removed before this
 * returns (the skills are read into memory; a `root` inside it is cleared).
 */
export async function registeredMarketplaceSkills(registrations: readonly MarketplaceRegistration[], o: { baseDir: string; signal?: AbortSignal }): Promise<Skill[]> {
  if (!registrations.some(autoLoading)) return [];
  const cacheDir = join(tmpdir(), `agentyard-marketplaces-${randomBytes(6).toString('hex')}`);
  const fetchOpts = { cacheDir, baseDir: o.baseDir, ...(o.signal ? { signal: o.signal } : {}) };
  const out: Skill[] = [];
  try {
    // Marketplace by marketplace, as OpenHands merges them (a later marketplace's skill wins by name).
    for (const reg of registrations) {
      const auto = await resolveAutoLoads([reg], fetchOpts);
      out.push(...auto.skills);
      for (const p of auto.plugins) {
        try {
          out.push(...loadPluginDir((await fetchPlugin(p.source, fetchOpts)).dir).skills);
        } catch (err) {
          log.warn({ marketplace: p.marketplace, plugin: p.name, reason: (err as Error).message }, 'marketplace plugin skipped');
        }
      }
    }
  } finally {
    rmSync(cacheDir, { recursive: true, force: true });
  }
  return out.map((s) => (s.root && s.root.startsWith(cacheDir) ? { ...s, root: null } : s));
}
