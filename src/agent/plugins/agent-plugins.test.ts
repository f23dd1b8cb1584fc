// Plugins through the agent server with the real agent and a scripted model: a plugin in a real
// local git repository (tagged ref, repo_path subdirectory) brings a skill, a command, a hook, an
// agent definition and an MCP server whose token comes from the start request's secrets.
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { createAgent } from '../agent.ts';
import { startScriptedLlm, type ScriptedLlm } from '../../testing/scripted-llm/server.ts';
import { STDIO_SERVER } from '../../testing/mcp/server.ts';
import { eventually, startTestServer, tempDir, userText, type TestServer } from '../../agent-server/test-support.ts';
import { checkRepoPath, fetchPlugin, parseSource, PluginFetchError } from './index.ts';

const TOKEN = 'plugin-token-5d81e2';
let llm: ScriptedLlm;
let dir: ReturnType<typeof tempDir>;
let s: TestServer;
let logText = '';

beforeAll(async () => (llm = await startScriptedLlm()));
afterAll(() => llm.close());
beforeEach(async () => {
  dir = tempDir('agent-plugins-');
  logText = '';
  const sink = new Writable({ write: (chunk, _enc, cb) => ((logText += String(chunk)), cb()) });
  s = await startTestServer(dir.path, { createAgent, llmDefaults: { model: 'openai/scripted', baseUrl: llm.url, apiKey: 'sk-default' }, log: pino({ level: 'trace' }, sink) });
});
afterEach(async () => {
  await s.close();
  dir.remove();
});

const hasGit = (() => {
  try {
    execFileSync('git', ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();

function write(path: string, text: string): void {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, text);
}

function git(cwd: string, ...args: string[]): void {
  execFileSync('git', ['-c', 'user.name=Test', '-c', 'user.email=test@example.com', ...args], { cwd, stdio: 'ignore' });
}

/** A repository with the plugin under plugins/acme, tagged v1, then a later commit the tag must not see. */
function pluginRepo(record: string, hookMark: string): string {
  const repo = join(dir.path, 'plugin-repo');
  const p = join(repo, 'plugins', 'acme');
  write(join(p, '.plugin', 'plugin.json'), JSON.stringify({ name: 'acme-tools', version: '1.2.0', description: 'Tools from ACME' }));
  write(join(p, 'skills', 'release-notes', 'SKILL.md'), '---\nname: release-notes\ndescription: How ACME writes release notes\n---\nWrite release notes as bullet lists.\n');
  write(join(p, 'commands', 'greet.md'), '---\ndescription: Greet the user\nargument-hint: a name\n---\nGreet $ARGUMENTS warmly (version one).\n');
  write(join(p, 'agents', 'reviewer.md'), '---\nname: reviewer\ndescription: Reviews code\n---\nYou review code.\n');
  write(join(p, 'hooks', 'mark.sh'), `#!/bin/sh\necho started >> '${hookMark}'\n`);
  chmodSync(join(p, 'hooks', 'mark.sh'), 0o755);
  write(join(p, 'hooks', 'hooks.json'), JSON.stringify({ SessionStart: [{ hooks: [{ command: '${CLAUDE_PLUGIN_ROOT}/hooks/mark.sh' }] }] }));
  write(join(p, '.mcp.json'), JSON.stringify({ mcpServers: { acme: { command: process.execPath, args: [STDIO_SERVER, record], env: { API_TOKEN: '${API_TOKEN}' } } } }));
  git(repo, 'init', '-q', '-b', 'main');
  git(repo, 'add', '.');
  git(repo, 'commit', '-q', '-m', 'plugin v1');
  git(repo, 'tag', 'v1');
  write(join(p, 'commands', 'greet.md'), '---\ndescription: Greet the user\n---\nGreet (version two).\n');
  git(repo, 'commit', '-q', '-am', 'plugin v2');
  return repo;
}

describe.skipIf(!hasGit)('plugins of a conversation', () => {
  it('loads a plugin from a local git repository at a tag: command trigger, skill, hook, MCP server with the secret filled in', async () => {
    const record = join(dir.path, 'record.jsonl');
    const hookMark = join(dir.path, 'hook-mark.txt');
    const repo = pluginRepo(record, hookMark);
    llm.push(
      (req) => {
        expect((req.tools ?? []).map((t) => t.function.name)).toEqual(expect.arrayContaining(['whoami', 'echo', 'invoke_skill']));
        expect(JSON.stringify(req.messages[0])).toContain('release-notes');
        // The model is told the plugin's subagent will not run, so it does not count on it.
        expect(JSON.stringify(req.messages)).toContain('acme-tools:reviewer (agents/reviewer.md)');
        return { toolCalls: [{ name: 'whoami', arguments: {} }] };
      },
      { toolCalls: [{ name: 'finish', arguments: { message: 'greeted' } }] },
    );
    const body = {
      workspace: { kind: 'LocalWorkspace', working_dir: join(dir.path, 'project') },
      agent: { llm: { model: 'openai/scripted' } },
      plugins: [{ source: repo, ref: 'v1', repo_path: 'plugins/acme' }],
      secrets: { API_TOKEN: { kind: 'StaticSecret', value: TOKEN } },
    };
    const id = (await s.api('/api/conversations', { method: 'POST', body })).body.id as string;
    await s.api(`/api/conversations/${id}/events`, { method: 'POST', body: userText('/acme-tools:greet Ada', true) });
    await eventually(async () => ['finished', 'error'].includes((await s.api(`/api/conversations/${id}`)).body.execution_status), 20_000);
    const items = (await s.api(`/api/conversations/${id}/events/search?limit=100`)).body.items as any[];
    const err = items.find((e) => e.kind === 'ConversationErrorEvent');
    expect(err).toBeUndefined();

    // The command triggered on the message, in its v1 text (the tag, not the later commit).
    const msg = items.find((e) => e.kind === 'MessageEvent' && e.source === 'user');
    expect(msg.activated_skills).toEqual(['acme-tools:greet']);
    expect(JSON.stringify(msg.extended_content)).toContain('version one');
    expect(JSON.stringify(msg.extended_content)).not.toContain('version two');
    // The hook ran (plugin root filled in), the MCP server got the secret, events and log do not show it.
    expect(readFileSync(hookMark, 'utf8')).toBe('started\n');
    expect(items.some((e) => e.kind === 'HookExecutionEvent' && e.hook_event_type === 'SessionStart')).toBe(true);
    expect(JSON.parse(readFileSync(record, 'utf8').trim()).token).toBe(TOKEN);
    const obs = items.find((e) => e.kind === 'ObservationEvent' && e.observation.kind === 'MCPToolObservation');
    expect(obs.observation.content[1].text).toBe('token=<secret-hidden>');
    expect(JSON.stringify(items)).not.toContain(TOKEN);
    expect(logText).not.toContain(TOKEN);
    // The conversation info lists the plugin's skills in agent_context.skills (as OpenHands merges them). Asked with include_skills=true: 1.58 leaves them out otherwise.
    const info = (await s.api(`/api/conversations/${id}?include_skills=true`)).body;
    const listed = info.agent.agent_context.skills as { name: string; type: string; content: string }[];
    expect(listed.find((k) => k.name === 'release-notes')).toMatchObject({ type: 'agentskills', content: expect.stringContaining('bullet lists') });
    expect(listed.map((k) => k.name)).toContain('acme-tools:greet');

    // The subagent of agents/reviewer.md cannot run here: the conversation says so once, not per run.
    const notices = (all: any[]) => all.filter((e) => e.kind === 'MessageEvent' && e.source === 'environment' && JSON.stringify(e.llm_message).includes('Plugin subagents will not run'));
    expect(notices(items)).toHaveLength(1);
    expect(notices(items)[0].llm_message.content[0].text).toContain('acme-tools:reviewer (agents/reviewer.md) is not available');
    llm.push({ toolCalls: [{ name: 'finish', arguments: { message: 'again' } }] });
    await s.api(`/api/conversations/${id}/events`, { method: 'POST', body: userText('once more', true) });
    await eventually(async () => ((await s.api(`/api/conversations/${id}/events/search?limit=100`)).body.items as any[]).some((e) => e.kind === 'ActionEvent' && e.action?.message === 'again'), 20_000);
    await eventually(async () => (await s.api(`/api/conversations/${id}`)).body.execution_status === 'finished', 20_000);
    expect(notices((await s.api(`/api/conversations/${id}/events/search?limit=100`)).body.items)).toHaveLength(1);
  });

  it('lists the plugin skills right after create, without a message, and still after a restart of the agent server', async () => {
    const repo = pluginRepo(join(dir.path, 'record.jsonl'), join(dir.path, 'hook-mark.txt'));
    const modelCalls = llm.requests.length;
    const body = {
      workspace: { kind: 'LocalWorkspace', working_dir: join(dir.path, 'project') },
      agent: { llm: { model: 'openai/scripted' }, agent_context: { skills: [{ name: 'own', content: 'Own skill.' }] } },
      plugins: [{ source: repo, ref: 'v1', repo_path: 'plugins/acme' }],
    };
    const created = await s.api('/api/conversations', { method: 'POST', body });
    expect(created.status).toBe(201);
    const id = created.body.id as string;
    const names = async () => ((await s.api(`/api/conversations/${id}?include_skills=true`)).body.agent.agent_context.skills as { name: string }[]).map((k) => k.name);
    await eventually(async () => (await names()).includes('release-notes'), 5_000);
    expect((await names()).sort()).toEqual(['acme-tools:greet', 'own', 'release-notes']);
    expect((await s.api('/api/conversations/search?include_skills=true')).body.items[0].agent.agent_context.skills.map((k: { name: string }) => k.name)).toContain('release-notes');

    await s.close();
    s = await startTestServer(dir.path, { createAgent, llmDefaults: { model: 'openai/scripted', baseUrl: llm.url, apiKey: 'sk-default' } });
    expect((await names()).sort()).toEqual(['acme-tools:greet', 'own', 'release-notes']);
    const info = (await s.api(`/api/conversations/${id}?include_skills=true`)).body;
    expect(info.agent.agent_context.skills.find((k: { name: string }) => k.name === 'release-notes')).toMatchObject({ content: expect.stringContaining('bullet lists') });
    expect(info.execution_status).toBe('idle');
    expect(llm.requests).toHaveLength(modelCalls); // nothing ran
  });

  it('a plugin that cannot be fetched does not fail the create; the run ends with a clear error', async () => {
    const body = {
      workspace: { kind: 'LocalWorkspace', working_dir: join(dir.path, 'project') },
      agent: { llm: { model: 'openai/scripted' } },
      plugins: [{ source: `file://${join(dir.path, 'nowhere.git')}`, ref: 'main' }],
    };
    const created = await s.api('/api/conversations', { method: 'POST', body });
    expect(created.status).toBe(201);
    const id = created.body.id as string;
    await s.api(`/api/conversations/${id}/events`, { method: 'POST', body: userText('hi', true) });
    await eventually(async () => (await s.api(`/api/conversations/${id}`)).body.execution_status === 'error', 20_000);
    expect((await s.api(`/api/conversations/${id}?include_skills=true`)).body.agent.agent_context?.skills ?? []).toEqual([]);
    const items = (await s.api(`/api/conversations/${id}/events/search`)).body.items as any[];
    const err = items.find((e) => e.kind === 'ConversationErrorEvent');
    expect(err.code).toBe('PluginLoadError');
    expect(err.detail).toContain('could not be cloned');
  });

  it('sources and repo_path rules', async () => {
    expect(parseSource('github:acme/tools', '/w')).toEqual({ kind: 'git', url: 'https://github.com/acme/tools.git' });
    expect(parseSource('github:acme/tools/plugins/lint', '/w')).toEqual({ kind: 'git', url: 'https://github.com/acme/tools.git', subdir: 'plugins/lint' });
    expect(() => parseSource('github:acme', '/w')).toThrow(PluginFetchError);
    expect(parseSource('https://git.example/x.git', '/w')).toEqual({ kind: 'git', url: 'https://git.example/x.git' });
    expect(parseSource('git@host:team/repo.git', '/w').kind).toBe('git');
    expect(parseSource('./plugins/p', '/w')).toEqual({ kind: 'local', path: '/w/plugins/p' });
    expect(checkRepoPath('a/./b/')).toBe('a/b');
    for (const bad of ['../x', 'a/../../b', '/etc']) expect(() => checkRepoPath(bad)).toThrow(PluginFetchError);
    await expect(fetchPlugin({ source: join(dir.path, 'missing') }, { cacheDir: join(dir.path, 'c'), baseDir: dir.path })).rejects.toThrow(/does not exist/);
    expect(existsSync(join(dir.path, 'c'))).toBe(false);
  });
});
