// GET /api/v1/app-conversations/{id}/hooks against a real agent server: the workspace's hooks file
// read live through POST /api/hooks, grouped by event type; a paused sandbox resumed by the read,
// foreign conversations refused.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FakeAgents, startRequest } from '../agent-server/test-support.ts';
import { startAgentServer, type AgentServer } from '../agent-server/server.ts';
import { createLogger } from '../util/log.ts';
import { SandboxKind } from '../api/sandbox.ts';
import { eventually, makeSandbox, NS, setSandboxPhase, setStartTask, startConversationId, startHarness, type Harness } from './test-support.ts';

describe('conversation hooks through the facade', () => {
  let h: Harness;
  let agent: AgentServer;
  let dir: string;
  beforeEach(async () => {
    h = await startHarness();
    dir = mkdtempSync(join(tmpdir(), 'facade-hooks-'));
    agent = await startAgentServer({ port: 0, workspaceDir: join(dir, 'ws'), sessionKeys: ['sk-1'], createAgent: new FakeAgents().createAgent, log: createLogger('agent-server-test') });
    await makeSandbox(h.store, h.alice.user, 'sb-1', 'RUNNING', { url: agent.url, key: 'sk-1' });
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

  it("lists the hooks of the conversation's working directory (relative to the agent server's workspace), read live", async () => {
    const id = await conversation('proj');
    expect((await h.call('GET', `/api/v1/app-conversations/${id}/hooks`)).body).toEqual({ hooks: [] });
    mkdirSync(join(dir, 'ws', 'proj', '.openhands'), { recursive: true });
    writeFileSync(
      join(dir, 'ws', 'proj', '.openhands', 'hooks.json'),
      JSON.stringify({ PreToolUse: [{ matcher: 'terminal', hooks: [{ command: 'guard.sh', timeout: 5 }] }], Stop: [{ hooks: [{ command: 'on_stop.sh', async: true }] }] }),
    );
    const res = await h.call('GET', `/api/v1/app-conversations/${id}/hooks`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      hooks: [
        { event_type: 'pre_tool_use', matchers: [{ matcher: 'terminal', hooks: [{ type: 'command', command: 'guard.sh', timeout: 5, async: false }] }] },
        { event_type: 'stop', matchers: [{ matcher: '*', hooks: [{ type: 'command', command: 'on_stop.sh', timeout: 60, async: true }] }] },
      ],
    });
    // Another user's conversation does not exist for alice.
    const theirs = await startConversationId(h, {}, h.bob.key);
    expect((await h.call('GET', `/api/v1/app-conversations/${theirs}/hooks`)).status).toBe(404);
  });

  it('a paused sandbox is resumed by the read, which answers once it runs again', async () => {
    const id = await conversation('proj2');
    await h.store.update(SandboxKind, { ...(await h.store.get(SandboxKind, NS, 'sb-1'))!, spec: { owner: h.alice.user.id, paused: true } });
    await setSandboxPhase(h.store, 'sb-1', 'PAUSED');
    const read = h.call('GET', `/api/v1/app-conversations/${id}/hooks`);
    // Playing the controller: the read asked for a resume; bring the sandbox back.
    await eventually(async () => (await h.store.get(SandboxKind, NS, 'sb-1'))!.spec.paused === false, 'the read to ask for a resume');
    await setSandboxPhase(h.store, 'sb-1', 'RUNNING');
    const res = await read;
    expect(res.status).toBe(200);
    expect(res.body.hooks).toEqual([]);
  });

  it('a read of a paused sandbox that does not come back in time answers 503 with Retry-After', async () => {
    await h.close();
    h = await startHarness({ resumeWaitSeconds: 0.3 });
    await makeSandbox(h.store, h.alice.user, 'sb-1', 'RUNNING', { url: agent.url, key: 'sk-1' });
    const id = await conversation('proj3');
    await h.store.update(SandboxKind, { ...(await h.store.get(SandboxKind, NS, 'sb-1'))!, spec: { owner: h.alice.user.id, paused: true } });
    await setSandboxPhase(h.store, 'sb-1', 'PAUSED');
    const res = await h.call('GET', `/api/v1/app-conversations/${id}/hooks`);
    expect(res.status).toBe(503);
    expect(res.headers.get('retry-after')).toBe('5');
    expect(res.body.detail).toMatch(/resuming/);
    expect((await h.store.get(SandboxKind, NS, 'sb-1'))!.spec.paused).toBe(false);
  });

  it('a sandbox in ERROR keeps the conversation read-only (409)', async () => {
    const id = await conversation('proj4');
    await setSandboxPhase(h.store, 'sb-1', 'ERROR');
    const res = await h.call('GET', `/api/v1/app-conversations/${id}/hooks`);
    expect(res.status).toBe(409);
    expect(res.body.detail).toMatch(/read-only/);
  });
});
