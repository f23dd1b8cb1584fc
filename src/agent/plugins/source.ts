// Where a plugin comes from (OpenHands PluginSource): `github:owner/repo`, any git URL, or a local
// path; `ref` (branch, tag or commit) and `repo_path` (a subdirectory, for monorepos). Git sources
// are cloned with the git binary into a directory of the agent (never the workspace), without
// blocking the agent server: a conversation's plugins load in the background from its creation on.
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, realpathSync, rmSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import { isAbsolute, join, normalize, relative, resolve, sep } from 'node:path';

/** A plugin that cannot be fetched: unreachable repository, unknown ref, bad repo_path. Safe to show (no credentials). */
export class PluginFetchError extends Error {}

export interface PluginSourceSpec {
  source: string;
  ref?: string | null | undefined;
  repo_path?: string | null | undefined;
}

export type ParsedSource = { kind: 'local'; path: string } | { kind: 'git'; url: string; subdir?: string };

/** How long one git command may take (a clone of an unreachable host fails sooner). */
const GIT_TIMEOUT_MS = 120_000;

/** `github:owner/repo` → its HTTPS clone URL; a git URL as is; anything else is a local path. */
export function parseSource(source: string, baseDir: string): ParsedSource {
  // `github:owner/repo/sub/dir` names a plugin inside a repository (OpenHands examples use it).
  const gh = /^github:([A-Za-z0-9_.-]+)\/([A-Za-z0-9_.-]+?)(?:\.git)?(?:\/(.+))?$/.exec(source);
  if (source.startsWith('github:')) {
    if (!gh) throw new PluginFetchError(`Plugin source '${source}' is not of the form github:owner/repo`);
    return { kind: 'git', url: `https://github.com/${gh[1]}/${gh[2]}.git`, ...(gh[3] ? { subdir: gh[3] } : {}) };
  }
  if (/^(https?|ssh|git|file):\/\//.test(source) || /^[\w.-]+@[\w.-]+:/.test(source)) return { kind: 'git', url: source };
  const path = source.startsWith('~/') ? join(homedir(), source.slice(2)) : resolve(baseDir, source);
  return { kind: 'local', path };
}

/** repo_path must stay inside the repository: relative, no `..` segment. Returns the normalized path ('' for none). */
export function checkRepoPath(repoPath: string | null | undefined): string {
  if (!repoPath) return '';
  const segments = repoPath.split(/[\\/]+/);
  if (isAbsolute(repoPath) || /^[A-Za-z]:/.test(repoPath) || segments.includes('..')) {
    throw new PluginFetchError(`repo_path '${repoPath}' must be a relative path inside the repository (no leading '/', no '..')`);
  }
  return normalize(segments.filter((s) => s && s !== '.').join(sep));
}

/** The URL without user name or password, for messages. */
export function redactUrl(url: string): string {
  return url.replace(/^([a-z+]+:\/\/)[^@/]*@/i, '$1');
}

function git(args: string[], cwd: string | undefined, signal: AbortSignal | undefined): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = execFile(
      'git',
      // The repository is untrusted: no hook it could bring (or a hooksPath of the user's config) runs.
      ['-c', 'core.hooksPath=/dev/null', ...args],
      {
        cwd,
        encoding: 'utf8',
        timeout: GIT_TIMEOUT_MS,
        ...(signal ? { signal } : {}),
        // Never ask for credentials on a terminal; never read the user's git config for credential helpers.
        env: { ...process.env, GIT_TERMINAL_PROMPT: '0', GIT_ASKPASS: 'true', SSH_ASKPASS: 'true', GIT_SSH_COMMAND: 'ssh -o BatchMode=yes' },
      },
      (err, stdout, stderr) => (err ? reject(Object.assign(err, { stderr })) : resolve(stdout.trim())),
    );
    child.stdin?.end();
  });
}

function gitError(err: unknown): string {
  const e = err as { stderr?: string | Buffer; message?: string; code?: string };
  if (e.code === 'ENOENT') return 'git is not installed';
  const text = (e.stderr ? String(e.stderr) : e.message ?? String(err)).trim();
  return redactUrl(text.split('\n').filter(Boolean).slice(-3).join(' ')).replace(/(https?:\/\/)[^@\s/]*@/g, '$1');
}

/** A tag or commit as given; a branch other than the default one exists only as origin/<branch> in a fresh clone. */
async function checkout(root: string, ref: string, signal: AbortSignal | undefined): Promise<void> {
  try {
    await git(['checkout', '--quiet', '--detach', ref, '--'], root, signal);
  } catch (err) {
    try {
      await git(['checkout', '--quiet', '--detach', `origin/${ref}`, '--'], root, signal);
    } catch {
      throw err;
    }
  }
}

export interface FetchedPlugin {
  /** The plugin's directory (repo_path applied). */
  dir: string;
  /** The commit checked out (git sources), for the record. */
  commit: string | null;
}

/**
 * Makes the plugin available on disk: a local path is used in place; a git source is cloned into
 * `cacheDir` (one directory per source and ref) and `ref` checked out. Rejects with PluginFetchError,
 * also when `signal` aborts it.
 */
export async function fetchPlugin(spec: PluginSourceSpec, opts: { cacheDir: string; baseDir: string; signal?: AbortSignal }): Promise<FetchedPlugin> {
  const signal = opts.signal;
  const parsed = parseSource(spec.source, opts.baseDir);
  const sub = checkRepoPath(spec.repo_path || (parsed.kind === 'git' ? parsed.subdir : undefined));
  let root: string;
  let commit: string | null = null;
  if (parsed.kind === 'local') {
    if (!existsSync(parsed.path)) throw new PluginFetchError(`Plugin source '${spec.source}' does not exist on this machine`);
    root = parsed.path;
    if (spec.ref) {
      // A local git repository with a ref: use that ref in a clone of its own, never touching the original.
      return fetchPlugin({ ...spec, source: `file://${parsed.path}` }, opts);
    }
  } else {
    const key = createHash('sha256').update(`${parsed.url}\n${spec.ref ?? ''}`).digest('hex').slice(0, 16);
    root = join(opts.cacheDir, key);
    const shown = redactUrl(parsed.url);
    if (!existsSync(join(root, '.git'))) {
      rmSync(root, { recursive: true, force: true });
      mkdirSync(opts.cacheDir, { recursive: true });
      try {
        await git(['clone', '--quiet', '--no-checkout', '--', parsed.url, root], undefined, signal);
      } catch (err) {
        rmSync(root, { recursive: true, force: true });
        throw new PluginFetchError(`Plugin repository ${shown} could not be cloned: ${gitError(err)}`);
      }
      try {
        // A branch, tag or commit; without ref, the default branch.
        await checkout(root, spec.ref || 'HEAD', signal);
      } catch (err) {
        rmSync(root, { recursive: true, force: true });
        throw new PluginFetchError(`Plugin repository ${shown} has no ref '${spec.ref}': ${gitError(err)}`);
      }
    }
    commit = await git(['rev-parse', 'HEAD'], root, signal);
  }
  const dir = sub ? join(root, sub) : root;
  if (!existsSync(dir) || !statSync(dir).isDirectory()) throw new PluginFetchError(`Plugin source '${spec.source}' has no directory '${sub || '.'}'`);
  // repo_path has no '..', but a link in the repository could still lead it out (to the server's files).
  if (sub) {
    const r = relative(realpathSync(root), realpathSync(dir));
    if (r === '..' || r.startsWith(`..${sep}`) || isAbsolute(r)) throw new PluginFetchError(`repo_path '${sub}' leads outside the repository (through a link)`);
  }
  return { dir, commit };
}
