// A git work tree's changes as one binary patch (OpenHands 1.58 `git-delta` archives): everything
// the working tree adds, changes or deletes against a base commit, untracked files included,
// excludes applied as pathspecs, the repository's own index never touched (a scratch index), the
// patch streamed to a file. The base: the caller's `base_ref`; else HEAD when it is detached (a
// pinned checkout); else the current branch's upstream on origin, origin's default branch or its
// merge base with HEAD; else the empty tree. Unlike OpenHands, origin's default branch is read
// from the local `refs/remotes/origin/HEAD`: an archive never waits on the network.
import { spawn } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import { rm } from 'node:fs/promises';
import { BadRequest } from '../../api/errors.ts';

export const EMPTY_TREE = '4b825dc642cb6eb9a060e54bf8d69288fbee4904';

/** Runs git in `cwd`; stdout (or into `out`), or undefined when it fails. */
function git(cwd: string, args: string[], o: { env?: NodeJS.ProcessEnv; out?: string } = {}): Promise<{ ok: boolean; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn('git', ['--no-pager', ...args], { cwd, env: { ...process.env, ...o.env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    const sink = o.out ? createWriteStream(o.out) : undefined;
    if (sink) child.stdout.pipe(sink);
    else child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', (err) => resolve({ ok: false, stdout, stderr: err.message }));
    child.on('close', (code) => {
      const done = () => resolve({ ok: code === 0, stdout: stdout.trim(), stderr: stderr.trim() });
      if (sink && !sink.closed) sink.once('close', done);
      else done();
    });
  });
}

const verify = async (root: string, ref: string) => {
  const r = await git(root, ['rev-parse', '--verify', '--quiet', `${ref}^{commit}`]);
  return r.ok && r.stdout ? r.stdout : undefined;
};

/** Whether `root` is a git work tree (400 otherwise, as OpenHands answers). */
export async function requireRepository(root: string): Promise<void> {
  const r = await git(root, ['rev-parse', '--is-inside-work-tree']);
  if (!r.ok || r.stdout !== 'true') throw new BadRequest(`Not a git repository: ${root}`);
}

async function baseOf(root: string, baseRef: string | undefined): Promise<string> {
  const head = await git(root, ['rev-parse', '--abbrev-ref', 'HEAD']);
  const ref = baseRef ?? (head.ok && head.stdout === 'HEAD' ? 'HEAD' : undefined);
  if (ref !== undefined) {
    const sha = await verify(root, ref);
    if (sha) return sha;
    if (ref === 'HEAD') return EMPTY_TREE; // no commit on this branch yet
    throw new BadRequest(`base_ref '${ref}' could not be resolved`);
  }
  if (!(await verify(root, 'HEAD'))) return EMPTY_TREE;
  const candidates: string[] = [];
  if (head.ok && head.stdout) candidates.push(`origin/${head.stdout}`);
  const remoteHead = await git(root, ['symbolic-ref', '--quiet', '--short', 'refs/remotes/origin/HEAD']);
  if (remoteHead.ok && remoteHead.stdout) {
    candidates.push(remoteHead.stdout);
    const mergeBase = await git(root, ['merge-base', 'HEAD', remoteHead.stdout]);
    if (mergeBase.ok && mergeBase.stdout) candidates.push(mergeBase.stdout);
  }
  for (const c of candidates) {
    const sha = await verify(root, c);
    if (sha) return sha;
  }
  return EMPTY_TREE;
}

/** `:(exclude)` pathspecs with gitignore-like semantics (a trailing `/`: the directory's contents only). */
export function excludePathspecs(excludes: readonly string[]): string[] {
  const out: string[] = [];
  for (const raw of excludes) {
    const dirOnly = raw.endsWith('/');
    const p = raw.replace(/\/+$/, '');
    if (!p) continue;
    const at = p.includes('/') ? p : `**/${p}`;
    if (!dirOnly) out.push(`:(glob,exclude)${at}`);
    out.push(`:(glob,exclude)${at}/**`);
  }
  return out;
}

/** Writes the patch to `output`; the base commit's full SHA ('' for the empty tree). */
export async function writeGitDelta(root: string, output: string, baseRef: string | undefined, excludes: readonly string[]): Promise<string> {
  await requireRepository(root);
  const base = await baseOf(root, baseRef);
  const index = `${output}.index`;
  const env = { GIT_INDEX_FILE: index };
  const specs = excludePathspecs(excludes);
  try {
    for (const [args, out] of [
      [['read-tree', base], undefined],
      [['add', '-A', '--', '.', ...specs], undefined],
      [['diff', '--binary', '--cached', base, '--', '.', ...specs], output],
    ] as const) {
      const r = await git(root, [...args], { env, ...(out ? { out } : {}) });
      if (!r.ok) throw new Error(`Failed to generate git delta: git ${args[0]}: ${r.stderr}`);
    }
  } finally {
    await rm(index, { force: true });
  }
  return base === EMPTY_TREE ? '' : base;
}

/** Remote (credentials removed), branch (DETACHED when detached) and HEAD of the repository, best effort. */
export async function repositoryMetadata(root: string): Promise<{ remote?: string; branch?: string; head?: string }> {
  const out: { remote?: string; branch?: string; head?: string } = {};
  const remote = await git(root, ['remote', 'get-url', 'origin']);
  if (remote.ok && remote.stdout) out.remote = stripCredentials(remote.stdout);
  const head = await git(root, ['rev-parse', 'HEAD', '--abbrev-ref', 'HEAD']);
  const lines = head.ok ? head.stdout.split('\n') : [];
  if (lines.length === 2) {
    out.head = lines[0]!;
    out.branch = lines[1] === 'HEAD' ? 'DETACHED' : lines[1]!;
  }
  return out;
}

/** A remote URL without user info and without query parameters (tokens ride in both). */
export function stripCredentials(url: string): string {
  try {
    const u = new URL(url);
    u.username = '';
    u.password = '';
    u.search = '';
    return u.toString();
  } catch {
    return url.replace(/\/\/[^/@]*@/, '//'); // scp-like or local: only a userinfo part can hold a secret
  }
}
