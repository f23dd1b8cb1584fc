// Conversation git worktrees (OpenHands 1.58 `worktree` / `worktree_options` of a start request),
// with real git repositories through the agent server's HTTP API: the checkout, its branch and
// start point, the working directory reported, cleanup at deletion (forks share it), and the
// refusals (a repository outside the workspace root, a planted link, bad options).
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, realpathSync, renameSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startTestServer, tempDir, type TestServer } from './test-support.ts';

let dir: ReturnType<typeof tempDir>;
let s: TestServer;
let root: string;

beforeEach(async () => {
  dir = tempDir();
  s = await startTestServer(dir.path);
  root = realpathSync(join(dir.path, 'workspace'));
});
afterEach(async () => {
  await s.close();
  dir.remove();
});

const git = (cwd: string, ...args: string[]) => execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@example.com', '-C', cwd, ...args], { encoding: 'utf8' }).trim();

/** A repository on `main` with one commit (README "v1") and a `sub` directory. */
function makeRepo(path: string): string {
  mkdirSync(join(path, 'sub'), { recursive: true });
  git(path, 'init', '-q', '-b', 'main');
  writeFileSync(join(path, 'README'), 'v1\n');
  writeFileSync(join(path, 'sub', 'keep'), '');
  git(path, 'add', '.');
  git(path, 'commit', '-q', '-m', 'v1');
  return path;
}

const start = (working_dir: string, extra: Record<string, unknown> = {}) =>
  s.api('/api/conversations', { method: 'POST', body: { workspace: { kind: 'LocalWorkspace', working_dir }, agent: { llm: { model: 'openai/m' }, tools: [] }, worktree: true, ...extra } });

describe('worktree conversations', () => {
  it('work in a checkout of their own on openhands/<id>, at the same place inside it, removed at deletion with the branch kept', async () => {
    const repo = makeRepo(join(root, 'proj'));
    const res = await start(join(repo, 'sub'));
    expect(res.status).toBe(201);
    const id = res.body.id as string;
    const wt = join(root, '.conversation-worktrees', id, 'proj');
    expect(res.body.workspace.working_dir).toBe(join(wt, 'sub'));
    // As in 1.58, ConversationInfo has no `worktree` field: the working directory says it all.
    expect(res.body).not.toHaveProperty('worktree');
    expect(readFileSync(join(wt, 'README'), 'utf8')).toBe('v1\n');
    expect(git(wt, 'rev-parse', '--abbrev-ref', 'HEAD')).toBe(`openhands/${id}`);
    expect(git(repo, 'worktree', 'list')).toContain(wt);
    // The original checkout is untouched, and so is the conversation read back.
    expect(git(repo, 'rev-parse', '--abbrev-ref', 'HEAD')).toBe('main');
    expect((await s.api(`/api/conversations/${id}`)).body.workspace.working_dir).toBe(join(wt, 'sub'));
    // The agent is told where it works.
    expect(JSON.stringify((await s.api(`/api/conversations/${id}`)).body.agent.agent_context.system_message_suffix)).toContain(`- Branch: openhands/${id}`);

    expect((await s.api(`/api/conversations/${id}`, { method: 'DELETE' })).status).toBe(200);
    expect(existsSync(join(root, '.conversation-worktrees', id))).toBe(false);
    expect(git(repo, 'worktree', 'list')).not.toContain(wt);
    expect(git(repo, 'branch', '--list', `openhands/${id}`)).toContain(`openhands/${id}`);
  }, 30_000);

  it("start from origin's default branch (fetched), else main; `head` and `ref` bases and a branch prefix", async () => {
    const origin = makeRepo(join(root, 'origin'));
    const clone = join(root, 'clone');
    execFileSync('git', ['clone', '-q', origin, clone]);
    writeFileSync(join(origin, 'README'), 'v2\n');
    git(origin, 'commit', '-q', '-am', 'v2');
    git(origin, 'tag', 'v2');
    // The clone has not fetched v2: the worktree does, and starts there.
    const fromOrigin = await start(clone);
    expect(fromOrigin.status).toBe(201);
    expect(readFileSync(join(fromOrigin.body.workspace.working_dir, 'README'), 'utf8')).toBe('v2\n');

    const head = await start(clone, { worktree_options: { base: 'head', branch_prefix: 'conv/' } });
    expect(head.status).toBe(201);
    expect(readFileSync(join(head.body.workspace.working_dir, 'README'), 'utf8')).toBe('v1\n');
    expect(git(head.body.workspace.working_dir, 'rev-parse', '--abbrev-ref', 'HEAD')).toBe(`conv/${head.body.id}`);

    git(clone, 'checkout', '-q', '-b', 'feature');
    writeFileSync(join(clone, 'README'), 'feature\n');
    git(clone, 'commit', '-q', '-am', 'feature');
    const ref = await start(clone, { worktree_options: { base: 'ref', ref: 'feature' } });
    expect(ref.status).toBe(201);
    expect(readFileSync(join(ref.body.workspace.working_dir, 'README'), 'utf8')).toBe('feature\n');

    // No remote: local main, not the checked-out feature branch.
    const local = makeRepo(join(root, 'local'));
    git(local, 'checkout', '-q', '-b', 'other');
    writeFileSync(join(local, 'README'), 'other\n');
    git(local, 'commit', '-q', '-am', 'other');
    const main = await start(local);
    expect(readFileSync(join(main.body.workspace.working_dir, 'README'), 'utf8')).toBe('v1\n');
  }, 60_000);

  it('outside a git repository the conversation works in place; bad options are 422', async () => {
    const plain = join(root, 'plain');
    const res = await start(plain);
    expect(res.status).toBe(201);
    expect(res.body.workspace.working_dir).toBe(plain);
    expect(existsSync(join(root, '.conversation-worktrees', res.body.id))).toBe(false);

    const repo = makeRepo(join(root, 'r'));
    const noRef = await start(repo, { worktree_options: { base: 'ref' } });
    expect(noRef.status).toBe(422);
    expect(noRef.body.detail[0].loc).toEqual(['body', 'worktree_options']);
    const option = await start(repo, { worktree_options: { base: 'ref', ref: '--upload-pack=x' } });
    expect(option.status).toBe(422);
    expect(JSON.stringify(option.body.detail)).toContain('ref');
    const extra = await start(repo, { worktree_options: { depth: 1 } });
    expect(extra.status).toBe(422);
  }, 30_000);

  it('refuses a repository outside the workspace root and a worktrees directory planted as a link', async () => {
    const outside = makeRepo(join(dir.path, 'outside'));
    const res = await start(outside);
    expect(res.status).toBe(422);
    expect(res.body.detail[0].loc).toEqual(['body', 'workspace', 'working_dir']);
    expect(git(outside, 'worktree', 'list').split('\n')).toHaveLength(1);

    const repo = makeRepo(join(root, 'r'));
    const elsewhere = join(dir.path, 'elsewhere');
    mkdirSync(elsewhere);
    symlinkSync(elsewhere, join(root, '.conversation-worktrees'));
    const linked = await start(repo);
    expect(linked.status).toBe(422);
    expect(JSON.stringify(linked.body.detail)).toContain('link');
    expect(git(repo, 'worktree', 'list').split('\n')).toHaveLength(1);
  }, 30_000);

  it('deletion removes nothing through a worktrees root the agent replaced with a link', async () => {
    const repo = makeRepo(join(root, 'proj'));
    const id = (await start(repo)).body.id as string;
    const wts = join(root, '.conversation-worktrees');
    const outside = join(dir.path, 'precious');
    mkdirSync(join(outside, id, 'proj'), { recursive: true });
    writeFileSync(join(outside, id, 'proj', 'keep'), 'mine');
    renameSync(wts, join(root, 'moved'));
    symlinkSync(outside, wts);
    expect((await s.api(`/api/conversations/${id}`, { method: 'DELETE' })).status).toBe(200);
    expect(readFileSync(join(outside, id, 'proj', 'keep'), 'utf8')).toBe('mine');
  }, 30_000);

  it('a restart keeps the conversation in its worktree, and deletion afterwards removes it', async () => {
    const repo = makeRepo(join(root, 'proj'));
    const conv = (await start(repo)).body;
    await s.close();
    s = await startTestServer(dir.path);
    expect((await s.api(`/api/conversations/${conv.id}`)).body.workspace.working_dir).toBe(conv.workspace.working_dir);
    await s.api(`/api/conversations/${conv.id}`, { method: 'DELETE' });
    expect(existsSync(join(root, '.conversation-worktrees', conv.id))).toBe(false);
    expect(git(repo, 'worktree', 'list').split('\n')).toHaveLength(1);
  }, 30_000);

  it('a fork shares the worktree: it stays until the last of them is deleted', async () => {
    const repo = makeRepo(join(root, 'proj'));
    const src = (await start(repo)).body;
    const fork = await s.api(`/api/conversations/${src.id}/fork`, { method: 'POST', body: {} });
    expect(fork.status).toBe(201);
    expect(fork.body.workspace.working_dir).toBe(src.workspace.working_dir);
    await s.api(`/api/conversations/${src.id}`, { method: 'DELETE' });
    expect(existsSync(src.workspace.working_dir)).toBe(true);
    await s.api(`/api/conversations/${fork.body.id}`, { method: 'DELETE' });
    expect(existsSync(join(root, '.conversation-worktrees', src.id))).toBe(false);
  }, 30_000);
});
