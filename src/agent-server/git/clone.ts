// Clones a repository into the server's workspace for the app's PREPARING_REPOSITORY step. The
// credential is handed to git as an `http.extraHeader` through GIT_CONFIG_* environment variables:
// it never reaches .git/config, the remote URL, the workspace, the log or the answer. A preflight
// read of the ref advertisement tells a refused token, an unknown repository and an unknown branch
// apart by HTTP status and ref names, without parsing git's messages.
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, rename, rm } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import type { GitCloneRequest, GitCloneResponse } from '../../api/agent-server/git.ts';
import { gitEnv } from '../../util/git-credentials.ts';

const run = promisify(execFile);
export const CLONE_TIMEOUT_MS = 120_000;
const PREFLIGHT_TIMEOUT_MS = 30_000;

type Outcome = Pick<GitCloneResponse, 'status' | 'detail'>;

export async function git(args: string[], cwd: string, authorization?: string, timeout = 30_000): Promise<string> {
  const { stdout } = await run('git', args, { cwd, env: gitEnv(authorization), timeout, maxBuffer: 4 * 1024 * 1024 });
  return stdout.trim();
}

/** Removes any trace of the credential from text that goes back to the caller. */
export function scrub(text: string, authorization: string | undefined): string {
  let out = text;
  if (authorization) {
    const value = authorization.split(' ').slice(1).join(' ');
    for (const s of [authorization, value]) if (s) out = out.replaceAll(s, '****');
    if (authorization.toLowerCase().startsWith('basic ')) {
      const password = Buffer.from(value, 'base64').toString('utf8').split(':').slice(1).join(':');
      if (password) out = out.replaceAll(password, '****');
    }
  }
  return out.replace(/\/\/[^/@\s]+@/g, '//');
}

export async function preflight(req: Pick<GitCloneRequest, 'url' | 'branch' | 'authorization'>): Promise<Outcome | undefined> {
  const url = `${req.url.replace(/\/+$/, '')}/info/refs?service=git-upload-pack`;
  let res: Response;
  try {
    res = await fetch(url, {
      headers: { ...(req.authorization ? { authorization: req.authorization } : {}), 'user-agent': 'git/agentyard' },
      signal: AbortSignal.timeout(PREFLIGHT_TIMEOUT_MS),
    });
  } catch (err) {
    return { status: 'FAILED', detail: `The Git host could not be reached (${(err as Error).name})` };
  }
  const body = await res.text();
  if (res.status === 401 || res.status === 403) {
    return { status: 'AUTH_FAILED', detail: req.authorization ? 'The Git host refused the token' : 'The Git host requires a token and none was given' };
  }
  if (res.status === 404) return { status: 'REPOSITORY_NOT_FOUND', detail: 'The repository does not exist or the token has no access to it' };
  if (!res.ok) return { status: 'FAILED', detail: `The Git host answered ${res.status}` };
  if (req.branch) {
    const escaped = req.branch.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    if (!new RegExp(`[0-9a-f]{40,64} refs/heads/${escaped}(?:\\0|\\n|$)`).test(body)) {
      return { status: 'BRANCH_NOT_FOUND', detail: `The repository has no branch ${req.branch}` };
    }
  }
  return undefined;
}

async function originOf(path: string): Promise<string | undefined> {
  try {
    return await git(['config', '--get', 'remote.origin.url'], path);
  } catch {
    return undefined;
  }
}

async function configureAuthor(path: string, req: GitCloneRequest): Promise<void> {
  if (req.author_name) await git(['config', 'user.name', req.author_name], path);
  if (req.author_email) await git(['config', 'user.email', req.author_email], path);
}

async function currentBranch(path: string): Promise<string | null> {
  try {
    return await git(['symbolic-ref', '--short', 'HEAD'], path);
  } catch {
    return null;
  }
}

export async function cloneRepository(workspaceDir: string, req: GitCloneRequest): Promise<GitCloneResponse> {
  const path = resolve(workspaceDir, req.directory);
  const answer = (o: Outcome, branch: string | null = null): GitCloneResponse => ({ status: o.status, path, branch, detail: o.detail });
  const existing = async (): Promise<GitCloneResponse> => {
    if (existsSync(join(path, '.git')) && (await originOf(path)) === req.url) {
      const branch = await currentBranch(path);
      // Another conversation of this sandbox works on that clone: never switch its branch.
      if (req.branch && branch !== req.branch) {
        return answer({ status: 'DIRECTORY_TAKEN', detail: `${req.directory} is already cloned in this sandbox on branch ${branch ?? '(detached)'}, not ${req.branch}` }, branch);
      }
      await configureAuthor(path, req);
      return answer({ status: 'EXISTS', detail: null }, branch);
    }
    return answer({ status: 'DIRECTORY_TAKEN', detail: `${req.directory} already exists in the workspace and is not a clone of the repository` });
  };
  if (existsSync(path)) return existing();
  const refused = await preflight(req);
  if (refused) return answer(refused);

  await mkdir(workspaceDir, { recursive: true });
  // Cloned beside the target and renamed: a clone cut short never looks like a finished one.
  const tmp = join(workspaceDir, `.agentyard-clone-${randomBytes(6).toString('hex')}`);
  try {
    await git(['clone', '--quiet', ...(req.branch ? ['--branch', req.branch] : []), '--', req.url, tmp], workspaceDir, req.authorization, CLONE_TIMEOUT_MS);
  } catch (err) {
    await rm(tmp, { recursive: true, force: true });
    const e = err as { stderr?: string; killed?: boolean };
    const why = e.killed ? `git clone did not finish within ${CLONE_TIMEOUT_MS / 1000} s` : scrub(String(e.stderr ?? '').trim().split('\n').slice(-3).join(' '), req.authorization);
    return answer({ status: 'FAILED', detail: `git clone failed: ${why || 'unknown error'}` });
  }
  try {
    await rename(tmp, path);
  } catch {
    // A concurrent clone of the same directory finished first.
    await rm(tmp, { recursive: true, force: true });
    return existing();
  }
  await configureAuthor(path, req);
  return answer({ status: 'CLONED', detail: null }, await currentBranch(path));
}
