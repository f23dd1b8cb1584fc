// GET /api/v1/app-conversations/{id}/skills against a real agent server: the skills of its start
// request, with the user's and the workspace's (read live) when the start asked for them, under the
// workspace read rules (workspace.test.ts).
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Value } from 'typebox/value';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ConversationSkillsResponse } from '../api/app/skills.ts';
import { startWorkspaceHarness, type WorkspaceHarness } from './test-support.ts';

describe('conversation skills', () => {
  let h: WorkspaceHarness;
  const oldHome = process.env['HOME'];
  beforeEach(async () => {
    h = await startWorkspaceHarness();
    // No user skills: HOME is empty (the agent server reads it at each listing).
    process.env['HOME'] = join(h.dir, 'home');
  });
  afterEach(async () => {
    process.env['HOME'] = oldHome;
    await h.close();
  });

  it('lists the skills the conversation was started with, as its agent merges them; 404 for another user', async () => {
    const wd = join(h.workspace, 'project');
    mkdirSync(join(wd, '.agents/skills/lint'), { recursive: true });
    writeFileSync(join(wd, 'AGENTS.md'), 'Use tabs.');
    writeFileSync(join(wd, '.agents/skills/lint/SKILL.md'), '---\nname: lint\ndescription: Linting.\ntriggers: [lint]\n---\nRun the linter.');
    mkdirSync(join(h.dir, 'home/.openhands/skills'), { recursive: true });
    writeFileSync(join(h.dir, 'home/.openhands/skills/kiwi.md'), '---\ntriggers: [kiwi]\n---\nKiwis.');
    writeFileSync(join(h.dir, 'home/.openhands/skills/deploy.md'), 'The user deploys by hand.');
    const explicit = [
      { name: 'deploy', content: 'Ship it.', trigger: { type: 'keyword', keywords: ['/deploy'] } },
      { name: 'lint', content: 'Lint by hand.' },
    ];
    const listed = async (agentContext: Record<string, unknown>) => {
      const id = await h.conversation('project', { agent: { llm: { model: 'test/model' }, agent_context: { skills: explicit, ...agentContext } } });
      const res = await h.call('GET', `/api/v1/app-conversations/${id}/skills`);
      expect(res.status).toBe(200);
      expect(Value.Check(ConversationSkillsResponse, res.body)).toBe(true);
      return { id, skills: res.body.skills };
    };

    // No flags (1.58's defaults): only the start request's skills.
    expect((await listed({})).skills).toEqual([
      { name: 'deploy', type: 'knowledge', content: 'Ship it.', triggers: ['/deploy'] },
      { name: 'lint', type: 'repo', content: 'Lint by hand.', triggers: [] },
    ]);
    // The user's skills yield to the request's; the workspace's override them.
    const { id, skills } = await listed({ load_user_skills: true, load_project_skills: true });
    expect(skills).toEqual([
      { name: 'deploy', type: 'knowledge', content: 'Ship it.', triggers: ['/deploy'] },
      { name: 'kiwi', type: 'knowledge', content: 'Kiwis.', triggers: ['kiwi'] },
      { name: 'lint', type: 'agentskills', content: 'Run the linter.', triggers: ['lint'] },
      { name: 'agents', type: 'repo', content: 'Use tabs.', triggers: [] },
    ]);

    expect((await h.call('GET', `/api/v1/app-conversations/${id}/skills`, { key: h.bob.key })).status).toBe(404);
  });
});
