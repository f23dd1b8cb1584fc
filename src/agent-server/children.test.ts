// POST /api/conversations/{id}/children (OpenHands 1.58 start_child_conversation): a child with the
// parent's configuration and a fresh history runs its task at once; the parent lists it in
// sub_conversation_ids; worktree isolation on a git repository is not built (501).
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
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
        secrets: { DEPLOY_TOKEN: 'tok-123456' },
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

  it('404 for an unknown parent, 422 for an empty task or a bad isolation, 501 for a worktree of a git repository', async () => {
    const parent = await startParent(dir.path);
    const unknown = await s.api('/api/conversations/00000000-0000-4000-8000-000000000000/children', { method: 'POST', body: { task: 'x' } });
    expect(unknown.status).toBe(404);
    expect(unknown.body.detail).toBe('Parent conversation not found');
    const empty = await s.api(`/api/conversations/${parent}/children`, { method: 'POST', body: { task: '' } });
    expect(empty.status).toBe(422);
    expect(JSON.stringify(empty.body)).toContain('task');
    const bad = await s.api(`/api/conversations/${parent}/children`, { method: 'POST', body: { task: 'x', isolation: 'copy' } });
    expect(bad.status).toBe(422);

    const repo = join(dir.path, 'repo');
    mkdirSync(repo);
    execFileSync('git', ['init', '-q', repo]);
    const inRepo = await startParent(repo);
    const worktree = await s.api(`/api/conversations/${inRepo}/children`, { method: 'POST', body: { task: 'x' } });
    expect(worktree.status).toBe(501);
    expect(worktree.body.detail).toContain("isolation 'shared'");
    expect((await s.api(`/api/conversations/${inRepo}`)).body.sub_conversation_ids).toEqual([]);
    llm.push({ content: 'ok' });
    const shared = await s.api(`/api/conversations/${inRepo}/children`, { method: 'POST', body: { task: 'x', isolation: 'shared' } });
    expect(shared.status).toBe(201);
    expect(shared.body.workspace).toBe(repo);
  }, 30_000);
});
