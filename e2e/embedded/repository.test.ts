// Repository cloning end to end: `agentyard up` as a child process, a real Git smart-HTTP server
// on loopback standing in for the Git host (AGENTYARD_GIT_BASE_URL), real sandboxes. The selected
// repository is cloned in the sandbox during PREPARING_REPOSITORY with the user's token, which
// ends up nowhere: not in .git/config, the workspace, events, start tasks or the service's log.
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGitHttpServer, type GitHttpServer } from '../../src/testing/git-http/server.ts';
import type { ScriptedLlm } from '../../src/testing/scripted-llm/server.ts';
import { createUser, noSecondUser, startAndSettle } from './flows.ts';
import { eventually, startServiceWithModel, type RunningService } from './harness.ts';

const TOKEN = 'ghp_e2eOwnTokenValue0001';
const OTHER_TOKEN = 'ghp_e2eOtherUsersToken0002';

function grepTree(dir: string, needle: string): string {
  try {
    return execFileSync('grep', ['-r', '-l', '-a', needle, dir], { encoding: 'utf8' });
  } catch {
    return ''; // grep exits 1 when nothing matches
  }
}

describe('agentyard up: selected_repository is cloned in the sandbox', () => {
  let git: GitHttpServer;
  let llm: ScriptedLlm;
  let svc: RunningService;
  let stop: (() => Promise<void>) | undefined;

  beforeAll(async () => {
    git = await startGitHttpServer();
    git.createRepo('acme/widgets', { main: { 'README.md': '# widgets\n' }, 'release/2.0': { 'CHANGELOG.md': '2.0\n', '.agents/skills/widget-release/SKILL.md': '---\nname: widget-release\ndescription: how widgets are released\n---\nTag the release.\n' } }, { token: TOKEN });
    git.createRepo('other/tools', { main: { 'tool.sh': 'echo tool\n' } }, { token: OTHER_TOKEN });
    // Organization configuration repositories: `.agents`, or `service-config` where leading periods are forbidden (gitlab).
    const skill = (name: string) => ({ [`skills/${name}/SKILL.md`]: `---\nname: ${name}\ndescription: ${name} rules\n---\nAlways follow the ${name} rules.\n` });
    git.createRepo('acme/.agents', { main: skill('acme-style') }, { token: TOKEN });
    git.createRepo('beta/app', { main: { 'app.txt': 'beta\n' } }, { token: TOKEN });
    git.createRepo('beta/service-config', { main: skill('beta-conventions') }, { token: TOKEN });
    git.createRepo('beta/.agents', { main: skill('not-for-gitlab') }, { token: TOKEN });
    ({ llm, svc, stop } = await startServiceWithModel({ env: { AGENTYARD_GIT_BASE_URL: git.url, AGENTYARD_GIT_HOSTS: JSON.stringify({ gitlab: git.url }) } }));
  });

  afterAll(async () => {
    await stop?.();
    await git?.close();
  });

  it('clones a private repository on the selected branch with the token from secrets; the token is stored nowhere', async () => {
    const task = await startAndSettle(svc, {
      selected_repository: 'acme/widgets',
      selected_branch: 'release/2.0',
      secrets: { GITHUB_TOKEN: TOKEN },
      git_user_name: 'Grace Hopper',
      git_user_email: 'grace@example.com',
    });
    expect(task.status, task.detail ?? '').toBe('READY');
    expect((task as unknown as { request: Record<string, unknown> }).request).toMatchObject({ selected_branch: 'release/2.0', git_user_name: 'Grace Hopper', secrets: { GITHUB_TOKEN: '**********' } });
    const { body: records } = await svc.api<{ git_provider: string | null; selected_repository: string }[]>('GET', `/api/v1/app-conversations?ids=${task.app_conversation_id}`);
    expect(records[0]).toMatchObject({ selected_repository: 'acme/widgets', git_provider: 'github' });
    const repo = join(svc.dataDir, 'sandboxes', task.sandbox_id!, 'workspace', 'widgets');
    expect(readFileSync(join(repo, 'CHANGELOG.md'), 'utf8')).toBe('2.0\n');
    expect(readFileSync(join(repo, 'README.md'), 'utf8')).toBe('# widgets\n');
    expect(readFileSync(join(repo, '.git', 'HEAD'), 'utf8').trim()).toBe('ref: refs/heads/release/2.0');
    const config = readFileSync(join(repo, '.git', 'config'), 'utf8');
    expect(config).toContain('name = Grace Hopper');
    expect(config).toContain('email = grace@example.com');
    expect(config).not.toContain(TOKEN);
    // Nowhere in the sandbox's workspace, nor in the events the API serves, nor in the log.
    expect(grepTree(join(svc.dataDir, 'sandboxes', task.sandbox_id!, 'workspace'), TOKEN)).toBe('');
    const { body: events } = await svc.api<{ items: unknown[] }>('GET', `/api/v1/conversation/${task.app_conversation_id}/events/search?limit=100`);
    expect(JSON.stringify(events)).not.toContain(TOKEN);
    expect(JSON.stringify(task)).not.toContain(TOKEN);
    expect(svc.output.join('')).not.toContain(TOKEN);
    // The organization's `.agents` repository gave its skills to the conversation.
    const skills = await svc.api<{ skills: { name: string }[] }>('GET', `/api/v1/app-conversations/${task.app_conversation_id}/skills`);
    expect(skills.body.skills.map((k) => k.name)).toContain('acme-style');
    // The conversation works in the clone: the repository's own skills load too.
    expect(skills.body.skills.map((k) => k.name)).toContain('widget-release');
    // The Git host saw authenticated requests (the scheme only is recorded).
    expect(git.requests.some((r) => r.path.startsWith('/acme/widgets.git') && r.auth === 'Basic' && r.status === 200)).toBe(true);
  });

  it('on a host that forbids leading periods (gitlab here) the configuration repository is service-config', async () => {
    const task = await startAndSettle(svc, { selected_repository: 'beta/app', git_provider: 'gitlab', secrets: { GITLAB_TOKEN: TOKEN } });
    expect(task.status, task.detail ?? '').toBe('READY');
    expect(readFileSync(join(svc.dataDir, 'sandboxes', task.sandbox_id!, 'workspace', 'app', 'app.txt'), 'utf8')).toBe('beta\n');
    const skills = await svc.api<{ skills: { name: string }[] }>('GET', `/api/v1/app-conversations/${task.app_conversation_id}/skills`);
    const names = skills.body.skills.map((k) => k.name);
    expect(names).toContain('beta-conventions');
    expect(names).not.toContain('not-for-gitlab');
    expect(svc.output.join('')).not.toContain(TOKEN);
  });

  it('ends the start in ERROR with a clear, secret-free reason for a wrong token, an unknown repository and an unknown branch', async () => {
    const wrong = await startAndSettle(svc, { selected_repository: 'acme/widgets', secrets: { GITHUB_TOKEN: 'ghp_wrongWrongWrong' } });
    expect(wrong.status).toBe('ERROR');
    expect(wrong.detail).toContain('refused the credentials');
    expect(wrong.detail).not.toContain('ghp_wrongWrongWrong');

    const missing = await startAndSettle(svc, { selected_repository: 'acme/gadgets', secrets: { GITHUB_TOKEN: TOKEN } });
    expect(missing.status).toBe('ERROR');
    expect(missing.detail).toContain('does not exist');

    const branch = await startAndSettle(svc, { selected_repository: 'acme/widgets', selected_branch: 'no-such-branch', secrets: { GITHUB_TOKEN: TOKEN } });
    expect(branch.status).toBe('ERROR');
    expect(branch.detail).toBe('Cloning acme/widgets failed: branch no-such-branch does not exist');

    const noToken = await startAndSettle(svc, { selected_repository: 'acme/widgets' });
    expect(noToken.status).toBe('ERROR');
    expect(noToken.detail).toContain('GITHUB_TOKEN');
    expect(svc.output.join('')).not.toContain(TOKEN);
  });

  it('clones with the stored GITHUB_TOKEN (Settings > Secrets) when the request carries none', async () => {
    const stored = await svc.api('POST', '/api/v1/secrets', { name: 'GITHUB_TOKEN', value: TOKEN, description: 'e2e' });
    expect(stored.status).toBe(201);
    const task = await startAndSettle(svc, { selected_repository: 'acme/widgets' });
    expect(task.status, task.detail ?? '').toBe('READY');
    const repo = join(svc.dataDir, 'sandboxes', task.sandbox_id!, 'workspace', 'widgets');
    expect(readFileSync(join(repo, '.git', 'HEAD'), 'utf8').trim()).toBe('ref: refs/heads/main');
    expect(readFileSync(join(repo, '.git', 'config'), 'utf8')).not.toContain(TOKEN);
    // A per-conversation secret of the same name wins over the stored one (here: a wrong one).
    const overridden = await startAndSettle(svc, { selected_repository: 'acme/widgets', secrets: { GITHUB_TOKEN: 'ghp_requestWinsWrong' } });
    expect(overridden.status).toBe('ERROR');
    expect(overridden.detail).toContain('refused the credentials');
    expect(svc.output.join('')).not.toContain(TOKEN);
    await svc.api('DELETE', '/api/v1/secrets/GITHUB_TOKEN');
  });

  it.skipIf(noSecondUser)("the user's configuration repository (git_login setting): organization < user < repository skills, also without a repository", async () => {
    const key = await createUser(svc, 'grace');
    const bad = await svc.api<{ detail: { loc: string[] }[] }>('POST', '/api/v1/settings', { git_login: '.grace' }, key);
    expect(bad.status).toBe(422);
    expect(bad.body.detail[0]!.loc).toEqual(['body', 'git_login']);
    const saved = await svc.api('POST', '/api/v1/settings', { git_login: 'grace', sandbox_grouping_strategy: 'ADD_TO_ANY' }, key);
    expect(saved).toMatchObject({ status: 200, body: { git_login: 'grace', git_login_provider: 'github', sandbox_grouping_strategy: 'ADD_TO_ANY' } });
    expect((await svc.api('GET', '/api/v1/settings')).body).toMatchObject({ git_login: null }); // per user
    const skill = (name: string, text: string) => ({ [`skills/${name}/SKILL.md`]: `---\nname: ${name}\ndescription: ${text}\n---\n${text}\n` });
    git.createRepo('grace/.agents', { main: { ...skill('acme-style', 'Grace overrides the house style'), ...skill('widget-release', 'Grace releases differently'), ...skill('grace-notes', 'Grace keeps notes') } }, { token: TOKEN });
    const contents = async (id: string) => {
      const { body } = await svc.api<{ skills: { name: string; content: string }[] }>('GET', `/api/v1/app-conversations/${id}/skills`, undefined, key);
      return Object.fromEntries(body.skills.map((k) => [k.name, k.content.trim()]));
    };

    const withRepo = await startAndSettle(svc, { selected_repository: 'acme/widgets', selected_branch: 'release/2.0', secrets: { GITHUB_TOKEN: TOKEN } }, key);
    expect(withRepo.status, withRepo.detail ?? '').toBe('READY');
    expect(await contents(withRepo.app_conversation_id!)).toMatchObject({
      'acme-style': 'Grace overrides the house style', // user over organization
      'widget-release': 'Tag the release.', // repository over user
      'grace-notes': 'Grace keeps notes',
    });
    const alone = await startAndSettle(svc, { secrets: { GITHUB_TOKEN: TOKEN } }, key);
    expect(alone.status, alone.detail ?? '').toBe('READY');
    const skills = await contents(alone.app_conversation_id!);
    expect(skills).toMatchObject({ 'acme-style': 'Grace overrides the house style', 'widget-release': 'Grace releases differently', 'grace-notes': 'Grace keeps notes' });
    expect(git.requests.some((r) => r.path.startsWith('/grace/.agents.git') && r.auth === 'Basic' && r.status === 200)).toBe(true);
    expect(svc.output.join('')).not.toContain(TOKEN);
  });

  it("another user's token (rule 5): no selected_repository; the agent clones after start with the token from secrets", async () => {
    const url = `${git.url}/other/tools.git`;
    llm.push(
      {
        toolCalls: [
          {
            name: 'terminal',
            arguments: {
              command: `git -c http.extraHeader="Authorization: Bearer $OTHER_GIT_TOKEN" clone -q ${url} tools && git -C tools config user.name "Agent Author" && cat tools/tool.sh`,
              summary: 'clone with the other token',
            },
          },
        ],
      },
      { toolCalls: [{ name: 'finish', arguments: { message: 'cloned' } }] },
    );
    const task = await startAndSettle(svc, { secrets: { OTHER_GIT_TOKEN: OTHER_TOKEN }, initial_message: { role: 'user', content: [{ type: 'text', text: 'clone other/tools' }], run: true } });
    expect(task.status, task.detail ?? '').toBe('READY');
    const repo = join(svc.dataDir, 'sandboxes', task.sandbox_id!, 'workspace', 'tools');
    await eventually(async () => (existsSync(join(repo, 'tool.sh')) ? true : undefined), 'the agent to clone');
    expect(readFileSync(join(repo, '.git', 'config'), 'utf8')).not.toContain(OTHER_TOKEN);
    const events = await eventually(async () => {
      const { body } = await svc.api<{ items: { kind: string; tool_name?: string }[] }>('GET', `/api/v1/conversation/${task.app_conversation_id}/events/search?limit=100`);
      return body.items.some((e) => e.kind === 'ObservationEvent' && e.tool_name === 'finish') ? body.items : undefined;
    }, 'the finish to reach the app');
    const text = JSON.stringify(events);
    expect(text).toContain('echo tool');
    expect(text).not.toContain(OTHER_TOKEN);
  });
});
