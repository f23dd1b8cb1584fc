// A conversation's agent_context.load_public_skills and registered_marketplaces auto_load (OpenHands
// 1.58.2): the public skills of the extensions repository (a real git repository the server clones)
// and the marketplace's plugins and standalone skills (another real repository) reach the model's
// system prompt, under the conversation's own skills. Real agent, scripted model over HTTP.
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createAgent } from '../agent/agent.ts';
import { extensionsRepo, marketplaceRepo, writeFiles } from '../testing/extensions/repos.ts';
import { eventually, userText, useRealAgentServer } from './test-support.ts';

const ctx = useRealAgentServer({
  createAgent,
  overrides: () => ({ extensions: { repoUrl: extensionsRepo(join(ctx.dir.path, 'extensions')), ref: 'main', localPath: null, persistenceDir: join(ctx.dir.path, 'persist'), registeredMarketplaces: [] } }),
});

async function converse(agentContext: Record<string, unknown>, check: (system: string) => void): Promise<void> {
  const wd = join(ctx.dir.path, 'project');
  writeFiles(wd, { '.agents/skills/beta/SKILL.md': '---\nname: beta\ndescription: The project beta.\n---\nProject beta.\n' });
  ctx.llm.push((req) => {
    check(JSON.stringify(req.messages[0]));
    return { toolCalls: [{ name: 'finish', arguments: { message: 'ok' } }] };
  });
  const res = await ctx.s.api('/api/conversations', {
    method: 'POST',
    body: { workspace: { kind: 'LocalWorkspace', working_dir: wd }, agent: { llm: { model: 'openai/scripted' }, tools: [], agent_context: agentContext }, initial_message: userText('hello') },
  });
  expect(res.status).toBe(201);
  await eventually(async () => (await ctx.s.api(`/api/conversations/${res.body.id}`)).body.execution_status === 'finished', 20_000);
}

describe('extensions in a conversation', () => {
  it('load_public_skills lists the public skills; a project skill of the same name wins; disabled_skills leaves one out', async () => {
    await converse({ load_public_skills: true, load_project_skills: true, marketplace_path: null, disabled_skills: ['skills/legacy'] }, (system) => {
      expect(system).toContain('<name>alpha</name>');
      expect(system).toContain('The project beta.');
      expect(system).not.toContain('Beta skill.');
      expect(system).not.toContain('skills/legacy');
    });
  }, 60_000);

  it('without load_public_skills there are none', async () => {
    await converse({}, (system) => expect(system).not.toContain('<name>alpha</name>'));
  }, 60_000);

  it("registered_marketplaces auto_load brings the marketplace's plugins and standalone skills", async () => {
    const market = marketplaceRepo(join(ctx.dir.path, 'market'));
    await converse({ registered_marketplaces: [{ name: 'team', source: market, auto_load: ['docs-kit', 'team-style'] }, { name: 'gone', source: join(ctx.dir.path, 'gone'), auto_load: true }] }, (system) => {
      expect(system).toContain('<name>docs-style</name>');
      expect(system).toContain('<name>team-style</name>');
      expect(system).not.toContain('lint-rules');
    });
  }, 60_000);

  it("an agent profile's catalog has the public tier (1.58's discover_profile_skills): public_skills keeps the named ones, null all; they are inlined, load_public_skills stays false", async () => {
    expect((await ctx.s.api('/api/profiles/ext-llm', { method: 'POST', body: { llm: { model: 'openai/scripted', base_url: ctx.llm.url } } })).status).toBeLessThan(300);
    await ctx.s.api('/api/agent-profiles/only-alpha', { method: 'POST', body: { llm_profile_ref: 'ext-llm', tools: [], public_skills: ['alpha'] } });
    await ctx.s.api('/api/agent-profiles/all-public', { method: 'POST', body: { llm_profile_ref: 'ext-llm', tools: [], disabled_skills: ['alpha'] } });
    const preview = async (name: string) => (await ctx.s.api(`/api/agent-profiles/${name}/materialize`, { method: 'POST' })).body;
    expect(await preview('only-alpha')).toMatchObject({ valid: true, resolved_skills: ['alpha'] });
    const all = await preview('all-public');
    expect(all.valid).toBe(true);
    expect(all.resolved_skills.length).toBeGreaterThan(0);
    expect(all.resolved_skills).not.toContain('alpha');

    const id = (await ctx.s.api('/api/agent-profiles/only-alpha')).body.profile.id;
    ctx.llm.push((req) => {
      const system = JSON.stringify(req.messages[0]);
      expect(system).toContain('<name>alpha</name>');
      expect(system).not.toContain('Legacy knowledge');
      return { toolCalls: [{ name: 'finish', arguments: { message: 'ok' } }] };
    });
    const wd = join(ctx.dir.path, 'profile-project');
    writeFiles(wd, { 'README.md': 'x\n' });
    const r = await ctx.s.api('/api/conversations', { method: 'POST', body: { workspace: { kind: 'LocalWorkspace', working_dir: wd }, agent_profile_id: id, initial_message: userText('hello') } });
    expect(r.status).toBe(201);
    expect(r.body.agent.agent_context).toMatchObject({ load_public_skills: false });
    await eventually(async () => (await ctx.s.api(`/api/conversations/${r.body.id}`)).body.execution_status === 'finished', 20_000);
    const full = (await ctx.s.api(`/api/conversations/${r.body.id}?include_skills=true`)).body;
    expect(full.agent.agent_context.skills.map((k: any) => k.name)).toEqual(['alpha']);
  }, 60_000);
});
