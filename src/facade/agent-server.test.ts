// The facade against a real agent server: send-message reaches it, and its sink pusher delivers
// the resulting events and status back, so the transcript and execution status show up in the app.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ConversationKind } from '../api/conversation.ts';
import { FakeAgents, startRequest } from '../agent-server/test-support.ts';
import { startAgentServer, type AgentServer } from '../agent-server/server.ts';
import { createLogger } from '../util/log.ts';
import { eventSinkUrl } from './routes/webhooks.ts';
import { eventually, makeSandbox, NS, setStartTask, startConversationId, startHarness, type Harness } from './test-support.ts';

describe('facade with a real agent server', () => {
  let h: Harness;
  let agent: AgentServer;
  let dir: string;
  beforeEach(async () => {
    h = await startHarness();
    dir = mkdtempSync(join(tmpdir(), 'facade-agent-'));
    agent = await startAgentServer({
      port: 0,
      workspaceDir: join(dir, 'ws'),
      sessionKeys: ['sk-1'],
      createAgent: new FakeAgents().createAgent,
      sink: { url: eventSinkUrl(h.server.url, 'sb-1'), key: 'sk-1' },
      log: createLogger('agent-server-test'),
      tuning: { sink: { retryInitialMs: 20, retryMaxMs: 100 } },
    });
    await makeSandbox(h.store, h.alice.user, 'sb-1', 'RUNNING', { url: agent.url, key: 'sk-1' });
  });
  afterEach(async () => {
    await agent.close();
    await h.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('round-trips a message into the app transcript and status', async () => {
    const id = await startConversationId(h, { sandbox_id: 'sb-1' });
    // Playing the controller: create the conversation on the agent server, then mark it READY.
    const created = await fetch(`${agent.url}/api/conversations`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-session-api-key': 'sk-1' },
      body: JSON.stringify(startRequest(join(dir, 'ws'), { conversation_id: id })),
    });
    expect(created.status).toBeLessThan(300);
    await setStartTask(h.store, id, 'READY', 'sb-1');

    const sent = await h.call('POST', `/api/v1/app-conversations/${id}/send-message`, { body: { role: 'user', content: [{ type: 'text', text: 'ping' }] } });
    expect(sent.body).toEqual({ success: true, sandbox_status: 'RUNNING', message: null });

    await eventually(async () => {
      const r = await h.call('GET', `/api/v1/conversation/${id}/events/search?kind__eq=MessageEvent`);
      return r.body.items.some((e: { llm_message: { content: { text: string }[] } }) => e.llm_message.content[0]?.text === 'echo: ping');
    }, 'the agent reply in the app transcript');
    await eventually(async () => (await h.store.get(ConversationKind, NS, id))?.status?.executionStatus === 'finished', 'execution status');
    const rec = (await h.call('GET', `/api/v1/app-conversations?ids=${id}`)).body[0];
    expect(rec).toMatchObject({ execution_status: 'finished', sandbox_status: 'RUNNING', conversation_url: `${agent.url}/api/conversations/${id}` });
    const count = (await h.call('GET', `/api/v1/conversation/${id}/events/count`)).body;
    expect(count).toBeGreaterThanOrEqual(2);
    // Every event pushed is acknowledged; the count includes the full_state snapshot at seq 0.
    expect(await h.db.events.acknowledgedSeq(id)).toBe(count - 1);
    expect((await h.call('GET', `/api/v1/conversation/${id}/events/search?limit=1`)).body.items[0]).toMatchObject({ kind: 'ConversationStateUpdateEvent', key: 'full_state' });
  });
});
