// GET /api/v1/app-conversations/{id}/skills against a real agent server: the skills of the
// conversation's workspace, read live, plus the skills of its start request, under the workspace
// read rules (workspace.test.ts).
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

  it('lists the skills of the workspace, 404 for another user', async () => {
    const wd = join(h.workspace, 'project');
    mkdirSync(join(wd, '.agents/skills/lint'), { recursive: true });
    writeFileSync(join(wd, 'AGENTS.md'), 'Use tabs.');
    writeFileSync(join(wd, '.agents/skills/lint/SKILL.md'), '---\nname: lint\ndescription: Linting.\ntriggers: [lint]\n---\nRun the linter.');
    const id = await h.conversation('project', {
      agent: { llm: { model: 'test/model' }, agent_context: { skills: [{ name: 'deploy', content: 'Ship it.', trigger: { type: 'keyword', keywords: ['/deploy'] } }] } },
    });

    const res = await h.call('GET', `/api/v1/app-conversations/${id}/skills`);
    expect(res.status).toBe(200);
    expect(Value.Check(ConversationSkillsResponse, res.body)).toBe(true);
    expect(res.body.skills).toEqual([
      { name: 'agents', type: 'repo', content: 'Use tabs.', triggers: [] },
      { name: 'lint', type: 'agentskills', content: 'Run the linter.', triggers: ['lint'] },
      { name: 'deploy', type: 'knowledge', content: 'Ship it.', triggers: ['/deploy'] },
    ]);

    expect((await h.call('GET', `/api/v1/app-conversations/${id}/skills`, { key: h.bob.key })).status).toBe(404);
  });
});
