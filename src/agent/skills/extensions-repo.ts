// OpenHands' extensions repository (github.com/OpenHands/extensions) as the public skills source
// and the marketplace catalog, as OpenHands 1.58.2 keeps it (sdk/skills/skill.py load_public_skills,
// sdk/skills/utils.py update_skills_repository): a shallow clone in
// `<persistence>/cache/skills/public-skills` (persistence: OH_PERSISTENCE_DIR, else ~/.openhands),
// fetched again at `EXTENSIONS_REF` (default main) when read; `EXTENSIONS_PATH` names a local copy
// that public skills are read from instead (nothing cloned). As in 1.58, EXTENSIONS_PATH serves only
// the public skills: sync and the marketplace catalogs work on the clone.
import { execFile } from 'node:child_process';
import { existsSync, readFileSync, rmSync, mkdirSync, statSync, readdirSync } from 'node:fs';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { createLogger } from '../../util/log.ts';
import { agentSkill, legacySkill, SkillFileError } from './parse.ts';
import type { Skill } from './types.ts';

const log = createLogger('extensions');

export const PUBLIC_SKILLS_REPO = 'https://github.com/OpenHands/extensions';
export const DEFAULT_MARKETPLACE_PATH = 'marketplaces/default.json';
/** OpenHands' TTLs: public skills re-read after a minute, the marketplace catalogs after five. */
export const PUBLIC_SKILLS_TTL_MS = 60_000;
export const CATALOG_TTL_MS = 300_000;
const GIT_TIMEOUT_MS = 120_000;

/** A marketplace registration (OpenHands MarketplaceRegistration). */
export interface MarketplaceRegistration {
  name: string;
  source: string;
  ref?: string | null;
  repo_path?: string | null;
  auto_load?: boolean | string[];
}

export interface ExtensionsConfig {
  /** The public repository (PUBLIC_SKILLS_REPO; git's `url.<base>.insteadOf` can redirect it). */
  repoUrl: string;
  /** EXTENSIONS_REF: branch, tag or commit. */
  ref: string;
  /** EXTENSIONS_PATH: a local copy read for public skills instead of the clone. */
  localPath: string | null;
  /** OH_PERSISTENCE_DIR, else ~/.openhands: the clone and the installed skills and plugins live under it. */
  persistenceDir: string;
  /** Where user skills are read (~/.agents/skills, ...); default: the home directory at each read. */
  home?: string;
  /** The server's marketplace registrations (OH_REGISTERED_MARKETPLACES, a JSON list), merged under a request's by name. */
  registeredMarketplaces: MarketplaceRegistration[];
  /** Extra environment for git (tests and operators: GIT_CONFIG_COUNT/KEY/VALUE for an insteadOf). */
  gitEnv?: Record<string, string>;
}

/** The configuration from the environment, named as OpenHands names it. Throws on an OH_REGISTERED_MARKETPLACES that is not a JSON list of registrations. */
export function extensionsConfigFromEnv(env: NodeJS.ProcessEnv = process.env): ExtensionsConfig {
  const home = env['HOME'] || homedir();
  const persistenceDir = env['OH_PERSISTENCE_DIR'] ? resolve(env['OH_PERSISTENCE_DIR']) : join(home, '.openhands');
  const local = env['EXTENSIONS_PATH'];
  return {
    repoUrl: PUBLIC_SKILLS_REPO,
    ref: env['EXTENSIONS_REF'] || 'main',
    localPath: local ? (local.startsWith('~/') ? join(home, local.slice(2)) : local) : null,
    persistenceDir,
    registeredMarketplaces: parseRegistrations(env['OH_REGISTERED_MARKETPLACES']),
  };
}

/**
 * What is wrong with a registration's `repo_path` (OpenHands MarketplaceRegistration's validator), or
 * undefined: a relative '/'-separated path that stays inside the repository.
 */
export function repoPathProblem(p: string): string | undefined {
  if (!p) return 'repo_path must not be empty';
  if (p.includes('\\')) return "repo_path must use '/' separators";
  if (p.startsWith('/') || /^[A-Za-z]:/.test(p)) return 'repo_path must be relative, not absolute';
  if (p.split('/').includes('..')) return "repo_path cannot contain '..' path traversal";
  return undefined;
}

/**
 * OH_REGISTERED_MARKETPLACES as OpenHands' settings model reads it: a registration it would refuse
 * stops the start (a repo_path out of the repository, an auto_load that is neither a boolean nor a list
 * of names), where reading it as "no auto-load" would silently leave the operator's skills out.
 */
function parseRegistrations(raw: string | undefined): MarketplaceRegistration[] {
  if (!raw?.trim()) return [];
  let list: unknown;
  try {
    list = JSON.parse(raw);
  } catch {
    throw new Error('OH_REGISTERED_MARKETPLACES is not valid JSON (a list of {name, source, ref?, repo_path?, auto_load?})');
  }
  if (!Array.isArray(list)) throw new Error('OH_REGISTERED_MARKETPLACES must be a JSON list');
  return list.map((r, i) => {
    const at = `OH_REGISTERED_MARKETPLACES[${i}]`;
    const o = r as Record<string, unknown>;
    if (!o || typeof o['name'] !== 'string' || typeof o['source'] !== 'string') throw new Error(`${at} needs string name and source`);
    for (const k of ['ref', 'repo_path'] as const) if (o[k] != null && typeof o[k] !== 'string') throw new Error(`${at}.${k} must be a string`);
    const repoPath = o['repo_path'] as string | null | undefined;
    const problem = repoPath == null ? undefined : repoPathProblem(repoPath);
    if (problem) throw new Error(`${at}: ${problem}`);
    const auto = o['auto_load'] === undefined ? false : o['auto_load'];
    if (typeof auto !== 'boolean' && !(Array.isArray(auto) && auto.every((a) => typeof a === 'string'))) throw new Error(`${at}.auto_load must be true, false or a list of plugin and skill names`);
    return { name: o['name'], source: o['source'], ref: (o['ref'] as string | undefined) ?? null, repo_path: repoPath ?? null, auto_load: auto };
  });
}

/** Registrations by name: the server's, then the request's replacing same-named ones (OpenHands _merge_registered_marketplaces). */
export function mergeRegistrations(server: readonly MarketplaceRegistration[], request: readonly MarketplaceRegistration[]): MarketplaceRegistration[] {
  const byName = new Map<string, MarketplaceRegistration>();
  for (const r of [...server, ...request]) byName.set(r.name, r);
  return [...byName.values()];
}

export const cloneDir = (cfg: ExtensionsConfig) => join(cfg.persistenceDir, 'cache', 'skills', 'public-skills');

function git(cfg: ExtensionsConfig, args: string[], cwd?: string): Promise<string> {
  return new Promise((done, fail) => {
    const child = execFile('git', args, {
      cwd,
      encoding: 'utf8',
      timeout: GIT_TIMEOUT_MS,
      env: { ...process.env, GIT_TERMINAL_PROMPT: '0', GIT_ASKPASS: 'true', SSH_ASKPASS: 'true', ...cfg.gitEnv },
    }, (err, stdout, stderr) => (err ? fail(Object.assign(err, { stderr })) : done(stdout.trim())));
    child.stdin?.end();
  });
}

/** One clone operation at a time per clone directory (OpenHands holds a file lock for the same reason). */
const queues = new Map<string, Promise<unknown>>();
function serialized<T>(key: string, fn: () => Promise<T>): Promise<T> {
  const next = (queues.get(key) ?? Promise.resolve()).then(fn, fn);
  queues.set(key, next.catch(() => undefined));
  return next;
}

/**
 * The clone, fetched at `cfg.ref` and checked out (detached). A failed fetch of an existing clone
 * keeps it as it is (OpenHands' non-strict update, for offline reading) unless `strict` (a sync must
 * not report a refresh that did not happen); a failed first clone leaves nothing. Null on failure;
 * the reason is logged (a URL never carries credentials here: it is the public repository).
 */
export function updateExtensionsRepo(cfg: ExtensionsConfig, opts: { strict?: boolean } = {}): Promise<string | null> {
  const dir = cloneDir(cfg);
  return serialized(dir, async () => {
    const fresh = !existsSync(join(dir, '.git'));
    try {
      if (fresh) {
        rmSync(dir, { recursive: true, force: true });
        mkdirSync(join(dir, '..'), { recursive: true });
        await git(cfg, ['clone', '--quiet', '--depth', '1', '--no-checkout', '--', cfg.repoUrl, dir]);
      }
      try {
        await git(cfg, ['fetch', '--quiet', '--depth', '1', 'origin', cfg.ref], dir);
      } catch (err) {
        if (fresh || opts.strict) throw err;
        log.warn({ reason: reason(err) }, 'extensions repository could not be fetched; using the cached copy');
        return dir;
      }
      await git(cfg, ['checkout', '--quiet', '--force', '--detach', 'FETCH_HEAD'], dir);
      return dir;
    } catch (err) {
      if (fresh) rmSync(dir, { recursive: true, force: true });
      log.warn({ ref: cfg.ref, reason: reason(err) }, 'extensions repository unavailable');
      return null;
    }
  });
}

function reason(err: unknown): string {
  const e = err as { stderr?: string; message?: string; code?: string };
  if (e.code === 'ENOENT') return 'git is not installed';
  return String(e.stderr || e.message || err).trim().split('\n').filter(Boolean).slice(-2).join(' ');
}

/** A commit id names one tree for good: its skills are cached for the server's life (OpenHands' pinned refs). */
const pinned = (ref: string) => /^[0-9a-f]{40}$/i.test(ref);

// ---- marketplace manifests ---------------------------------------------------------------------

export interface MarketplaceEntry {
  name: string;
  source: string | { source: string; repo?: string; url?: string; ref?: string; path?: string };
  description: string | null;
}
export interface Marketplace {
  name: string;
  /** The marketplace directory (relative sources resolve against it). */
  path: string;
  plugins: MarketplaceEntry[];
  skills: MarketplaceEntry[];
}

export class MarketplaceError extends Error {}

/** A manifest as OpenHands' Marketplace model accepts it: `name`, `owner.name`, entries with name and source. Throws MarketplaceError. */
export function parseMarketplace(data: unknown, path: string): Marketplace {
  const o = data as Record<string, unknown>;
  if (!o || typeof o !== 'object' || Array.isArray(o)) throw new MarketplaceError('the manifest is not a JSON object');
  if (typeof o['name'] !== 'string') throw new MarketplaceError('the manifest has no name');
  const owner = o['owner'] as Record<string, unknown> | undefined;
  if (!owner || typeof owner !== 'object' || typeof owner['name'] !== 'string') throw new MarketplaceError('the manifest has no owner.name');
  const entries = (key: 'plugins' | 'skills', objectSource: boolean): MarketplaceEntry[] => {
    const list = o[key] ?? [];
    if (!Array.isArray(list)) throw new MarketplaceError(`${key} is not a list`);
    return list.map((raw, i) => {
      const e = raw as Record<string, unknown>;
      if (!e || typeof e['name'] !== 'string') throw new MarketplaceError(`${key}[${i}] has no name`);
      const src = e['source'];
      const description = typeof e['description'] === 'string' ? e['description'] : null;
      if (typeof src === 'string') return { name: e['name'], source: src, description };
      if (objectSource && src && typeof src === 'object') {
        const s = src as Record<string, unknown>;
        const str = (k: string) => (typeof s[k] === 'string' ? { [k]: s[k] as string } : {});
        if (typeof s['source'] !== 'string') throw new MarketplaceError(`${key}[${i}].source has no source type`);
        if (s['source'] === 'github' && typeof s['repo'] !== 'string') throw new MarketplaceError("GitHub source requires 'repo' field");
        if (s['source'] === 'url' && typeof s['url'] !== 'string') throw new MarketplaceError("URL source requires 'url' field");
        return { name: e['name'], source: { source: s['source'], ...str('repo'), ...str('url'), ...str('ref'), ...str('path') }, description };
      }
      throw new MarketplaceError(`${key}[${i}] has no source`);
    });
  };
  return { name: o['name'], path, plugins: entries('plugins', true), skills: entries('skills', false) };
}

const MANIFESTS = ['.plugin/marketplace.json', '.claude-plugin/marketplace.json'];

/** `.plugin/marketplace.json` or `.claude-plugin/marketplace.json` of a directory (OpenHands Marketplace.load); undefined when it has neither. */
export function loadMarketplaceDir(dir: string): Marketplace | undefined {
  const file = MANIFESTS.map((m) => join(dir, m)).find((f) => existsSync(f));
  if (!file) return undefined;
  return parseMarketplace(readJson(file), resolve(dir));
}

function readJson(file: string): unknown {
  try {
    return JSON.parse(readFileSync(file, 'utf8'));
  } catch (err) {
    throw new MarketplaceError(`${file} is not valid JSON: ${(err as Error).message}`);
  }
}

/**
 * A plugin entry's coordinates (OpenHands Marketplace.resolve_plugin_source): github → `github:owner/repo`,
 * url → the URL, both with their ref and path; an absolute path or URL as is; a relative one joined
 * to the marketplace directory (leading `.` and `/` dropped, as Python's lstrip("./") does).
 */
export function resolvePluginSource(m: Marketplace, e: MarketplaceEntry): { source: string; ref: string | null; repo_path: string | null } {
  const s = e.source;
  if (typeof s === 'object') {
    if (s.source === 'github' && s.repo) return { source: `github:${s.repo}`, ref: s.ref ?? null, repo_path: s.path ?? null };
    if (s.source === 'url' && s.url) return { source: s.url, ref: s.ref ?? null, repo_path: s.path ?? null };
    throw new MarketplaceError(`Invalid plugin source for '${e.name}': source type '${s.source}' is missing required field`);
  }
  if (s.startsWith('/') || s.startsWith('~') || s.includes('://')) return { source: s, ref: null, repo_path: null };
  return { source: join(m.path, s.replace(/^[./]+/, '')), ref: null, repo_path: null };
}

// ---- public skills -----------------------------------------------------------------------------

const publicCache = new Map<string, { at: number; skills: Skill[] }>();

/** After a sync: the next read parses the repository again. */
export function invalidatePublicSkills(): void {
  publicCache.clear();
}

/** Names the marketplace file lists (its plugins), or undefined when it is missing or invalid. */
function marketplaceNames(repo: string, marketplacePath: string): Set<string> | undefined {
  const file = join(repo, marketplacePath);
  if (!existsSync(file)) return undefined;
  try {
    return new Set(parseMarketplace(readJson(file), repo).plugins.map((p) => p.name));
  } catch (err) {
    log.warn({ file, reason: (err as Error).message }, 'marketplace file skipped');
    return undefined;
  }
}

/**
 * The public skills (OpenHands load_public_skills): `skills/<name>/SKILL.md` and legacy
 * `skills/<name>.md` of the names the marketplace file lists; every skill under skills/ when
 * `marketplacePath` is null or the default file is absent; none when a non-default file is absent.
 * [] when the repository cannot be had (logged); a result is cached for a minute (for good at a
 * pinned commit), an empty one never.
 */
export async function loadPublicSkills(cfg: ExtensionsConfig, marketplacePath: string | null = DEFAULT_MARKETPLACE_PATH, now = Date.now()): Promise<Skill[]> {
  const key = JSON.stringify([cfg.localPath ?? cfg.repoUrl, cfg.ref, marketplacePath, cfg.persistenceDir]);
  const hit = publicCache.get(key);
  if (hit && now - hit.at < PUBLIC_SKILLS_TTL_MS) return [...hit.skills];
  let repo: string | null;
  let isPinned = false;
  if (cfg.localPath) repo = cfg.localPath;
  else {
    repo = await updateExtensionsRepo(cfg);
    isPinned = pinned(cfg.ref);
  }
  if (!repo) return [];
  const skills = readPublicSkills(repo, marketplacePath);
  if (skills.length) publicCache.set(key, { at: isPinned ? Infinity : now, skills });
  return [...skills];
}

function isDir(p: string): boolean {
  try {
    return statSync(p).isDirectory();
  } catch {
    return false;
  }
}

function readPublicSkills(repo: string, marketplacePath: string | null): Skill[] {
  const dir = join(repo, 'skills');
  if (!isDir(dir)) {
    log.warn({ dir }, 'extensions repository has no skills directory');
    return [];
  }
  let files: string[];
  const names = marketplacePath === null ? undefined : marketplaceNames(repo, marketplacePath);
  if (names === undefined && marketplacePath !== null && marketplacePath !== DEFAULT_MARKETPLACE_PATH) {
    log.warn({ marketplacePath }, 'configured marketplace path could not be loaded');
    return [];
  }
  if (names) {
    files = [...names].flatMap((n) => {
      for (const f of [join(dir, n, 'SKILL.md'), join(dir, `${n}.md`)]) if (existsSync(f)) return [f];
      return [];
    });
  } else {
    files = allSkillFiles(dir);
  }
  const out: Skill[] = [];
  for (const f of files) {
    try {
      const text = readFileSync(f, 'utf8');
      out.push(f.endsWith('/SKILL.md') ? agentSkill(f, text, 'public') : legacySkill(f, text, repo, 'public'));
    } catch (err) {
      if (!(err instanceof SkillFileError) && !(err instanceof Error && 'code' in err)) throw err;
      log.warn({ file: f, reason: (err as Error).message }, 'public skill skipped');
    }
  }
  return out;
}

/** SKILL.md folders (any depth), then the other .md files outside them (README.md excluded). */
function allSkillFiles(dir: string): string[] {
  const entries = readdirSync(dir, { withFileTypes: true, recursive: true }).filter((e) => e.isFile()).map((e) => join(e.parentPath, e.name));
  const skillMds = entries.filter((p) => p.endsWith('/SKILL.md')).sort();
  const skillDirs = skillMds.map((p) => p.slice(0, -'SKILL.md'.length));
  const regular = entries.filter((p) => p.toLowerCase().endsWith('.md') && !p.endsWith('/SKILL.md') && !p.endsWith('/README.md') && !skillDirs.some((d) => p.startsWith(d))).sort();
  return [...skillMds, ...regular];
}
