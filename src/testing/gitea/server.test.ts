// The test Gitea: starts on a free port with its admin, token and seeded repositories; serves git
// over HTTP to a token as the clone path sends it (basic auth, any user name) and refuses anonymous
// reads of a private repository; stop() leaves no process and no directory behind.
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { isAlive } from '../../runtime/process/processes.ts';
import { giteaBinary, seedGitea, startGitea, type GiteaServer } from './server.ts';

const run = promisify(execFile);
const bin = giteaBinary();
if (!bin) console.warn('test Gitea suite SKIPPED: no Gitea binary (run hack/gitea.sh; make test does)');

describe.skipIf(!bin)('startGitea', () => {
  let g: GiteaServer | undefined;
  const work = mkdtempSync(join(tmpdir(), 'gitea-harness-'));
  afterAll(async () => {
    await g?.stop();
    rmSync(work, { recursive: true, force: true });
  });

  it('serves its API with the admin token, seeds repositories and branches, serves git to the token only, and stops clean', async () => {
    g = await startGitea(bin!);
    expect((await g.api('GET', '/user')).body).toMatchObject({ login: g.user.login, is_admin: true });
    expect((await g.api('GET', '/user', undefined, { token: '0'.repeat(40) })).status).toBe(401);
    const seed = await seedGitea(g);
    for (const repo of seed.repos) {
      const branches = (await g.api('GET', `/repos/${repo.fullName}/branches?limit=50`)).body as { name: string }[];
      expect(branches.map((b) => b.name).sort(), repo.fullName).toEqual([...repo.branches].sort());
    }
    const url = new URL(`${g.url}/acme/gadgets.git`);
    const anonymous = await run('git', ['ls-remote', url.toString()], { env: { ...process.env, GIT_TERMINAL_PROMPT: '0' } }).catch((err: Error) => err);
    expect(anonymous).toBeInstanceOf(Error);
    url.username = 'oauth2';
    url.password = g.token;
    await run('git', ['clone', '--branch', 'develop', url.toString(), join(work, 'gadgets')], { env: { ...process.env, GIT_TERMINAL_PROMPT: '0' } });
    expect(existsSync(join(work, 'gadgets', 'README.md'))).toBe(true);

    const { root, pid } = g;
    await g.stop();
    g = undefined;
    expect(existsSync(root)).toBe(false);
    expect(isAlive(pid)).toBe(false);
  }, 120_000);
});
