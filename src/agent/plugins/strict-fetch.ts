// POST /api/plugins/fetch (OpenHands 1.58 plugin/strict_fetch.py fetch_plugin_strict): a plugin
// source checked and pinned without installing or enabling it. `${VAR}` placeholders of source and
// ref are filled from the request's secrets only (never the environment), and the secret values
// never appear in an answer. A git source is fetched shallowly (`git fetch --depth 1` of the ref)
// with hooks, credential helpers, prompts and the user's and system's git config off, and kept by
// commit in the plugin cache (`<persistence>/cache/plugins/<repo>-<hash>/resolved-refs/<sha>`,
// without .git, links kept as links): a full commit already there is answered without the network.
// A local path is checked in place. Failures carry OpenHands' codes and statuses:
// `{detail: {code, message}}`, 422 (missing_secret, invalid_source, ref_not_found,
// repo_path_not_found, invalid_plugin, auth_failed), 502 source_unavailable, 504 timeout.
import { execFile } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, renameSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, isAbsolute, join, relative, sep } from 'node:path';
import { AgentyardError, type ErrorCode } from '../../api/errors.ts';
import { toSecretSource, type SecretInput } from '../../api/agent-server/policy.ts';
import type { FetchPluginResponse } from '../../api/agent-server/installs.ts';
import { gitEnv } from '../../util/git-credentials.ts';
import { escapingLinks, repoName } from '../extensions/install.ts';
import { loadPluginDir } from './load.ts';
import { checkRepoPath, parseSource, redactUrl } from './source.ts';

const STATUS: Record<string, ErrorCode> = { source_unavailable: 'BadGateway', timeout: 'GatewayTimeout' };

/** A refused source: `{code, message}` as the answer's detail (OpenHands PluginSourceError). */
export class PluginSourceError extends AgentyardError {
  readonly code: ErrorCode;
  constructor(code: string, message: string) {
    super({ code, message });
    this.code = STATUS[code] ?? 'Invalid';
  }
}

const VAR = /\$\{([a-zA-Z_][a-zA-Z0-9_]*)(?::-([^}]*))?\}/g;
const FULL_SHA = /^[0-9a-fA-F]{40}$/;

async function secretValue(input: SecretInput): Promise<string | null> {
  const src = toSecretSource(input);
  if (src.kind === 'StaticSecret') return src.value ?? null;
  try {
    const res = await fetch(src.url, { headers: src.headers ?? {}, signal: AbortSignal.timeout(30_000) });
    return res.ok ? await res.text() : null;
  } catch {
    return null;
  }
}

interface Request {
  source: string;
  ref?: string | null | undefined;
  repo_path?: string | null | undefined;
  secrets?: Record<string, SecretInput> | undefined;
  timeout?: number | undefined;
}

export async function fetchPluginStrict(req: Request, opts: { cacheDir: string; baseDir: string }): Promise<FetchPluginResponse> {
  const names = new Set<string>();
  for (const text of [req.source, req.ref ?? '']) for (const m of text.matchAll(VAR)) names.add(m[1]!);
  const values = new Map<string, string>();
  for (const name of [...names].sort()) {
    const input = req.secrets?.[name];
    const value = input === undefined ? null : await secretValue(input);
    if (value === null) throw new PluginSourceError('missing_secret', `Missing secret: ${name}`);
    values.set(name, value);
  }
  const expand = (t: string) => t.replace(VAR, (_m, name: string) => values.get(name)!);
  const source = expand(req.source).trim();
  const ref = req.ref == null ? null : expand(req.ref);
  const clean = (text: string) => {
    let out = redactUrl(text).replace(/(https?:\/\/)[^@\s/]*@/g, '$1');
    for (const v of values.values()) if (v) out = out.replaceAll(v, '****');
    return out;
  };

  let parsed: ReturnType<typeof parseSource>;
  try {
    parsed = parseSource(source, opts.baseDir);
  } catch {
    throw new PluginSourceError('invalid_source', 'Invalid plugin source.');
  }
  // OpenHands takes a bare word (no '/', not starting with '/', '~' or '.') for no source at all.
  if (parsed.kind === 'local' && !/^[/~.]/.test(source) && !source.includes('/')) throw new PluginSourceError('invalid_source', 'Invalid plugin source.');
  let repoPath: string;
  try {
    repoPath = checkRepoPath(req.repo_path ?? (parsed.kind === 'git' ? parsed.subdir : undefined));
  } catch {
    throw new PluginSourceError('repo_path_not_found', `repo_path not found: ${req.repo_path}`);
  }

  let root: string;
  let resolvedRef: string | null = null;
  if (parsed.kind === 'local') {
    root = parsed.path;
  } else {
    const cacheRoot = join(opts.cacheDir, `${repoName(parsed.url)}-${createHash('sha256').update(parsed.url).digest('hex').slice(0, 16)}`, 'resolved-refs');
    if (ref && FULL_SHA.test(ref) && existsSync(join(cacheRoot, ref.toLowerCase()))) {
      resolvedRef = ref.toLowerCase();
    } else {
      const work = mkdtempSync(join(tmpdir(), 'agentyard-plugin-fetch-'));
      try {
        const repo = join(work, 'repo');
        mkdirSync(repo);
        const timeoutMs = (req.timeout ?? 60) * 1000;
        const git = (args: string[], fallback: string) => runGit(args, repo, timeoutMs, fallback, clean);
        await git(['init', '--quiet'], 'source_unavailable');
        await git(['remote', 'add', 'origin', parsed.url], 'source_unavailable');
        await git(['fetch', '--quiet', '--depth', '1', 'origin', ref || 'HEAD'], ref ? 'ref_not_found' : 'source_unavailable');
        const sha = (await git(['rev-parse', 'FETCH_HEAD^{commit}'], 'ref_not_found')).trim();
        if (!FULL_SHA.test(sha)) throw new PluginSourceError('ref_not_found', `Ref not found: ${ref || 'HEAD'}`);
        await git(['checkout', '--quiet', '--detach', sha], 'ref_not_found');
        resolvedRef = sha.toLowerCase();
        const target = join(cacheRoot, resolvedRef);
        if (!existsSync(target)) {
          mkdirSync(cacheRoot, { recursive: true });
          const tmp = join(cacheRoot, `.${resolvedRef}.${randomBytes(4).toString('hex')}.tmp`);
          cpSync(repo, tmp, { recursive: true, verbatimSymlinks: true, filter: (p) => basename(p) !== '.git' });
          try {
            renameSync(tmp, target);
          } catch {
            rmSync(tmp, { recursive: true, force: true }); // another fetch of the same commit finished first
          }
        }
      } finally {
        rmSync(work, { recursive: true, force: true });
      }
    }
    root = join(cacheRoot, resolvedRef!);
  }
  const dir = repoPath ? join(root, repoPath) : root;
  if (repoPath && (!isDirectory(dir) || !inside(root, dir))) throw new PluginSourceError('repo_path_not_found', `repo_path not found: ${req.repo_path}`);

  const manifest = readManifest(dir, clean);
  // Untrusted content: nothing of it is read through a link that leads outside it.
  const links = isDirectory(dir) ? escapingLinks(dir) : [];
  if (links.length) throw new PluginSourceError('invalid_plugin', `Invalid plugin: links lead outside it: ${links.slice(0, 5).join(', ')}`);
  let plugin;
  try {
    plugin = loadPluginDir(dir);
  } catch (err) {
    throw new PluginSourceError('invalid_plugin', `Invalid plugin: ${clean((err as Error).message)}`);
  }
  const prefix = `${plugin.name}:`;
  return {
    path: dir,
    resolved_ref: resolvedRef,
    source: req.source,
    repo_path: req.repo_path ?? null,
    manifest,
    skills: plugin.skills.filter((s) => !s.name.startsWith(prefix)).map((s) => s.name),
    commands: plugin.skills.filter((s) => s.name.startsWith(prefix)).map((s) => s.name.slice(prefix.length)),
  };
}

function isDirectory(p: string): boolean {
  try {
    return statSync(p).isDirectory();
  } catch {
    return false;
  }
}

function inside(root: string, p: string): boolean {
  try {
    const r = relative(realpathSync(root), realpathSync(p));
    return r === '' || (!r.startsWith(`..${sep}`) && r !== '..' && !isAbsolute(r));
  } catch {
    return false;
  }
}

/** plugin.json, .plugin/plugin.json or .claude-plugin/plugin.json, as written; it must be a file inside the plugin. */
function readManifest(dir: string, clean: (t: string) => string): Record<string, unknown> {
  for (const rel of ['plugin.json', '.plugin/plugin.json', '.claude-plugin/plugin.json']) {
    const file = join(dir, rel);
    try {
      if (!statSync(file).isFile() || !inside(dir, file)) continue;
    } catch {
      continue;
    }
    let data: unknown;
    try {
      data = JSON.parse(readFileSync(file, 'utf8').replace(/^\uFEFF/, ''));
    } catch (err) {
      throw new PluginSourceError('invalid_plugin', `Invalid plugin manifest: ${clean((err as Error).message)}`);
    }
    if (!data || typeof data !== 'object' || Array.isArray(data)) throw new PluginSourceError('invalid_plugin', 'Invalid plugin manifest: plugin.json must be an object.');
    return data as Record<string, unknown>;
  }
  throw new PluginSourceError('invalid_plugin', 'Invalid plugin: plugin.json not found.');
}

/** OpenHands _classify_git_error. */
function classify(stderr: string, fallback: string): string {
  const s = stderr.toLowerCase();
  if (s.includes('authentication failed') || s.includes('authentication required')) return 'auth_failed';
  if (['couldn\'t find remote ref', 'could not find remote ref', 'not our ref', 'unadvertised object', 'bad object', 'needed a single revision'].some((t) => s.includes(t))) return 'ref_not_found';
  if (['could not read username', 'terminal prompts disabled', 'repository not found', 'could not resolve host', 'failed to connect', 'connection refused', 'does not appear to be a git repository', 'access rights'].some((t) => s.includes(t))) return 'source_unavailable';
  return fallback;
}

function runGit(args: string[], cwd: string, timeoutMs: number, fallback: string, clean: (t: string) => string): Promise<string> {
  // No hook, credential helper, prompt, or the user's and system's config: the source is untrusted and the request carries any credential.
  const cmd = ['-c', 'credential.helper=', '-c', 'core.askPass=', '-c', 'protocol.file.allow=always', '-c', 'core.hooksPath=/dev/null', ...args];
  return new Promise((resolve, reject) => {
    execFile('git', cmd, { cwd, timeout: timeoutMs, env: { ...gitEnv(undefined), GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null' }, maxBuffer: 4 * 1024 * 1024 }, (err, stdout, stderr) => {
      if (!err) return resolve(String(stdout));
      const e = err as { killed?: boolean; code?: unknown };
      if (e.killed) return reject(new PluginSourceError('timeout', 'Git operation timed out.'));
      if (e.code === 'ENOENT') return reject(new PluginSourceError('source_unavailable', 'Git failed: git is not installed'));
      const text = clean(String(stderr).trim());
      reject(new PluginSourceError(classify(text, fallback), text));
    });
  });
}

