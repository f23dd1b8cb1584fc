// POST /api/conversations/{id}/children (OpenHands 1.58 start_child_conversation): a child with the
// parent's configuration and a fresh history runs its task at once; the parent lists it in
// sub_conversation_ids; with isolation 'worktree' (the default) a parent in a git repository gives
// the child a git worktree of its own, removed when the child is deleted.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createAgent } from '../agent/agent.ts';
import { startScriptedLlm, type ScriptedLlm } from '../testing/scripted-llm/server.ts';
import { eventually, startTestServer, tempDir, type TestServer } from './test-support.ts';

let llm: ScriptedLlm;
let dir: ReturnType<typeof tempDir>;
let s: TestServer;

beforeEach(async () => {
  llm = await startScriptedLlm();
  dir = tempDir();
  s = await startTestServer(dir.path, { createAgent });
});
afterEach(async () => {
  await s.close();
  await llm.close();
  dir.remove();
});

const startParent = async (wd: string) =>
  (
    await s.api('/api/conversations', {
      method: 'POST',
      body: {
        workspace: { kind: 'LocalWorkspace', working_dir: wd },
        agent: { llm: { model: 'openai/parent-model', base_url: llm.url, api_key: 'sk-parent-key' }, tools: [] },
        secrets: { DEPLOY_TOKEN: { kind: 'StaticSecret', value: 'tok-123456' } },
        tags: { team: 'core' },
      },
    })
  ).body.id as string;

describe('child conversations', () => {
  it("start with the parent's model, key and secrets, run the task at once, and are listed by the parent", async () => {
    const parent = await startParent(dir.path);
    llm.push({ content: 'child done' });
    const res = await s.api(`/api/conversations/${parent}/children`, { method: 'POST', body: { task: 'count the files', title: 'counter' } });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ parent_conversation_id: parent, title: 'counter', workspace: dir.path, isolation: 'shared', url: null });
    expect(['running', 'finished']).toContain(res.body.status);
    const child = res.body.conversation_id as string;
    expect(child).not.toBe(parent);

    await eventually(async () => (await s.api(`/api/conversations/${child}`)).body.execution_status === 'finished', 15_000);
    const request = llm.requests.at(-1)!;
    expect(request.model).toBe('parent-model');
    expect(request.headers['authorization']).toBe('Bearer sk-parent-key');
    expect(JSON.stringify(request.messages.filter((m) => m.role === 'user'))).toContain('count the files');

    const info = (await s.api(`/api/conversations/${child}`)).body;
    expect(info).toMatchObject({ parent_conversation_id: parent, title: 'counter', tags: { team: 'core' } });
    expect(Object.keys(info.secret_registry.secret_sources)).toEqual(['DEPLOY_TOKEN']);
    // The child's history is its own: no event of the parent (which has none of its own here but the system prompt).
    const childEvents = (await s.api(`/api/conversations/${child}/events/search?limit=100`)).body.items as any[];
    expect(childEvents.filter((e) => e.kind === 'MessageEvent' && e.source === 'user')).toHaveLength(1);
    expect((await s.api(`/api/conversations/${parent}`)).body.sub_conversation_ids).toEqual([child]);
    // The parent did not run.
    expect((await s.api(`/api/conversations/${parent}`)).body.execution_status).toBe('idle');
  }, 30_000);

  it('404 for an unknown parent, 422 for an empty task or a bad isolation', async () => {
    const parent = await startParent(dir.path);
    const unknown = await s.api('/api/conversations/00000000-0000-4000-8000-000000000000/children', { method: 'POST', body: { task: 'x' } });
    expect(unknown.status).toBe(404);
    expect(unknown.body.detail).toBe('Parent conversation not found');
    const empty = await s.api(`/api/conversations/${parent}/children`, { method: 'POST', body: { task: '' } });
    expect(empty.status).toBe(422);
    expect(JSON.stringify(empty.body)).toContain('task');
    const bad = await s.api(`/api/conversations/${parent}/children`, { method: 'POST', body: { task: 'x', isolation: 'copy' } });
    expect(bad.status).toBe(422);
  }, 30_000);

  it("in a git repository: a worktree of the parent's repository on openhands/<child id>, told to the agent, removed with the child; 'shared' stays in place", async () => {
    const root = realpathSync(join(dir.path, 'workspace'));
    const repo = join(root, 'repo');
    mkdirSync(join(repo, 'pkg'), { recursive: true });
    const git = (cwd: string, ...args: string[]) => execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@example.com', '-C', cwd, ...args], { encoding: 'utf8' }).trim();
    git(repo, 'init', '-q', '-b', 'main');
    writeFileSync(join(repo, 'pkg', 'a.txt'), 'committed\n');
    git(repo, 'add', '.');
    git(repo, 'commit', '-q', '-m', 'init');
    const parent = await startParent(join(repo, 'pkg'));

    llm.push({ content: 'child done' });
    const res = await s.api(`/api/conversations/${parent}/children`, { method: 'POST', body: { task: 'edit a.txt' } });
    expect(res.status).toBe(201);
    const child = res.body.conversation_id as string;
    const wt = join(root, '.conversation-worktrees', child, 'repo');
    expect(res.body).toMatchObject({ isolation: 'worktree', workspace: join(wt, 'pkg') });
    expect(readFileSync(join(wt, 'pkg', 'a.txt'), 'utf8')).toBe('committed\n');
    expect(git(wt, 'rev-parse', '--abbrev-ref', 'HEAD')).toBe(`openhands/${child}`);
    expect((await s.api(`/api/conversations/${child}`)).body.workspace.working_dir).toBe(join(wt, 'pkg'));
    expect((await s.api(`/api/conversations/${parent}`)).body.workspace.working_dir).toBe(join(repo, 'pkg'));
    await eventually(async () => (await s.api(`/api/conversations/${child}`)).body.execution_status === 'finished', 15_000);
    const system = JSON.stringify(llm.requests.at(-1)!.messages.filter((m) => m.role === 'system'));
    expect(system).toContain('dedicated git worktree');
    expect(system).toContain(`openhands/${child}`);

    expect((await s.api(`/api/conversations/${child}`, { method: 'DELETE' })).status).toBe(200);
    expect(existsSync(join(root, '.conversation-worktrees', child))).toBe(false);
    expect(git(repo, 'worktree', 'list')).not.toContain(child);

    llm.push({ content: 'ok' });
    const shared = await s.api(`/api/conversations/${parent}/children`, { method: 'POST', body: { task: 'x', isolation: 'shared' } });
    expect(shared.status).toBe(201);
    expect(shared.body).toMatchObject({ isolation: 'shared', workspace: join(repo, 'pkg') });
  }, 30_000);

  it('a parent in a repository outside the workspace root: 422, no child made', async () => {
    const repo = join(dir.path, 'outside');
    mkdirSync(repo);
    execFileSync('git', ['init', '-q', repo]);
    const parent = await startParent(repo);
    const res = await s.api(`/api/conversations/${parent}/children`, { method: 'POST', body: { task: 'x' } });
    expect(res.status).toBe(422);
    expect(res.body.detail[0].loc).toEqual(['body', 'isolation']);
    expect((await s.api(`/api/conversations/${parent}`)).body.sub_conversation_ids).toEqual([]);
  }, 30_000);
});
