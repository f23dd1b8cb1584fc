// A throwaway PostgreSQL server for tests: Debian's binaries (/usr/lib/postgresql/<v>/bin), a
// temp data dir, a Unix socket in a temp dir and a free loopback port. postgres refuses to run
// as root, so as root it runs as the `postgres` user via runuser (the dirs are chowned to it).
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { requiredForTests } from '../required/required.ts';
import { freePort } from '../ports.ts';

export interface PgServer {
  /** postgres://… URL of the created database (no password: trust auth on loopback). */
  url: string;
  stop(): Promise<void>;
}

/**
 * The bin dir of the newest installed PostgreSQL, or undefined when Debian's postgresql is absent
 * (a failure instead under AGENTYARD_REQUIRE_CLUSTER_TESTS=1, see src/testing/required).
 */
export function postgresBinDir(): string | undefined {
  const root = '/usr/lib/postgresql';
  const versions = existsSync(root) ? readdirSync(root).filter((v) => existsSync(join(root, v, 'bin/postgres'))).sort((a, b) => Number(b) - Number(a)) : [];
  return requiredForTests(versions[0] ? join(root, versions[0], 'bin') : undefined, `PostgreSQL (${root}/<version>/bin/postgres)`, 'run hack/test-deps.sh as root (installs Debian postgresql)');
}


function asOwner(cmd: string, args: string[]): [string, string[]] {
  return process.getuid?.() === 0
    ? ['setpriv', ['--reuid=postgres', '--regid=postgres', '--init-groups', '--reset-env', cmd, ...args]]
    : [cmd, args];
}

function ownerIds(): { uid: number; gid: number } | undefined {
  if (process.getuid?.() !== 0) return undefined;
  const uid = Number(execFileSync('id', ['-u', 'postgres']).toString().trim());
  const gid = Number(execFileSync('id', ['-g', 'postgres']).toString().trim());
  return { uid, gid };
}

export async function startPostgres(database = 'agentyard'): Promise<PgServer> {
  const bin = postgresBinDir();
  if (!bin) throw new Error('PostgreSQL binaries not found under /usr/lib/postgresql (install Debian postgresql)');
  const root = mkdtempSync(join(tmpdir(), 'agentyard-pg-'));
  const data = join(root, 'data');
  const ids = ownerIds();
  if (ids) chownSync(root, ids.uid, ids.gid);
  const [initCmd, initArgs] = asOwner(join(bin, 'initdb'), ['-D', data, '-U', 'agentyard', '-A', 'trust', '--no-sync', '-E', 'UTF8']);
  execFileSync(initCmd, initArgs, { stdio: 'pipe' });
  const port = await freePort();
  const [cmd, args] = asOwner(join(bin, 'postgres'), ['-D', data, '-k', root, '-p', String(port), '-c', 'listen_addresses=127.0.0.1', '-c', 'fsync=off']);
  const child: ChildProcess = spawn(cmd, args, { stdio: ['ignore', 'ignore', 'pipe'] });
  let log = '';
  child.stderr?.on('data', (d: Buffer) => { log += d.toString(); });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  await new Promise<void>((resolve, reject) => {
    const check = (): void => {
      if (/ready to accept connections/.test(log)) return resolve();
      if (child.exitCode !== null) return reject(new Error(`postgres exited: ${log}`));
      setTimeout(check, 50);
    };
    check();
  });
  const [cCmd, cArgs] = asOwner(join(bin, 'createdb'), ['-h', root, '-p', String(port), '-U', 'agentyard', database]);
  execFileSync(cCmd, cArgs, { stdio: 'pipe' });
  return {
    url: `postgres://agentyard@127.0.0.1:${port}/${database}`,
    async stop() {
      if (child.exitCode === null) {
        child.kill('SIGINT'); // fast shutdown
        await exited;
      }
      rmSync(root, { recursive: true, force: true });
    },
  };
}
