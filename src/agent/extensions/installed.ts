// Reading the install stores of skills and plugins (OpenHands sdk/extensions/installation): a
// directory per installed extension under `~/.openhands/<kind>/installed/`, and `.installed.json`
// beside them, `{"extensions": {name: record}}` in OpenHands' format, so a home used by both servers
// reads the same. Whatever lists what is installed (the install routes, the loaders of user skills
// and plugins, the extensions catalogs' `installed` flags) reads through here.
//
// As OpenHands' `list_installed`, a listing reconciles the file with the disk: a record whose
// directory is gone is dropped, and a directory copied in by hand whose extension loads under its
// directory's name is adopted (source `local`). Writing is in install.ts.
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { createLogger } from '../../util/log.ts';

const log = createLogger('extensions');

export type ExtensionKind = 'skills' | 'plugins';

/** OpenHands' installed-extension name rule (kebab-case); also what makes a name safe as a directory name. */
export const EXTENSION_NAME_PATTERN = '^[a-z0-9]+(?:-[a-z0-9]+)*$';
const NAME = new RegExp(EXTENSION_NAME_PATTERN);
export const isExtensionName = (name: string): boolean => name.length <= 255 && NAME.test(name);

/** One installed extension, as `.installed.json` keeps it (OpenHands InstallationInfo). */
export interface InstalledRecord {
  name: string;
  version: string;
  description: string;
  enabled: boolean;
  source: string;
  requested_ref: string | null;
  resolved_ref: string | null;
  repo_path: string | null;
  installed_at: string;
  install_path: string;
}

/** What a loader says about an extension directory; throws when it holds none. */
export interface ExtensionMeta {
  name: string;
  version: string;
  description: string;
}
export type ExtensionLoader = (dir: string) => ExtensionMeta;

export const METADATA_FILE = '.installed.json';

/**
 * `<persistence>/<kind>/installed`, persistence being OH_PERSISTENCE_DIR or else `~/.openhands` (as
 * OpenHands); `home` (tests, isolated servers) replaces the user's home and wins over the variable.
 */
export function installedDir(kind: ExtensionKind, home?: string): string {
  return join(persistenceDir(home), kind, 'installed');
}

/** OH_PERSISTENCE_DIR, else `~/.openhands`; `home` given: `<home>/.openhands`. */
export function persistenceDir(home?: string): string {
  const env = process.env['OH_PERSISTENCE_DIR'];
  return resolve(home !== undefined ? join(home, '.openhands') : env ? env : join(homedir(), '.openhands'));
}

/** The records as stored (OpenHands' legacy `plugins` / `skills` keys merged in); {} when none or unreadable. */
export function readRecords(dir: string): Record<string, InstalledRecord> {
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(join(dir, METADATA_FILE), 'utf8'));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') log.warn({ dir, err: (err as Error).message }, 'installed-extension metadata unreadable; treated as empty');
    return {};
  }
  if (!raw || typeof raw !== 'object') return {};
  const o = raw as Record<string, unknown>;
  const merged: Record<string, unknown> = {};
  for (const key of ['plugins', 'skills', 'extensions']) if (o[key] && typeof o[key] === 'object') Object.assign(merged, o[key]);
  const out: Record<string, InstalledRecord> = {};
  for (const [name, r] of Object.entries(merged)) {
    if (!r || typeof r !== 'object') continue;
    const v = r as Record<string, unknown>;
    const s = (k: string, d = ''): string => (typeof v[k] === 'string' ? (v[k] as string) : d);
    const n = (k: string): string | null => (typeof v[k] === 'string' ? (v[k] as string) : null);
    out[name] = { name: s('name', name), version: s('version'), description: s('description'), enabled: v['enabled'] !== false, source: s('source', 'local'), requested_ref: n('requested_ref'), resolved_ref: n('resolved_ref'), repo_path: n('repo_path'), installed_at: s('installed_at'), install_path: s('install_path', join(dir, name)) };
  }
  return out;
}

/** Written whole through a temporary file and a rename, so a reader never sees half a file. */
export function writeRecords(dir: string, records: Record<string, InstalledRecord>): void {
  mkdirSync(dir, { recursive: true });
  const tmp = join(dir, `${METADATA_FILE}.${process.pid}.tmp`);
  writeFileSync(tmp, JSON.stringify({ extensions: records }, null, 2));
  renameSync(tmp, join(dir, METADATA_FILE));
}

const isDir = (p: string): boolean => {
  try {
    return statSync(p).isDirectory();
  } catch {
    return false;
  }
};

/**
 * Every installed extension (enabled and disabled), the file reconciled with the disk as OpenHands
 * does: tracked ones first (in the file's order), then adopted directories (sorted). Nothing is
 * created when the directory does not exist.
 */
export function listInstalled(dir: string, load: ExtensionLoader): InstalledRecord[] {
  if (!isDir(dir)) return [];
  const records = readRecords(dir);
  let changed = false;
  for (const name of Object.keys(records)) {
    if (!isExtensionName(name) || !isDir(join(dir, name))) {
      delete records[name];
      changed = true;
    }
  }
  for (const entry of readdirSync(dir).sort()) {
    if (entry.startsWith('.') || records[entry] || !isExtensionName(entry) || !isDir(join(dir, entry))) continue;
    try {
      const meta = load(join(dir, entry));
      if (meta.name !== entry) continue;
      records[entry] = { ...meta, enabled: true, source: 'local', requested_ref: null, resolved_ref: null, repo_path: null, installed_at: new Date().toISOString(), install_path: join(dir, entry) };
      changed = true;
    } catch {
      // Not an extension of this kind: left alone, as OpenHands does.
    }
  }
  if (changed) writeRecords(dir, records);
  return Object.values(records);
}

/** One installed extension; undefined when it is not tracked or its directory is gone (no reconciling, as OpenHands' `get`). */
export function getInstalled(dir: string, name: string): InstalledRecord | undefined {
  const r = readRecords(dir)[name];
  return r && isExtensionName(name) && existsSync(join(dir, name)) ? r : undefined;
}

/** The names of the installed extensions of a kind (for `installed` flags of catalogs). */
export function installedNames(kind: ExtensionKind, home?: string): Set<string> {
  const dir = installedDir(kind, home);
  return new Set(Object.keys(readRecords(dir)).filter((n) => isExtensionName(n) && isDir(join(dir, n))));
}

/** The directories of the enabled installed extensions, in listing order (what the loaders of user skills and plugins read). */
export function enabledInstalledDirs(dir: string, load: ExtensionLoader): string[] {
  return listInstalled(dir, load)
    .filter((r) => r.enabled)
    .map((r) => join(dir, r.name));
}
