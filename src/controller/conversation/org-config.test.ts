// Configuration repository skills against a real agent server (POST /api/skills clones them) and a
// real Git smart-HTTP server: organization < user < repository for one skill name, the user's
// repository also without a selected repository, `service-config` where leading periods are
// forbidden, and the token only in URLs of configured hosts.
import { execFileSync } from 'node:child_process';
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Conversation, ConversationSpec } from '../../api/conversation.ts';
import { API_VERSION } from '../../api/meta.ts';
import { startTestServer, tempDir, TEST_KEY, type TestServer } from '../../agent-server/test-support.ts';
import { AgentServerClient } from '../../runtime/agent-server-client.ts';
import { startGitHttpServer, type GitHttpServer } from '../../testing/git-http/server.ts';
import { configRepositories, orgConfigSkills } from './org-config.ts';
import { DEFAULT_GIT_SETTINGS, type GitSettings } from './repository.ts';

const TOKEN = 'ghp_configRepoToken77';
const skill = (name: string, text: string) => ({ [`skills/${name}/SKILL.md`]: `---\nname: ${name}\ndescription: ${text}\n---\n${text}\n` });

let dir: ReturnType<typeof tempDir>;
let server: TestServer;
let git: GitHttpServer;
let settings: GitSettings;
let client: AgentServerClient;

const conv = (spec: Partial<ConversationSpec>): Conversation => ({ apiVersion: API_VERSION, kind: 'Conversation', metadata: { name: 'c1', namespace: 'default' }, spec: { owner: 'u1', ...spec } });
const byName = (skills: Record<string, unknown>[]) => Object.fromEntries(skills.map((s) => [s['name'] as string, String(s['content']).trim()]));

beforeAll(async () => {
  dir = tempDir();
  server = await startTestServer(dir.path);
  git = await startGitHttpServer();
  git.createRepo('acme/.agents', { main: { ...skill('style', 'organization style'), ...skill('review', 'organization review'), ...skill('deploy', 'organization deploy') } }, { token: TOKEN });
  git.createRepo('grace/.agents', { main: { ...skill('style', 'user style'), ...skill('review', 'user review'), ...skill('notes', 'user notes') } }, { token: TOKEN });
  git.createRepo('grace/service-config', { main: skill('gitlab-notes', 'user notes on gitlab') }, { token: TOKEN });
  // The selected repository's clone, where the conversation works: it defines `review` itself.
  const project = join(dir.path, 'workspace', 'widgets', '.agents', 'skills', 'review', 'SKILL.md');
  mkdirSync(dirname(project), { recursive: true });
  writeFileSync(project, '---\nname: review\ndescription: repository review\n---\nrepository review\n');
  settings = { ...DEFAULT_GIT_SETTINGS, hosts: { ...DEFAULT_GIT_SETTINGS.hosts, github: git.url, gitlab: git.url } };
  client = new AgentServerClient(server.url, TEST_KEY);
});
afterAll(async () => {
  await server?.close();
  await git?.close();
  dir?.remove();
});

describe('configuration repository skills', () => {
  it('organization < user < repository for the same name', async () => {
    const c = conv({ selectedRepository: 'acme/widgets', ownerGitLogin: { login: 'grace', provider: 'github' } });
    const skills = byName(await orgConfigSkills(client, c, { GITHUB_TOKEN: TOKEN }, settings));
    // `review` is the repository's own: left to the agent's project skills, not sent over them.
    expect(skills).toEqual({ style: 'user style', deploy: 'organization deploy', notes: 'user notes' });
  });

  it("loads the user's repository without a selected repository, and only the organization's without a login", async () => {
    expect(byName(await orgConfigSkills(client, conv({ ownerGitLogin: { login: 'grace', provider: 'github' } }), { GITHUB_TOKEN: TOKEN }, settings))).toEqual({
      style: 'user style',
      review: 'user review',
      notes: 'user notes',
    });
    expect(Object.keys(byName(await orgConfigSkills(client, conv({ selectedRepository: 'acme/widgets' }), { GITHUB_TOKEN: TOKEN }, settings))).sort()).toEqual(['deploy', 'style']);
    expect(await orgConfigSkills(client, conv({}), { GITHUB_TOKEN: TOKEN }, settings)).toEqual([]);
  });

  it('uses service-config on a host that forbids leading periods, with that host’s token', async () => {
    const skills = byName(await orgConfigSkills(client, conv({ ownerGitLogin: { login: 'grace', provider: 'gitlab' } }), { GITLAB_TOKEN: TOKEN, GITHUB_TOKEN: 'ghp_notForGitlab' }, settings));
    expect(skills).toEqual({ 'gitlab-notes': 'user notes on gitlab' });
  });

  it('a missing or unreadable repository gives no skills; a host that is not configured gets no request and no token', async () => {
    expect(await orgConfigSkills(client, conv({ ownerGitLogin: { login: 'nobody', provider: 'github' } }), { GITHUB_TOKEN: TOKEN }, settings)).toEqual([]);
    expect(await orgConfigSkills(client, conv({ ownerGitLogin: { login: 'grace', provider: 'github' } }), { GITHUB_TOKEN: 'ghp_wrong' }, settings)).toEqual([]);
    expect(configRepositories(conv({ ownerGitLogin: { login: 'grace', provider: 'forgejo' } }), { FORGEJO_TOKEN: TOKEN }, settings)).toEqual([]);
    // The user's own repository selected: its configuration repository is cloned once.
    const same = configRepositories(conv({ selectedRepository: 'grace/dotfiles', ownerGitLogin: { login: 'grace', provider: 'github' } }), { GITHUB_TOKEN: TOKEN }, settings);
    expect(same).toHaveLength(1);
    expect(new URL(same[0]!.org_repo_url).origin).toBe(git.url);
  });

  it("never puts the user's token in a process's argv (ps -ef): git gets it as a header in its environment", async () => {
    // Every git the agent server runs goes through this wrapper, which records its argv and has git
    // trace the argv of every process it starts in turn (git-remote-http gets the remote URL).
    const realGit = execFileSync('sh', ['-c', 'command -v git'], { encoding: 'utf8' }).trim();
    const bin = join(dir.path, 'git-shim');
    mkdirSync(bin, { recursive: true });
    const argvLog = join(dir.path, 'git-argv.log');
    const traceLog = join(dir.path, 'git-trace.log');
    writeFileSync(join(bin, 'git'), `#!/bin/sh\nprintf '%s\\n' "git $*" >> '${argvLog}'\nGIT_TRACE='${traceLog}' exec '${realGit}' "$@"\n`);
    chmodSync(join(bin, 'git'), 0o755);
    const path = process.env.PATH;
    process.env.PATH = `${bin}:${path}`;
    try {
      const skills = byName(await orgConfigSkills(client, conv({ ownerGitLogin: { login: 'grace', provider: 'github' } }), { GITHUB_TOKEN: TOKEN }, settings));
      expect(skills).toMatchObject({ notes: 'user notes' }); // the private repository was read with the token
    } finally {
      process.env.PATH = path;
    }
    const argv = readFileSync(argvLog, 'utf8');
    expect(argv).toMatch(/git clone .*grace\/\.agents\.git/);
    const children = readFileSync(traceLog, 'utf8').split('\n').filter((l) => l.includes('run_command:') || l.includes('built-in:') || l.includes('exec:'));
    expect(children.some((l) => l.includes('remote-http'))).toBe(true);
    for (const line of [...argv.split('\n'), ...children]) expect(line).not.toContain(TOKEN);
    expect(argv + children.join('\n')).not.toContain(Buffer.from(`x-access-token:${TOKEN}`).toString('base64'));
  });
});
