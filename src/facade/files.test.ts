// GET /api/v1/app-conversations/{id}/files against a real agent server: the files of the
// conversation's working directory (or a given directory), read live, under the workspace read rules.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FakeAgents, startRequest } from '../agent-server/test-support.ts';
import { startAgentServer, type AgentServer } from '../agent-server/server.ts';
import { createLogger } from '../util/log.ts';
import { makeSandbox, setSandboxPhase, setStartTask, startConversationId, startHarness, type Harness } from './test-support.ts';

describe('workspace file listing through the facade', () => {
  let h: Harness;
  let agent: AgentServer;
  let dir: string;
  beforeEach(async () => {
    h = await startHarness();
    dir = mkdtempSync(join(tmpdir(), 'facade-files-'));
    agent = await startAgentServer({ port: 0, workspaceDir: join(dir, 'ws'), sessionKeys: ['sk-1'], createAgent: new FakeAgents().createAgent, log: createLogger('agent-server-test') });
    await makeSandbox(h.store, h.alice.user, 'sb-1', 'RUNNING', { url: agent.url, key: 'sk-1' });
    for (const d of ['proj/src', 'proj/node_modules/x', 'other']) mkdirSync(join(dir, 'ws', d), { recursive: true });
    writeFileSync(join(dir, 'ws', 'proj', 'README.md'), '#');
    writeFileSync(join(dir, 'ws', 'proj', 'src', 'main.ts'), '');
    writeFileSync(join(dir, 'ws', 'proj', 'node_modules', 'x', 'index.js'), '');
    writeFileSync(join(dir, 'ws', 'other', 'notes.txt'), '');
  });
  afterEach(async () => {
    await agent.close();
    await h.close();
    rmSync(dir, { recursive: true, force: true });
  });

  async function conversation(workingDir: string): Promise<string> {
    const id = await startConversationId(h, { sandbox_id: 'sb-1' });
    const created = await fetch(`${agent.url}/api/conversations`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-session-api-key': 'sk-1' },
      body: JSON.stringify(startRequest(workingDir, { conversation_id: id })),
    });
    expect(created.status).toBeLessThan(300);
    await setStartTask(h.store, id, 'READY', 'sb-1');
    return id;
  }

  it("lists the working directory's files by default, or those of a given directory", async () => {
    const id = await conversation('proj');
    const res = await h.call('GET', `/api/v1/app-conversations/${id}/files`);
    expect(res).toMatchObject({ status: 200, body: ['README.md', 'src/main.ts'] });
    expect((await h.call('GET', `/api/v1/app-conversations/${id}/files?path=${encodeURIComponent(join(dir, 'ws', 'other'))}`)).body).toEqual(['notes.txt']);
  });

  it('answers clearly for a bad path, a foreign id and a failed sandbox', async () => {
    const id = await conversation('proj');
    const missing = await h.call('GET', `/api/v1/app-conversations/${id}/files?path=${encodeURIComponent(join(dir, 'ws', 'nope'))}`);
    expect(missing.status).toBe(404);
    expect(missing.body.detail).toMatch(/does not exist/);
    const empty = await h.call('GET', `/api/v1/app-conversations/${id}/files?path=`);
    expect(empty.status).toBe(422);
    expect(empty.body.detail[0].loc).toEqual(['query', 'path']);
    expect((await h.call('GET', `/api/v1/app-conversations/${id}/files`, { key: h.bob.key })).status).toBe(404);
    await setSandboxPhase(h.store, 'sb-1', 'ERROR');
    expect((await h.call('GET', `/api/v1/app-conversations/${id}/files`)).status).toBe(409);
  });
});
