// RUNNING_SETUP_SCRIPT, SETTING_UP_GIT_HOOKS and SETTING_UP_SKILLS doing their work: a real agent
// server (fake agents), a real Git smart-HTTP server holding the selected repository, real bash
// and real `git commit` against the installed hook.
import { execFile, execFileSync, spawnSync } from 'node:child_process';
import { promisify } from 'node:util';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConversationKind, type StartTaskStatus } from '../../api/conversation.ts';
import { SecretKind } from '../../api/secret.ts';
import { FakeAgents, startTestServer, tempDir, type TestServer } from '../../agent-server/test-support.ts';
import { AgentServerClient } from '../../runtime/agent-server-client.ts';
import { startGitHttpServer, type GitHttpServer } from '../../testing/git-http/server.ts';
import { controllerEnv, NS } from '../testing/env.ts';
import { ConversationReconciler } from './reconciler.ts';
import { DEFAULT_GIT_SETTINGS } from './repository.ts';
import { installGitHooks } from './workspace-setup.ts';

const hex = (n: number) => n.toString(16).padStart(32, '0');
const SECRET = 'sk-setup-secret-4711';
const GIT_ENV = { ...process.env, GIT_AUTHOR_NAME: 'T', GIT_AUTHOR_EMAIL: 't@example.invalid', GIT_COMMITTER_NAME: 'T', GIT_COMMITTER_EMAIL: 't@example.invalid' };

let dir: ReturnType<typeof tempDir>;
let server: TestServer;
let git: GitHttpServer;

beforeAll(async () => {
  dir = tempDir();
  // A user skill in the agent server's home: the start asks for the user's skills too (load_user_skills).
  mkdirSync(join(dir.path, 'home', '.agents', 'skills', 'mine'), { recursive: true });
  writeFileSync(join(dir.path, 'home', '.agents', 'skills', 'mine', 'SKILL.md'), '---\nname: mine\ndescription: a user skill\n---\nMine.\n');
  server = await startTestServer(dir.path, { agents: new FakeAgents(async () => undefined), sessionKeys: [], home: join(dir.path, 'home') });
  git = await startGitHttpServer();
  git.createRepo('acme/good', {
    main: {
      'README.md': 'good\n',
      // Output on both streams, a conversation secret echoed (masked on the way out), a file left behind.
      '.openhands/setup.sh': `echo "installing deps"\necho "warn: slow mirror" >&2\necho "key ${SECRET}"\necho done > .setup-ran\n`,
      '.openhands/pre-commit.sh': 'if git diff --cached --name-only | grep -q FORBIDDEN; then echo "pre-commit: FORBIDDEN files may not be committed"; exit 1; fi\n',
      '.agents/skills/deploy/SKILL.md': '---\nname: deploy\ndescription: how to deploy\n---\nRun make deploy.\n',
    },
  });
  // `house` defined old-style (microagents/) and new-style (skills/): spec part 4 rule 6 says it must not be.
  git.createRepo('acme/.agents', { main: { 'skills/house/SKILL.md': '---\nname: house\ndescription: house rules\n---\nUse tabs.\n', 'microagents/house.md': '---\nname: house\n---\nUse spaces.\n' } });
  git.createRepo('acme/broken', { main: { 'README.md': 'broken\n', '.openhands/setup.sh': 'echo "fetching toolchain"\necho "error: toolchain 9.9 not found" >&2\nexit 3\n' } });
  git.createRepo('acme/plain', { main: { 'README.md': 'plain\n' } });
});
afterAll(async () => {
  await server?.close();
  await git?.close();
  dir?.remove();
});

function setup() {
  const env = controllerEnv();
  const events: string[] = [];
  const reconciler = new ConversationReconciler({
    store: env.store,
    clock: env.clock,
    settings: env.settings,
    git: { ...DEFAULT_GIT_SETTINGS, hosts: { ...DEFAULT_GIT_SETTINGS.hosts, github: git.url } },
    recorder: { record: (_o, type, reason, message) => void events.push(`${type} ${reason}: ${message}`) },
  });
  return { env, events, reconciler };
}

async function bootSandbox(env: ReturnType<typeof controllerEnv>): Promise<void> {
  await env.createSandbox('warm', 'alice');
  await env.settleSandbox('warm');
  env.runtime.boot('warm', server.url);
  await env.settleSandbox('warm');
}

/** Reconciles until READY or ERROR, returning every (status, detail) the start task went through. */
async function runStart(s: ReturnType<typeof setup>, name: string): Promise<{ status: StartTaskStatus; detail?: string }[]> {
  const seen: { status: StartTaskStatus; detail?: string }[] = [];
  for (let i = 0; i < 16; i++) {
    await s.reconciler.reconcile(`${NS}/${name}`);
    const t = (await s.env.store.get(ConversationKind, NS, name))!.status!.startTask!;
    const last = seen.at(-1);
    if (!last || last.status !== t.status || last.detail !== t.detail) seen.push({ status: t.status, ...(t.detail ? { detail: t.detail } : {}) });
    if (t.status === 'READY' || t.status === 'ERROR') break;
  }
  return seen;
}

/** How many `.openhands` listings (GET /api/agentyard/files) the agent server has answered, from its /metrics. */
async function listings(): Promise<number> {
  const text = await (await fetch(`${server.url}/metrics`)).text();
  return text
    .split('\n')
    .filter((l) => l.startsWith('http_requests_total{') && l.includes('method="GET"') && l.includes('route="/api/agentyard/files"'))
    .reduce((n, l) => n + Number(l.split(' ').at(-1)), 0);
}

const commit = (repo: string, file: string) => {
  writeFileSync(join(repo, file), 'x\n');
  execFileSync('git', ['add', file], { cwd: repo, env: GIT_ENV });
  return spawnSync('git', ['commit', '-m', `add ${file}`], { cwd: repo, env: GIT_ENV, encoding: 'utf8' });
};

describe('the start task steps do their work', () => {
  it('runs .openhands/setup.sh, installs .openhands/pre-commit.sh as the pre-commit hook, and reports the skills at SETTING_UP_SKILLS', async () => {
    const s = setup();
    await bootSandbox(s.env);
    await s.env.store.create(SecretKind, { apiVersion: 'v1', kind: 'Secret', metadata: { name: `${hex(1)}-secrets`, namespace: NS }, data: { DEPLOY_KEY: Buffer.from(SECRET).toString('base64') } });
    await s.env.createConversation(hex(1), { sandboxName: 'warm', selectedRepository: 'acme/good', secretsRef: `${hex(1)}-secrets` });
    const steps = await runStart(s, hex(1));
    expect(steps.at(-1)?.status, steps.at(-1)?.detail).toBe('READY');
    const repo = join(server.dir, 'workspace', 'good');

    // The setup script ran in the clone; its output (both streams, the secret masked) is an event.
    expect(readFileSync(join(repo, '.setup-ran'), 'utf8')).toBe('done\n');
    const ran = s.events.find((e) => e.startsWith('Normal SetupScriptRan'));
    expect(ran).toMatch(/installing deps\nwarn: slow mirror\nkey <secret-hidden>/);
    expect(s.events.join('\n')).not.toContain(SECRET);

    // The hook is installed and works: a real commit of a forbidden file is refused, another goes in.
    expect(s.events).toContainEqual(expect.stringMatching(/^Normal GitHooksInstalled: /));
    const refused = commit(repo, 'FORBIDDEN.txt');
    expect(refused.status).not.toBe(0);
    expect(refused.stdout + refused.stderr).toContain('FORBIDDEN files may not be committed');
    execFileSync('git', ['reset', '-q', 'HEAD', 'FORBIDDEN.txt'], { cwd: repo });
    expect(commit(repo, 'ok.txt').status).toBe(0);

    // SETTING_UP_SKILLS named the repository's, the organization's and the user's skills before the conversation started.
    const skillsStep = steps.find((t) => t.status === 'SETTING_UP_SKILLS' && t.detail);
    expect(skillsStep?.detail).toBe('Skills: deploy, house, mine');
    expect(steps.findIndex((t) => t === skillsStep)).toBeLessThan(steps.findIndex((t) => t.status === 'STARTING_CONVERSATION'));
    expect(s.events).toContainEqual('Normal SkillsLoaded: Skills: deploy, house, mine');
    // The duplicate name: the new-style skill is used, and the start carries a Warning naming both places.
    expect(s.events).toContainEqual(expect.stringMatching(/^Warning SkillNameConflict: Skill house is defined in both microagents\/ \(old style\) and skills\/ \(new style\) of acme's configuration repository/));
    const conv = (await s.env.store.get(ConversationKind, NS, hex(1)))!;
    expect(conv.status?.startSkills?.skills.find((k) => k['name'] === 'house')?.['content']).toContain('Use tabs.');
    // What was loaded is what the agent server was given.
    const started = await server.api(`/api/conversations/search`);
    expect(started.body.items.map((c: { id: string }) => c.id.replaceAll('-', ''))).toContain(hex(1));
  });

  it('a setup script that fails ends the start in ERROR with its output, and the conversation never starts', async () => {
    const s = setup();
    await bootSandbox(s.env);
    await s.env.createConversation(hex(2), { sandboxName: 'warm', selectedRepository: 'acme/broken' });
    const steps = await runStart(s, hex(2));
    const last = steps.at(-1)!;
    expect(last.status).toBe('ERROR');
    expect(last.detail).toBe('.openhands/setup.sh exited with 3:\nfetching toolchain\nerror: toolchain 9.9 not found');
    const conv = (await s.env.store.get(ConversationKind, NS, hex(2)))!;
    expect(conv.status?.conditions?.find((c) => c.type === 'Ready')?.reason).toBe('SetupScriptFailed');
    expect(s.events).toContainEqual(expect.stringMatching(/^Warning StartFailed: \.openhands\/setup\.sh exited with 3/));
    const started = await server.api(`/api/conversations/search`);
    expect(started.body.items.map((c: { id: string }) => c.id.replaceAll('-', ''))).not.toContain(hex(2));
  });

  it('a repository without .openhands passes both steps untouched: no hook, no event', async () => {
    const s = setup();
    await bootSandbox(s.env);
    await s.env.createConversation(hex(3), { sandboxName: 'warm', selectedRepository: 'acme/plain' });
    const listingsBefore = await listings();
    const steps = await runStart(s, hex(3));
    // One `.openhands` listing for both steps: the Git-hook step reuses the setup-script step's (that script did not run).
    expect((await listings()) - listingsBefore).toBe(1);
    expect(steps.map((t) => t.status)).toEqual(['WAITING_FOR_SANDBOX', 'PREPARING_REPOSITORY', 'RUNNING_SETUP_SCRIPT', 'SETTING_UP_GIT_HOOKS', 'SETTING_UP_SKILLS', 'SETTING_UP_SKILLS', 'STARTING_CONVERSATION', 'READY']);
    expect(steps.find((t) => t.status === 'SETTING_UP_SKILLS' && t.detail)?.detail).toBe('Skills: house, mine');
    expect(existsSync(join(server.dir, 'workspace', 'plain', '.git', 'hooks', 'pre-commit'))).toBe(false);
    expect(s.events.filter((e) => /SetupScript|GitHooks/.test(e))).toEqual([]);
    // Without .openhands no shell was spawned to look for the scripts (a directory listing said so).
    const bash = (await (await fetch(`${server.url}/api/bash/bash_events/search?kind__eq=BashCommand&limit=100`)).json()) as { items: { command: string; cwd?: string | null }[] };
    expect(bash.items.filter((c) => c.cwd?.endsWith('plain'))).toEqual([]);
  });

  it('keeps a pre-commit hook already in place (run first, as pre-commit.local) and installs its own only once', async () => {
    const repo = join(server.dir, 'workspace', 'hooked');
    // Not execFileSync: the Git server answers on this process's event loop.
    await promisify(execFile)('git', ['clone', '-q', `${git.url}/acme/good.git`, repo]);
    writeFileSync(join(repo, '.git', 'hooks', 'pre-commit'), '#!/bin/sh\necho "team hook ran"\n', { mode: 0o755 });
    const client = new AgentServerClient(server.url, undefined);
    const conv = { apiVersion: 'agentyard.dev/v1alpha1', kind: 'Conversation', metadata: { name: hex(4) }, spec: { selectedRepository: 'acme/hooked' } } as const;
    for (let i = 0; i < 2; i++) expect(await installGitHooks(client, conv, {})).toMatchObject({ ran: true, exitCode: 0 });
    expect(readFileSync(join(repo, '.git', 'hooks', 'pre-commit.local'), 'utf8')).toBe('#!/bin/sh\necho "team hook ran"\n');
    const done = commit(repo, 'fine.txt');
    expect(done.status).toBe(0);
    expect(done.stdout + done.stderr).toContain('team hook ran');
    expect(commit(repo, 'FORBIDDEN').status).not.toBe(0);
  });
});
