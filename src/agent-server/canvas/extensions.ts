// Installed Canvas extensions: a directory per extension under `<dataDir>/canvas-extensions/installed`,
// and `.installed.json` beside them (what was installed from where, and whether it is enabled).
// The manifest is read and checked again on every use, and every file it names is resolved on disk
// (links followed) and must stay inside the package: a package is sandbox-controlled content.
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { isAbsolute, join, relative, resolve, sep } from 'node:path';
import { homedir, tmpdir } from 'node:os';
import { BadRequest, Conflict, Invalid, type ValidationIssue as Issue } from '../../api/errors.ts';
import { parseValue } from '../../api/events/validate.ts';
import { CANVAS_MANIFEST_FILE, CanvasExtensionManifest, type InstallCanvasExtensionRequest, type InstalledCanvasExtension } from '../../api/agent-server/canvas.ts';
import { git, scrub } from '../git/clone.ts';
import { METADATA_FILE, type InstalledRecord } from '../../agent/extensions/installed.ts';

/** Canvas extensions keep OpenHands' installed-extension record, without the install path. */
type Record_ = Omit<InstalledRecord, 'install_path'>;

const METADATA = METADATA_FILE;

/** `rel` inside `root`, links resolved; undefined when it escapes or is not a regular file. */
export function containedFile(root: string, rel: string): string | undefined {
  try {
    const base = realpathSync(root);
    const file = realpathSync(resolve(base, rel));
    const r = relative(base, file);
    if (r === '' || r.startsWith('..') || isAbsolute(r)) return undefined;
    return statSync(file).isFile() ? file : undefined;
  } catch {
    return undefined;
  }
}

function manifestIssues(m: CanvasExtensionManifest): Issue[] {
  const issues: Issue[] = [];
  const at = (loc: (string | number)[], msg: string) => issues.push({ loc: ['manifest', ...loc], msg, type: 'value_error' });
  const ids = new Set<string>();
  const paths = new Set<string>();
  m.contributes.pages.forEach((p, i) => {
    if (ids.has(p.id)) at(['contributes', 'pages', i, 'id'], `Duplicate page contribution id: '${p.id}'`);
    if (paths.has(p.path)) at(['contributes', 'pages', i, 'path'], `Duplicate page path: '${p.path}'`);
    ids.add(p.id);
    paths.add(p.path);
  });
  if (m.backend) {
    for (const [platform, a] of Object.entries(m.backend.artifacts)) {
      if (!a) continue;
      const loc = ['backend', 'artifacts', platform];
      if (!!a.path === (a.url != null)) at(loc, 'artifact must declare exactly one of path or url');
      if (a.path && (a.path.startsWith('/') || a.path.split('/').includes('..') || !a.path.endsWith('.tar.gz'))) at([...loc, 'path'], 'artifact path must be a relative .tar.gz path');
      if (a.path && a.strip_components) at([...loc, 'strip_components'], 'strip_components is supported only for remote artifacts');
      if (a.url != null) {
        let u: URL | undefined;
        try {
          u = new URL(a.url);
        } catch {
          /* reported below */
        }
        if (!u || u.protocol !== 'https:' || u.username || u.password || u.hash || !u.pathname.endsWith('.tar.gz')) at([...loc, 'url'], 'artifact url must be a credential-free HTTPS .tar.gz URL');
      }
    }
    m.backend.argv.forEach((arg, i) => {
      const unknown = (arg.match(/\{[^{}]+\}/g) ?? []).filter((p) => !['{port}', '{data_dir}', '{artifact_dir}'].includes(p));
      if (unknown.length || arg.includes('\0')) at(['backend', 'argv', i], 'backend argv contains an unsupported placeholder');
    });
    if (!m.backend.argv[0]!.includes('{artifact_dir}')) at(['backend', 'argv', 0], 'backend argv executable must be inside {artifact_dir}');
  }
  return issues;
}

/** The manifest of the package at `dir`, checked (422 with `manifest.*` locations), entrypoint contained. */
export function loadManifest(dir: string): CanvasExtensionManifest {
  const file = join(dir, CANVAS_MANIFEST_FILE);
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(file, 'utf8'));
  } catch (e) {
    const missing = (e as NodeJS.ErrnoException).code === 'ENOENT';
    throw new Invalid([{ loc: ['manifest'], msg: missing ? `No ${CANVAS_MANIFEST_FILE} found at the resolved location. Source plus repo_path must point at the extension's own directory, not the repository root.` : `${CANVAS_MANIFEST_FILE} is not valid JSON`, type: 'value_error' }]);
  }
  // A non-SVG icon is dropped rather than refused (OpenHands): a broken icon must not hide the extension.
  if (raw && typeof raw === 'object' && 'icon' in raw && (typeof raw.icon !== 'string' || !raw.icon.endsWith('.svg'))) delete (raw as { icon?: unknown }).icon;
  const m = parseValue(CanvasExtensionManifest, raw, { prefix: ['manifest'], clean: true });
  const issues = manifestIssues(m);
  if (!containedFile(dir, m.entrypoint)) issues.push({ loc: ['manifest', 'entrypoint'], msg: `entrypoint '${m.entrypoint}' does not resolve to a file inside the extension package`, type: 'value_error' });
  if (issues.length) throw new Invalid(issues);
  return m;
}

/**
 * The manifest with every field, in the manifest's field order (as OpenHands answers it): absent
 * optional values are null inside a backend artifact, and left out at the top (backend, icon).
 */
export function manifestView(m: CanvasExtensionManifest, nulls = true): CanvasExtensionManifest {
  const backend = m.backend && {
    schema_version: 1 as const,
    artifacts: Object.fromEntries(Object.entries(m.backend.artifacts).flatMap(([k, a]) => (a ? [[k, { path: a.path, ...(a.url != null || nulls ? { url: a.url ?? null } : {}), sha256: a.sha256, strip_components: a.strip_components }]] : []))),
    argv: m.backend.argv,
    health: { path: '/health', timeout_seconds: 30, interval_seconds: 0.1, ...m.backend.health },
    inherit_environment: m.backend.inherit_environment,
  };
  return {
    schema_version: 1,
    name: m.name,
    display_name: m.display_name,
    version: m.version,
    description: m.description,
    entrypoint: m.entrypoint,
    contributes: { pages: m.contributes.pages.map((p) => ({ id: p.id, title: p.title, path: p.path })) },
    ...(backend ? { backend } : {}),
    ...(m.icon !== undefined ? { icon: m.icon } : {}),
  } as CanvasExtensionManifest;
}

/**
 * The text a local install's revision is the SHA-256 of: the manifest as pydantic's
 * `model_dump_json(exclude_none=True)` writes it (compact, field order, floats with a decimal
 * point), so that the same package has the same revision on OpenHands and here.
 */
export function canonicalManifest(m: CanvasExtensionManifest): string {
  const FLOAT = '\u0000float:';
  const text = JSON.stringify(manifestView(m, false), (k, v: unknown) => ((k === 'timeout_seconds' || k === 'interval_seconds') && typeof v === 'number' ? `${FLOAT}${Number.isInteger(v) ? `${v}.0` : v}` : v));
  return text.replace(/"\\u0000float:([^"]*)"/g, '$1');
}

export class CanvasExtensions {
  readonly dir: string;

  constructor(dir: string) {
    this.dir = dir;
  }

  #records(): Record<string, Record_> {
    try {
      return JSON.parse(readFileSync(join(this.dir, METADATA), 'utf8')) as Record<string, Record_>;
    } catch {
      return {};
    }
  }

  #save(records: Record<string, Record_>): void {
    mkdirSync(this.dir, { recursive: true });
    const tmp = join(this.dir, `${METADATA}.tmp`);
    writeFileSync(tmp, JSON.stringify(records, null, 2));
    renameSync(tmp, join(this.dir, METADATA));
  }

  packageDir(name: string): string {
    return join(this.dir, name);
  }

  record(name: string): Record_ | undefined {
    const r = this.#records()[name];
    return r && existsSync(this.packageDir(name)) ? r : undefined;
  }

  /** The manifest as it is on disk now; undefined when not installed or no longer valid. */
  manifest(name: string): CanvasExtensionManifest | undefined {
    if (!this.record(name)) return undefined;
    try {
      return loadManifest(this.packageDir(name));
    } catch {
      return undefined;
    }
  }

  describe(name: string): InstalledCanvasExtension | undefined {
    const r = this.record(name);
    const m = r && this.manifest(name);
    return r && { ...r, install_path: this.packageDir(name), manifest: m ? manifestView(m) : null };
  }

  list(): InstalledCanvasExtension[] {
    return Object.keys(this.#records())
      .sort()
      .flatMap((n) => this.describe(n) ?? []);
  }

  setEnabled(name: string, enabled: boolean): boolean {
    const records = this.#records();
    if (!records[name] || !this.record(name)) return false;
    records[name].enabled = enabled;
    this.#save(records);
    return true;
  }

  uninstall(name: string): boolean {
    const records = this.#records();
    if (!records[name]) return false;
    delete records[name];
    this.#save(records);
    rmSync(this.packageDir(name), { recursive: true, force: true });
    return true;
  }

  /** The entrypoint bundle or icon, contained in the package (checked on every request). */
  bundle(name: string): string | undefined {
    const m = this.manifest(name);
    return m && containedFile(this.packageDir(name), m.entrypoint);
  }

  icon(name: string): string | undefined {
    const m = this.manifest(name);
    return m?.icon ? containedFile(this.packageDir(name), m.icon) : undefined;
  }

  /**
   * Fetches `source` (a local directory, a git URL or `github:owner/repo`), checks its manifest and
   * copies it in. Links are copied as links (never followed at copy time), and are resolved and
   * contained at every use. A new install is disabled; a forced reinstall keeps the enabled state.
   */
  async install(req: InstallCanvasExtensionRequest): Promise<InstalledCanvasExtension> {
    const scratch = mkdtempSync(join(tmpdir(), 'canvas-ext-'));
    try {
      const { root, resolvedRef } = await fetchSource(req, scratch);
      const dir = req.repo_path ? subdir(root, req.repo_path) : root;
      const m = loadManifest(dir);
      const target = this.packageDir(m.name);
      const records = this.#records();
      const previous = records[m.name] && existsSync(target) ? records[m.name] : undefined;
      if (existsSync(target) && !req.force) throw new Conflict('Canvas extension already installed. Use force=true to overwrite.');
      mkdirSync(this.dir, { recursive: true });
      const staged = mkdtempSync(join(this.dir, `.staging-${m.name}-`));
      try {
        cpSync(dir, staged, { recursive: true, verbatimSymlinks: true, filter: (src) => !src.split(sep).includes('.git') });
      } catch (e) {
        rmSync(staged, { recursive: true, force: true });
        // A socket, a FIFO or a device in the package, or an unreadable file: the package is refused.
        throw new Invalid([{ loc: ['body', 'source'], msg: `The extension package cannot be copied: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`, type: 'value_error' }]);
      }
      rmSync(target, { recursive: true, force: true });
      renameSync(staged, target);
      records[m.name] = { name: m.name, version: m.version, description: m.description, enabled: previous?.enabled ?? false, source: req.source, requested_ref: req.ref ?? null, resolved_ref: resolvedRef, repo_path: req.repo_path ?? null, installed_at: new Date().toISOString() };
      this.#save(records);
      return this.describe(m.name)!;
    } finally {
      rmSync(scratch, { recursive: true, force: true });
    }
  }
}

function subdir(root: string, repoPath: string): string {
  const dir = resolve(root, repoPath);
  const r = relative(root, dir);
  if (isAbsolute(repoPath) || r.startsWith('..') || !existsSync(dir) || !statSync(dir).isDirectory()) throw new BadRequest(`Could not read canvas extension source: repo_path '${repoPath}' is not a directory of the source`);
  return dir;
}

const GITHUB = /^github:([\w.-]+)\/([\w.-]+)$/;

async function fetchSource(req: InstallCanvasExtensionRequest, scratch: string): Promise<{ root: string; resolvedRef: string | null }> {
  const gh = GITHUB.exec(req.source);
  const isGit = gh || /^(https?|ssh|git|file):\/\//.test(req.source) || /^[\w.-]+@[\w.-]+:/.test(req.source);
  if (!isGit) {
    const path = req.source.startsWith('~/') ? join(homedir(), req.source.slice(2)) : resolve(req.source);
    if (!existsSync(path) || !statSync(path).isDirectory()) throw new BadRequest(`Could not read canvas extension source: local path '${req.source}' is not a directory`);
    if (req.ref) throw new BadRequest('Could not read canvas extension source: ref applies to git sources only');
    return { root: path, resolvedRef: null };
  }
  const url = gh ? `https://github.com/${gh[1]}/${gh[2]}.git` : req.source;
  const root = join(scratch, 'repo');
  try {
    await git(['clone', '--quiet', '--', url, root], scratch, undefined, 120_000);
    if (req.ref) await git(['checkout', '--quiet', '--detach', req.ref], root);
    const sha = (await git(['rev-parse', 'HEAD'], root)).trim();
    return { root, resolvedRef: sha };
  } catch (e) {
    const why = scrub(String((e as { stderr?: string }).stderr ?? (e as Error).message).trim().split('\n').slice(-2).join(' '), undefined);
    throw new BadRequest(`Could not read canvas extension source: ${why}`);
  }
}
