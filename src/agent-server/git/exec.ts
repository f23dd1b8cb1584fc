// git as the file and git routes run it: in a directory of the workspace, failures as 400 with
// git's own message (as OpenHands answers a git error), never a shell.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { BadRequest } from '../../api/errors.ts';

const git = promisify(execFile);

/** git's stdout; BadRequest (400) naming the failed subcommand and git's message. */
export async function gitOut(cwd: string, args: string[]): Promise<string> {
  try {
    return (await git('git', ['-C', cwd, ...args], { maxBuffer: 64 * 1024 * 1024 })).stdout;
  } catch (err) {
    throw new BadRequest(`git ${args[0]} failed: ${((err as { stderr?: string }).stderr ?? '').trim() || (err as Error).message}`);
  }
}

/** The top of the repository `dir` is in; undefined when it is in none (or does not exist). */
export async function repoRoot(dir: string): Promise<string | undefined> {
  try {
    return (await git('git', ['-C', dir, 'rev-parse', '--show-toplevel'])).stdout.trim();
  } catch {
    return undefined;
  }
}
