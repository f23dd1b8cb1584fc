// POST /api/conversations/{id}/load_plugin (OpenHands 1.58): a plugin of the conversation's
// registered marketplaces (a real local git repository), loaded after start: its skill reaches the
// model from the next message on; unknown plugins and marketplaces are 404, bad references 400, as
// OpenHands answers them. Real agent server, scripted model over HTTP.
import { describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { createAgent } from '../agent/agent.ts';
import { eventually, userText, useRealAgentServer } from './test-support.ts';

const ctx = useRealAgentServer({ createAgent });

function write(path: string, text: string): void {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, text);
}

function marketplaceRepo(): string {
  const repo = join(ctx.dir.path, 'marketplace');
  write(join(repo, '.plugin', 'marketplace.json'), JSON.stringify({ name: 'acme', plugins: [{ name: 'house-rules', source: './plugins/house-rules' }, { name: 'escape', source: '../../etc' }] }));
  write(join(repo, 'plugins', 'house-rules', '.plugin', 'plugin.json'), JSON.stringify({ name: 'house-rules', version: '1.0.0' }));
  write(join(repo, 'plugins', 'house-rules', 'skills', 'house-style.md'), 'House style: indent with TABS-NOT-SPACES.\n');
  const git = (...args: string[]) => execFileSync('git', ['-c', 'user.name=Test', '-c', 'user.email=test@example.com', ...args], { cwd: repo, stdio: 'ignore' });
  git('init', '-q', '-b', 'main');
  git('add', '.');
  git('commit', '-q', '-m', 'marketplace');
  return repo;
}

async function conversation(extra: Record<string, unknown> = {}) {
  const body = {
    workspace: { kind: 'LocalWorkspace', working_dir: join(ctx.dir.path, 'project') },
    agent: { llm: { model: 'openai/scripted' }, tools: [], agent_context: { registered_marketplaces: [{ name: 'acme', source: marketplaceRepo() }] } },
    ...extra,
  };
  return ctx.s.api('/api/conversations', { method: 'POST', body });
}

describe('load_plugin', () => {
  it("loads a registered marketplace's plugin: its skill reaches the model from the next message on", async () => {
    const id = (await conversation()).body.id as string;
    const loaded = await ctx.s.api(`/api/conversations/${id}/load_plugin`, { method: 'POST', body: { plugin_ref: 'house-rules@acme' } });
    expect(loaded).toMatchObject({ status: 200, body: { success: true } });
    // The conversation's skills list it once the agent has loaded its plugins.
    await eventually(async () => JSON.stringify((await ctx.s.api(`/api/conversations/${id}?include_skills=true`)).body.agent.agent_context?.skills ?? []).includes('house-style'), 15_000);
    ctx.llm.push((req) => {
      expect(JSON.stringify(req.messages[0])).toContain('TABS-NOT-SPACES');
      return { toolCalls: [{ name: 'finish', arguments: { message: 'ok' } }] };
    });
    await ctx.s.api(`/api/conversations/${id}/events`, { method: 'POST', body: userText('format this', true) });
    await eventually(async () => (await ctx.s.api(`/api/conversations/${id}`)).body.execution_status === 'finished', 15_000);
    // Without a marketplace name: found in the one registered marketplace.
    expect((await ctx.s.api(`/api/conversations/${id}/load_plugin`, { method: 'POST', body: { plugin_ref: 'house-rules' } })).status).toBe(200);
  }, 60_000);

  it('404 for an unknown plugin, marketplace or conversation; 400 for a bad reference or a plugin outside its marketplace; 422 without plugin_ref', async () => {
    const id = (await conversation()).body.id as string;
    const call = (body: unknown, cid = id) => ctx.s.api(`/api/conversations/${cid}/load_plugin`, { method: 'POST', body });
    expect(await call({ plugin_ref: 'nothing@acme' })).toMatchObject({ status: 404, body: { detail: "Plugin 'nothing' not found in marketplace 'acme'" } });
    expect(await call({ plugin_ref: 'nothing' })).toMatchObject({ status: 404, body: { detail: "Plugin 'nothing' not found in any registered marketplace" } });
    expect(await call({ plugin_ref: 'house-rules@other' })).toMatchObject({ status: 404, body: { detail: "Marketplace 'other' is not registered" } });
    expect(await call({ plugin_ref: '@acme' })).toMatchObject({ status: 400, body: { detail: "Plugin reference must use 'plugin-name@marketplace-name'" } });
    expect(await call({ plugin_ref: '' })).toMatchObject({ status: 400, body: { detail: 'Plugin reference must not be empty' } });
    // An entry pointing above the marketplace's repository is no plugin of it.
    expect((await call({ plugin_ref: 'escape@acme' })).status).toBe(404);
    expect((await call({})).status).toBe(422);
    expect((await call({ plugin_ref: 'house-rules' }, '00000000-0000-4000-8000-000000000000')).status).toBe(404);
  }, 60_000);
});
