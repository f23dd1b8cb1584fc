// A repository's history as the OpenHands display git API serves it (`git_commits`): its newest
// commits, the files one commit changed (against its first parent; a root commit against the empty
// tree), and one file before and after a commit, read from git objects only, so files deleted since
// still show. A path in no repository has no history (empty answers, not errors); a SHA that names
// no commit is a 400, as a git error.
import { existsSync } from 'node:fs';
import { dirname, isAbsolute, relative, sep } from 'node:path';
import type { GitChange, GitCommitsPage, GitDiff } from '../../api/agent-server/index.ts';
import { BadRequest } from '../../api/errors.ts';
import { gitOut, repoRoot } from './exec.ts';

// Unit separators: they cannot occur in a sha, a name, a date or a subject (one line).
const FIELDS = ['%H', '%h', '%an', '%aI', '%s'];

async function repositoryOf(dir: string): Promise<string | undefined> {
  return existsSync(dir) ? repoRoot(dir) : undefined;
}

/** The newest `limit` commits reachable from HEAD, and whether there are more. */
export async function gitCommits(path: string, limit: number): Promise<GitCommitsPage> {
  const root = await repositoryOf(path);
  // An unborn HEAD (a repository without commits) has nothing to list either.
  const head = root && (await gitOut(root, ['rev-parse', '--verify', '--quiet', 'HEAD']).then((o) => o.trim(), () => ''));
  if (!root || !head) return { commits: [], has_more: false };
  const out = await gitOut(root, ['log', '--no-show-signature', `--format=${FIELDS.join('%x1f')}`, '-n', String(limit + 1), head]);
  const commits = out
    .split('\n')
    .map((line) => line.split('\x1f'))
    .filter((f) => f.length === FIELDS.length)
    .map(([sha, short_sha, author, timestamp, subject]) => ({ sha: sha!, short_sha: short_sha!, subject: subject!, author: author!, timestamp: timestamp! }));
  return { commits: commits.slice(0, limit), has_more: commits.length > limit };
}

/** The full SHA of a commit and of its first parent (the empty tree for a root commit). */
async function commitAndParent(root: string, sha: string): Promise<{ commit: string; parent: string }> {
  const commit = (await gitOut(root, ['rev-parse', '--verify', '--end-of-options', `${sha}^{commit}`])).trim();
  const parent = await gitOut(root, ['rev-parse', '--verify', '--quiet', `${commit}^`]).then(
    (o) => o.trim(),
    // The empty tree of this repository's hash function (SHA-1 or SHA-256).
    () => gitOut(root, ['hash-object', '-t', 'tree', '/dev/null']).then((o) => o.trim()),
  );
  return { commit, parent };
}

const STATUS: Record<string, GitChange['status']> = { A: 'ADDED', M: 'UPDATED', T: 'UPDATED', D: 'DELETED' };

/** The files a commit changed; a rename is its old path DELETED and its new path ADDED (OpenHands). */
export async function commitChanges(path: string, sha: string): Promise<GitChange[]> {
  const root = await repositoryOf(path);
  if (!root) return [];
  const { commit, parent } = await commitAndParent(root, sha);
  const out = (await gitOut(root, ['diff', '--name-status', '--no-renames', '-z', parent, commit])).split('\0').filter(Boolean);
  const changes: GitChange[] = [];
  for (let i = 0; i + 1 < out.length; i += 2) changes.push({ status: STATUS[out[i]![0]!] ?? 'UPDATED', path: out[i + 1]! });
  return changes;
}

async function fileAt(root: string, rev: string, rel: string): Promise<string> {
  // Absent on that side (added or deleted by the commit): empty, as OpenHands answers.
  return gitOut(root, ['show', `${rev}:${rel}`]).catch(() => '');
}

/** One file at the commit's parent (`original`) and at the commit (`modified`). */
export async function commitFileDiff(path: string, sha: string): Promise<GitDiff> {
  // The file (or its directory) may be gone since: the repository is found from what still exists.
  let dir = dirname(path);
  while (!existsSync(dir) && dirname(dir) !== dir) dir = dirname(dir);
  const root = await repositoryOf(dir);
  if (!root) return { modified: null, original: null };
  const rel = relative(root, path);
  if (rel.startsWith('..') || isAbsolute(rel)) throw new BadRequest(`${path} is not within the repository ${root}`);
  const { commit, parent } = await commitAndParent(root, sha);
  const posix = rel.split(sep).join('/');
  return { original: await fileAt(root, parent, posix), modified: await fileAt(root, commit, posix) };
}
