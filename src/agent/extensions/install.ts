// Installing, updating, enabling and removing skills and plugins in their install store
// (installed.ts), as OpenHands' InstallationManager does, with a source that is untrusted content:
//   - fetched by fetchPlugin (src/agent/plugins/source.ts: a local path, a git URL or
//     `github:owner/repo[/path]`, `ref`, `repo_path` kept inside the repository; git without hooks,
//     prompts or credential helpers) into a scratch directory, never the workspace;
//   - copied with links kept as links (OpenHands' copytree follows them, so a link to /etc/passwd
//     would be copied as its content), `.git` left out, into a staging directory beside the store;
//   - every link checked to resolve inside the copy (else 422), and only then read by the loader,
//     so no file outside the package is ever read or answered;
//   - named by what the loader finds (kebab-case, or 422), and renamed into place: a failed install
//     or refresh leaves the installed copy as it was.
// Installs of one store run one at a time (one metadata file).
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readlinkSync, realpathSync, renameSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, isAbsolute, join, relative, sep } from 'node:path';
import { fetchPlugin, parseSource, PluginFetchError } from '../plugins/source.ts';
import { getInstalled, isExtensionName, listInstalled, readRecords, writeRecords, type ExtensionLoader, type InstalledRecord } from './installed.ts';

/** The source could not be fetched (unreachable, unknown ref, missing path, repo_path outside): OpenHands answers 400. */
export class ExtensionFetchError extends Error {}
/** The source holds no valid extension of the kind (or an invalid name, or a link out of the package): 422. */
export class ExtensionInvalidError extends Error {}
/** Already installed and `force` not set: 409. */
export class ExtensionExistsError extends Error {}

export interface InstallRequest {
  source: string;
  ref?: string | null | undefined;
  repo_path?: string | null | undefined;
  force?: boolean | undefined;
}

/** OpenHands extract_repo_name: the last path component of a git URL, sanitized, at most 32 characters. */
export function repoName(url: string): string {
  let name = url.replace(/^(github:|https?:\/\/|git:\/\/|file:\/\/)/, '');
  const colon = name.indexOf(':');
  if (name.includes('@') && colon >= 0 && !name.slice(0, colon).includes('/')) name = name.slice(colon + 1);
  name = name.replace(/\/+$/, '').replace(/\.git$/, '');
  name = name.slice(name.lastIndexOf('/') + 1);
  name = name.replace(/[^a-zA-Z0-9_-]/g, '-').replace(/-+/g, '-').replace(/^-|-$/g, '');
  return name ? name.slice(0, 32) : 'repo';
}

/** Every symbolic link under `root` that does not resolve (links followed) to a path inside it. */
export function escapingLinks(root: string): string[] {
  const base = realpathSync(root);
  const bad: string[] = [];
  const walk = (dir: string): void => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      const p = join(dir, e.name);
      if (e.isSymbolicLink()) {
        let target: string | undefined;
        try {
          target = realpathSync(p);
        } catch {
          target = undefined; // dangling, or a loop
        }
        const r = target === undefined ? '..' : relative(base, target);
        if (r === '..' || r.startsWith(`..${sep}`) || isAbsolute(r)) bad.push(`${relative(root, p)} -> ${readlinkSync(p)}`);
      } else if (e.isDirectory()) walk(p);
    }
  };
  walk(root);
  return bad;
}

export class ExtensionStore {
  readonly dir: string;
  readonly #load: ExtensionLoader;
  readonly #what: string;
  readonly #workspaceDir: string;
  #queue: Promise<unknown> = Promise.resolve();

  /** `what`: 'skill' or 'plugin', for messages; `workspaceDir`: what a relative local source is taken relative to. */
  constructor(dir: string, load: ExtensionLoader, opts: { what: string; workspaceDir: string }) {
    this.dir = dir;
    this.#load = load;
    this.#what = opts.what;
    this.#workspaceDir = opts.workspaceDir;
  }

  list(): InstalledRecord[] {
    return listInstalled(this.dir, this.#load);
  }

  get(name: string): InstalledRecord | undefined {
    return getInstalled(this.dir, name);
  }

  /** false when not installed (OpenHands reconciles first, so a directory copied in by hand can be enabled). */
  setEnabled(name: string, enabled: boolean): Promise<boolean> {
    return this.#serial(async () => {
      if (!this.list().some((r) => r.name === name)) return false;
      const records = readRecords(this.dir);
      records[name]!.enabled = enabled;
      writeRecords(this.dir, records);
      return true;
    });
  }

  /** Only a tracked extension is removed (never an arbitrary directory of the store); false when not tracked. */
  uninstall(name: string): Promise<boolean> {
    return this.#serial(async () => {
      if (!isExtensionName(name)) return false;
      const records = readRecords(this.dir);
      if (!records[name]) return false;
      rmSync(join(this.dir, name), { recursive: true, force: true });
      delete records[name];
      writeRecords(this.dir, records);
      return true;
    });
  }

  install(req: InstallRequest): Promise<InstalledRecord> {
    return this.#serial(() => this.#install(req));
  }

  /**
   * Fetched again from the recorded source and repo_path at its newest (OpenHands update: the ref
   * asked for at install time is not reused), keeping the name and the enabled state. undefined when
   * not installed.
   */
  update(name: string): Promise<InstalledRecord | undefined> {
    return this.#serial(async () => {
      const current = this.get(name);
      if (!current) return undefined;
      // Decision: a source that now holds an extension of another name is refused (422) and the
      // installed copy kept; OpenHands would install the new name beside the old one.
      return this.#install({ source: current.source, ref: null, repo_path: current.repo_path, force: true }, name);
    });
  }

  #serial<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.#queue.then(fn, fn);
    this.#queue = run.catch(() => undefined);
    return run;
  }

  async #install(req: InstallRequest, rootName?: string): Promise<InstalledRecord> {
    const source = req.source.trim();
    const scratch = mkdtempSync(join(tmpdir(), 'agentyard-install-'));
    mkdirSync(this.dir, { recursive: true });
    const staging = mkdtempSync(join(this.dir, '.staging-'));
    try {
      let parsed: ReturnType<typeof parseSource>;
      let fetched: Awaited<ReturnType<typeof fetchPlugin>>;
      try {
        parsed = parseSource(source, this.#workspaceDir);
        fetched = await fetchPlugin({ source, ref: req.ref, repo_path: req.repo_path }, { cacheDir: scratch, baseDir: this.#workspaceDir });
      } catch (err) {
        if (err instanceof PluginFetchError) throw new ExtensionFetchError(err.message.replace(/^Plugin/, this.#what[0]!.toUpperCase() + this.#what.slice(1)));
        throw err;
      }
      // The directory the loader sees is named as OpenHands names it: a repository root after the
      // repository (or the installed name, on update); anything else after its own directory.
      const whole = parsed.kind === 'git' && !req.repo_path && !parsed.subdir;
      // (A local repository with a ref is fetched as a clone: its directory name is the source's.)
      const loadName = parsed.kind === 'git' ? (whole ? (rootName ?? repoName(parsed.url)) : basename(fetched.dir)) : basename(req.repo_path ? join(parsed.path, req.repo_path) : parsed.path);
      const staged = join(staging, loadName && loadName !== '.' ? loadName : 'source');
      try {
        // The directory itself, not a link to it (a local source may be given by a link).
        cpSync(realpathSync(fetched.dir), staged, { recursive: true, verbatimSymlinks: true, filter: (src) => basename(src) !== '.git' });
      } catch (err) {
        // A socket, FIFO or device, or an unreadable file.
        throw new ExtensionInvalidError(`The ${this.#what} cannot be copied: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
      }
      const links = escapingLinks(staged);
      if (links.length) throw new ExtensionInvalidError(`The ${this.#what} has links that lead outside it: ${links.slice(0, 5).join(', ')}`);
      let meta;
      try {
        meta = this.#load(staged);
      } catch (err) {
        throw new ExtensionInvalidError(`Invalid ${this.#what}: ${(err as Error).message}`);
      }
      if (rootName !== undefined && meta.name !== rootName) throw new ExtensionInvalidError(`The source now holds the ${this.#what} '${meta.name}', not '${rootName}'`);
      if (!isExtensionName(meta.name)) throw new ExtensionInvalidError(`Invalid ${this.#what} name '${meta.name}': expected kebab-case (lowercase letters, digits and single hyphens)`);
      const target = join(this.dir, meta.name);
      if (existsSync(target) && !req.force) throw new ExtensionExistsError(`${this.#what} '${meta.name}' is already installed`);
      if (existsSync(target)) renameSync(target, join(staging, '.previous'));
      renameSync(staged, target);
      const records = readRecords(this.dir);
      const record: InstalledRecord = {
        ...meta,
        // A forced reinstall keeps the enabled state (OpenHands).
        enabled: records[meta.name]?.enabled ?? true,
        source: req.source,
        requested_ref: req.ref ?? null,
        resolved_ref: fetched.commit,
        repo_path: req.repo_path ?? null,
        installed_at: new Date().toISOString(),
        install_path: target,
      };
      records[meta.name] = record;
      writeRecords(this.dir, records);
      return record;
    } finally {
      rmSync(staging, { recursive: true, force: true });
      rmSync(scratch, { recursive: true, force: true });
    }
  }
}
