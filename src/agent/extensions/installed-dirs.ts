// Which skills and plugins are installed, read from the directories OpenHands 1.58.2 installs into
// (sdk/extensions/installation): `<persistence>/skills/installed/<name>/` and
// `<persistence>/plugins/installed/<name>/`, with a `.installed.json` ({"extensions": {name: info}},
// older files use "skills"/"plugins" keys) recording what was installed. The marketplace catalogs'
// `installed` flags come from here; the install/uninstall/enable routes write these directories.
// OpenHands' list_installed reconciles the record with the disk: a recorded name whose directory
// is gone does not count, and a kebab-case directory holding a valid extension of its own name
// counts even when unrecorded. Read-only here (the writer owns the record).
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { loadPluginDir } from '../plugins/load.ts';
import { agentSkill } from '../skills/parse.ts';

export type ExtensionKind = 'skills' | 'plugins';

const NAME = /^[a-z0-9]+(-[a-z0-9]+)*$/;

/** `<persistence>/skills/installed` or `<persistence>/plugins/installed`. */
export function installedDir(persistenceDir: string, kind: ExtensionKind): string {
  return join(persistenceDir, kind, 'installed');
}

/** The recorded entries of `.installed.json` (legacy keys merged under `extensions`, which wins). */
export function installedRecord(dir: string): Record<string, Record<string, unknown>> {
  const file = join(dir, '.installed.json');
  if (!existsSync(file)) return {};
  try {
    const data = JSON.parse(readFileSync(file, 'utf8')) as Record<string, Record<string, Record<string, unknown>> | undefined>;
    return { ...data['plugins'], ...data['skills'], ...data['extensions'] };
  } catch {
    return {}; // OpenHands reads an unreadable record as empty too
  }
}

function isDir(p: string): boolean {
  try {
    return statSync(p).isDirectory();
  } catch {
    return false;
  }
}

/** The name the directory's extension declares, or undefined when it does not load. */
function declaredName(path: string, kind: ExtensionKind): string | undefined {
  try {
    if (kind === 'plugins') return loadPluginDir(path).name;
    const md = readdirSync(path).find((f) => f.toLowerCase() === 'skill.md');
    if (!md) return undefined;
    return agentSkill(join(path, md), readFileSync(join(path, md), 'utf8'), 'installed', false).name;
  } catch {
    return undefined;
  }
}

/** Names installed in `dir` (enabled or not), as OpenHands' list_installed counts them. */
export function installedNames(dir: string, kind: ExtensionKind): Set<string> {
  const names = new Set<string>();
  if (!isDir(dir)) return names;
  for (const name of Object.keys(installedRecord(dir))) if (NAME.test(name) && existsSync(join(dir, name))) names.add(name);
  for (const entry of readdirSync(dir).sort()) {
    if (entry.startsWith('.') || names.has(entry) || !NAME.test(entry) || !isDir(join(dir, entry))) continue;
    if (declaredName(join(dir, entry), kind) === entry) names.add(entry);
  }
  return names;
}
