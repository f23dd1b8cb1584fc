// A forgejo host end to end, as OpenHands' web app drives it: `agentyard up` as a child process with
// a real Gitea (hack/gitea.sh) as its forgejo host (AGENTYARD_GIT_HOSTS), the user's token saved
// through POST /api/v1/secrets/git-providers, a private repository and a branch found through the git
// searches, and a conversation started on them: the sandbox clones it from Gitea over HTTP with that
// token, which ends up nowhere (not in .git/config, the start task, events or the service's log).
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { giteaBinary, seedGitea, startGitea, type GiteaServer } from '../../src/testing/gitea/server.ts';
import { startAndSettle } from './flows.ts';
import { startServiceWithModel, type RunningService } from './harness.ts';

const bin = giteaBinary();
if (!bin) console.warn('forgejo end-to-end suite SKIPPED: no Gitea binary (run hack/gitea.sh; make test does)');

describe.skipIf(!bin)('agentyard up with a forgejo host (a real Gitea): search, then clone', () => {
  let gitea: GiteaServer;
  let svc: RunningService;
  let stop: (() => Promise<void>) | undefined;

  beforeAll(async () => {
    gitea = await startGitea(bin!);
    await seedGitea(gitea);
    // A file on a branch other than the default, so the clone of that branch is seen.
    const put = await gitea.api('POST', '/repos/acme/gadgets/contents/GADGETS.md', { content: Buffer.from('# gadgets on develop\n').toString('base64'), branch: 'develop', message: 'Add GADGETS.md' });
    expect(put.status, JSON.stringify(put.body)).toBe(201);
    ({ svc, stop } = await startServiceWithModel({ env: { AGENTYARD_GIT_HOSTS: JSON.stringify({ forgejo: gitea.url }) } }));
  }, 180_000);
  afterAll(async () => {
    await stop?.();
    await gitea?.stop();
  });

  it('finds a private repository and its branch through the API, and a conversation clones it with the saved token', async () => {
    const saved = await svc.api('POST', '/api/v1/secrets/git-providers', { provider_tokens: { forgejo: { token: gitea.token, host: gitea.url } } });
    expect(saved).toMatchObject({ status: 200, body: { message: 'Git providers stored' } });

    const repos = await svc.api<{ items: { full_name: string; is_public: boolean; main_branch: string }[] }>('GET', '/api/v1/git/repositories/search?provider=forgejo&query=gadg');
    expect(repos.status).toBe(200);
    expect(repos.body.items).toEqual([expect.objectContaining({ full_name: 'acme/gadgets', is_public: false, main_branch: 'main' })]);
    const branches = await svc.api<{ items: { name: string; commit_sha: string }[] }>('GET', '/api/v1/git/branches/search?provider=forgejo&repository=acme/gadgets&query=dev');
    expect(branches.body.items.map((b) => b.name)).toEqual(['develop']);

    const task = await startAndSettle(svc, { selected_repository: repos.body.items[0]!.full_name, selected_branch: branches.body.items[0]!.name, git_provider: 'forgejo' });
    expect(task.status, task.detail ?? '').toBe('READY');
    const repo = join(svc.dataDir, 'sandboxes', task.sandbox_id!, 'workspace', 'gadgets');
    expect(readFileSync(join(repo, 'GADGETS.md'), 'utf8')).toBe('# gadgets on develop\n');
    expect(readFileSync(join(repo, '.git', 'HEAD'), 'utf8').trim()).toBe('ref: refs/heads/develop');
    // The commit the branch search named is the one checked out (the sandbox's user owns the clone, hence safe.directory).
    expect(execFileSync('git', ['-c', 'safe.directory=*', '-C', repo, 'rev-parse', 'HEAD'], { encoding: 'utf8' }).trim()).toBe(branches.body.items[0]!.commit_sha);
    expect(readFileSync(join(repo, '.git', 'config'), 'utf8')).not.toContain(gitea.token);
    const { body: events } = await svc.api('GET', `/api/v1/conversation/${task.app_conversation_id}/events/search?limit=100`);
    for (const seen of [JSON.stringify(events), JSON.stringify(task), svc.output.join('')]) expect(seen).not.toContain(gitea.token);
  }, 240_000);
});
