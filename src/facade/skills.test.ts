// GET /api/v1/app-conversations/{id}/skills against a real agent server: the skills of the
// conversation's workspace, read live, plus the skills of its start request, under the workspace
// read rules (ERROR 409, foreign 404; a paused sandbox is resumed by the read, see hooks.test.ts).
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Value } from 'typebox/value';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FakeAgents, startRequest } from '../agent-server/test-support.ts';
import { startAgentServer, type AgentServer } from '../agent-server/server.ts';
import { ConversationSkillsResponse } from '../api/app/skills.ts';
import { createLogger } from '../util/log.ts';
import { makeSandbox, setSandboxPhase, setStartTask, startConversationId, startHarness, type Harness } from './test-support.ts';

describe('conversation skills', () => {
  let h: Harness;
  let agent: AgentServer;
  let dir: string;
  const oldHome = process.env['HOME'];
  beforeEach(async () => {
    h = await startHarness();
    dir = mkdtempSync(join(tmpdir(), 'facade-skills-'));
    // No user skills: the agent server's HOME is empty.
    process.env['HOME'] = join(dir, 'home');
    agent = await startAgentServer({ port: 0, workspaceDir: join(dir, 'ws'), sessionKeys: ['sk-1'], createAgent: new FakeAgents().createAgent, log: createLogger('agent-server-test') });
    await makeSandbox(h.store, h.alice.user, 'sb-1', 'RUNNING', { url: agent.url, key: 'sk-1' });
  });
  afterEach(async () => {
    await agent.close();
    await h.close();
    process.env['HOME'] = oldHome;
    rmSync(dir, { recursive: true, force: true });
  });

  it('lists the skills of the workspace, 409 once its sandbox failed, 404 for another user', async () => {
    const wd = join(dir, 'ws', 'project');
    mkdirSync(join(wd, '.agents/skills/lint'), { recursive: true });
    writeFileSync(join(wd, 'AGENTS.md'), 'Use tabs.');
    writeFileSync(join(wd, '.agents/skills/lint/SKILL.md'), '---\nname: lint\ndescription: Linting.\ntriggers: [lint]\n---\nRun the linter.');
    const id = await startConversationId(h, { sandbox_id: 'sb-1' });
    // Playing the controller: the conversation exists on the agent server with a relative working dir.
    const created = await fetch(`${agent.url}/api/conversations`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-session-api-key': 'sk-1' },
      body: JSON.stringify({
        ...startRequest('project', { conversation_id: id }),
        agent: { llm: { model: 'test/model' }, agent_context: { skills: [{ name: 'deploy', content: 'Ship it.', trigger: { type: 'keyword', keywords: ['/deploy'] } }] } },
      }),
    });
    expect(created.status).toBeLessThan(300);
    await setStartTask(h.store, id, 'READY', 'sb-1');

    const res = await h.call('GET', `/api/v1/app-conversations/${id}/skills`);
    expect(res.status).toBe(200);
    expect(Value.Check(ConversationSkillsResponse, res.body)).toBe(true);
    expect(res.body.skills).toEqual([
      { name: 'agents', type: 'repo', content: 'Use tabs.', triggers: [] },
      { name: 'lint', type: 'agentskills', content: 'Run the linter.', triggers: ['lint'] },
      { name: 'deploy', type: 'knowledge', content: 'Ship it.', triggers: ['/deploy'] },
    ]);

    expect((await h.call('GET', `/api/v1/app-conversations/${id}/skills`, { key: h.bob.key })).status).toBe(404);
    await setSandboxPhase(h.store, 'sb-1', 'ERROR');
    const failed = await h.call('GET', `/api/v1/app-conversations/${id}/skills`);
    expect(failed.status).toBe(409);
    expect(failed.body.detail).toMatch(/read-only/);
  });
});
