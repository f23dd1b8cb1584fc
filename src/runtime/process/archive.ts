// The internal workspace archive captured when a sandbox is deleted (spec part 3): kept for
// debugging, support and audit under <dataDir>/archive, never served to users.
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

export async function archiveWorkspace(sandboxDir: string, archiveDir: string, name: string): Promise<string | undefined> {
  if (!existsSync(join(sandboxDir, 'workspace'))) return undefined;
  mkdirSync(archiveDir, { recursive: true, mode: 0o700 });
  const target = join(archiveDir, `${name}-${new Date().toISOString().replace(/[:.]/g, '-')}.tar.gz`);
  await run('tar', ['-czf', target, '-C', sandboxDir, 'workspace']);
  return target;
}
