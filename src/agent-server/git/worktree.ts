// Conversation git worktrees (OpenHands 1.58 `worktree: true` and child isolation 'worktree'): a
// conversation in a git repository gets its own checkout on a branch `<prefix><conversation id>`,
// at `<worktrees root>/<conversation id>/<repository name>`; its working directory is the same
// place inside that checkout as the original one inside the repository. Deleting the conversation
// removes the checkout (the branch stays, as in OpenHands).
//
// Unlike OpenHands (which uses /tmp/conversation-worktrees) the worktrees root lies inside the
// server's workspace root: a sandbox's files stay where its workspace is, and every path is
// checked to be inside that root after symbolic links are resolved (the agent can plant links).
import { execFile } from 'node:child_process';
import { lstatSync, mkdirSync, readdirSync, realpathSync, rmSync } from 'node:fs';
import { basename, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { promisify } from 'node:util';
import { BadRequest, Invalid } from '../../api/errors.ts';
import { repoRoot } from './exec.ts';

const exec = promisify(execFile);

/** Where conversation worktrees live, under the server's workspace root. */
export const WORKTREES_DIR = '.conversation-worktrees';
/** OpenHands' DEFAULT_WORKTREE_BRANCH_PREFIX. */
export const DEFAULT_BRANCH_PREFIX = 'openhands/';

export interface WorktreeOptions {
  base?: 'default_branch' | 'head' | 'ref';
  ref?: string | null;
  branch_prefix?: string;
}

export interface WorktreePlan {
  repoRoot: string;
  sourceDir: string;
  /** `<root>/<conversation id>`: what deletion removes. */
  conversationDir: string;
  worktreeRoot: string;
  workspaceDir: string;
  branch: string;
  options: WorktreeOptions;
}

/**
 * git with the repository's hooks and fsmonitor switched off: the repository's config is
 * agent-writable, and `worktree add` would otherwise run its post-checkout hook.
 */
async function git(cwd: string, args: string[]): Promise<string> {
  try {
    const { stdout } = await exec('git', ['-c', 'core.hooksPath=/dev/null', '-c', 'core.fsmonitor=false', '-C', cwd, ...args], { maxBuffer: 16 * 1024 * 1024, timeout: 60_000 });
    return stdout.trim();
  } catch (err) {
    throw new BadRequest(`git ${args[0]} failed: ${((err as { stderr?: string }).stderr ?? '').trim() || (err as Error).message}`);
  }
}

async function succeeds(cwd: string, args: string[]): Promise<boolean> {
  return git(cwd, args).then(
    () => true,
    () => false,
  );
}

/** Whether `path` is `root` or inside it. */
function inside(root: string, path: string): boolean {
  const rel = relative(root, path);
  return rel === '' || (rel !== '..' && !rel.startsWith('..' + sep) && !isAbsolute(rel));
}

/** The worktrees root, created, refused when it (or the workspace root) resolves elsewhere through a link. */
function worktreesRoot(workspaceRoot: string): string {
  const realRoot = realpathSync(workspaceRoot);
  const dir = join(realRoot, WORKTREES_DIR);
  mkdirSync(dir, { recursive: true });
  if (lstatSync(dir).isSymbolicLink() || realpathSync(dir) !== dir) {
    throw new Invalid([{ loc: ['body', 'workspace', 'working_dir'], msg: `${WORKTREES_DIR} of the workspace root is a link; no worktree is made through it`, type: 'value_error' }]);
  }
  return dir;
}

/**
 * The worktree a conversation would get; undefined when `sourceDir` is in no git repository (the
 * conversation then works in `sourceDir` itself, as in OpenHands). 422 (at `loc`) when the
 * repository lies outside the workspace root.
 */
export async function planWorktree(workspaceRoot: string, sourceDir: string, conversationId: string, options: WorktreeOptions | null | undefined, loc: string[]): Promise<WorktreePlan | undefined> {
  const top = await repoRoot(sourceDir);
  if (top === undefined) return undefined;
  const realTop = realpathSync(top);
  const realSource = realpathSync(sourceDir);
  const root = realpathSync(workspaceRoot);
  if (!inside(root, realTop)) {
    throw new Invalid([{ loc, msg: 'The git repository of the working directory is outside the workspace root; no worktree is made for it', type: 'value_error' }]);
  }
  const opts = options ?? {};
  const conversationDir = join(worktreesRoot(root), conversationId);
  const worktreeRoot = join(conversationDir, basename(realTop));
  return {
    repoRoot: realTop,
    sourceDir: realSource,
    conversationDir,
    worktreeRoot,
    workspaceDir: join(worktreeRoot, relative(realTop, realSource)),
    branch: `${opts.branch_prefix ?? DEFAULT_BRANCH_PREFIX}${conversationId}`,
    options: opts,
  };
}

/** OpenHands' start point: origin's default branch (fetched first), else main, else master, else HEAD. */
async function defaultStartPoint(repo: string): Promise<string> {
  if (await succeeds(repo, ['remote', 'get-url', 'origin'])) {
    await succeeds(repo, ['fetch', 'origin']); // on failure the cached refs are used
    const ref = await git(repo, ['symbolic-ref', 'refs/remotes/origin/HEAD']).catch(() => '');
    const prefix = 'refs/remotes/origin/';
    if (ref.startsWith(prefix)) return `origin/${ref.slice(prefix.length)}`;
  }
  for (const b of ['main', 'master']) if (await succeeds(repo, ['show-ref', '--verify', '--quiet', `refs/heads/${b}`])) return b;
  return 'HEAD';
}

async function startPoint(plan: WorktreePlan): Promise<string> {
  if (plan.options.base === 'head') return 'HEAD';
  if (plan.options.base === 'ref' && plan.options.ref) {
    if (await succeeds(plan.repoRoot, ['remote', 'get-url', 'origin'])) await succeeds(plan.repoRoot, ['fetch', 'origin']);
    return plan.options.ref;
  }
  return defaultStartPoint(plan.repoRoot);
}

/**
 * Makes the planned worktree: a stale one at the same place and a stale branch of the same name
 * are replaced, as OpenHands does. Returns the conversation's working directory.
 */
export async function createWorktree(plan: WorktreePlan): Promise<string> {
  mkdirSync(plan.conversationDir, { recursive: true });
  if (lstatSync(plan.conversationDir).isSymbolicLink()) throw new BadRequest('the conversation worktree directory is a link');
  if (!(await succeeds(plan.repoRoot, ['worktree', 'remove', '--force', plan.worktreeRoot]))) rmSync(plan.worktreeRoot, { recursive: true, force: true });
  await git(plan.repoRoot, ['worktree', 'prune']);
  if (await git(plan.repoRoot, ['branch', '--list', plan.branch])) await git(plan.repoRoot, ['branch', '-D', plan.branch]);
  await git(plan.repoRoot, ['worktree', 'add', '-b', plan.branch, plan.worktreeRoot, await startPoint(plan)]);
  mkdirSync(plan.workspaceDir, { recursive: true });
  return plan.workspaceDir;
}

/** `<root>/<conversation id>` holding the worktree `workingDir` is in; undefined when it is in none. */
export function conversationWorktreeDir(workspaceRoot: string, workingDir: string): string | undefined {
  let root: string;
  try {
    root = join(realpathSync(workspaceRoot), WORKTREES_DIR);
  } catch {
    return undefined;
  }
  // The agent may have replaced the worktrees root with a link: nothing is removed through it.
  if (!lstatSync(root, { throwIfNoEntry: false })?.isDirectory()) return undefined;
  const rel = relative(root, resolve(workingDir));
  if (rel === '' || !inside(root, resolve(workingDir))) return undefined;
  return join(root, rel.split(sep)[0]!);
}

/**
 * Removes a conversation's worktrees (every checkout in `<root>/<id>`), then lets their
 * repositories forget them; branches stay. A link planted there is removed as a link only.
 */
export async function removeWorktrees(conversationDir: string): Promise<void> {
  let st;
  try {
    st = lstatSync(conversationDir);
  } catch {
    return;
  }
  if (st.isSymbolicLink() || !st.isDirectory()) {
    rmSync(conversationDir, { force: true });
    return;
  }
  const repos: string[] = [];
  for (const child of readdirSync(conversationDir, { withFileTypes: true })) {
    if (!child.isDirectory()) continue;
    const common = await git(join(conversationDir, child.name), ['rev-parse', '--path-format=absolute', '--git-common-dir']).catch(() => '');
    if (common) repos.push(common);
  }
  rmSync(conversationDir, { recursive: true, force: true });
  for (const repo of repos) await succeeds(repo, ['worktree', 'prune']);
}
