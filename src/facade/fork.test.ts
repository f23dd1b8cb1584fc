// The app API's fork: a conversation of the same owner in the source's sandbox with forkOf set,
// answered as a start task (the controller forks it on the agent server: e2e/embedded/web-app.test.ts);
// 422 at the field, 404 for another user's, 409 while the source is still starting.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ConversationKind } from '../api/conversation.ts';
import { NS, startConversationId, startWorkspaceHarness, type WorkspaceHarness } from './test-support.ts';

describe('fork through the app API', () => {
  let h: WorkspaceHarness;
  beforeEach(async () => {
    h = await startWorkspaceHarness();
  });
  afterEach(() => h.close());

  it("makes a conversation in the source's sandbox that forks it, answered as a start task", async () => {
    const id = await h.conversation(h.workspace);
    await h.call('PATCH', `/api/v1/app-conversations/${id}`, { body: { title: 'Source' } });
    const res = await h.call('POST', `/api/v1/app-conversations/${id}/fork`, { body: {} });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ status: 'WORKING', app_conversation_id: null, sandbox_id: 'sb-1' });
    const { items } = await h.store.list(ConversationKind, NS);
    const fork = items.find((c) => c.spec.forkOf === id)!;
    expect(fork.spec).toMatchObject({ owner: h.alice.user.id, sandboxName: 'sb-1', forkOf: id, title: 'Fork of Source' });
    const named = await h.call('POST', `/api/v1/app-conversations/${id}/fork`, { body: { title: 'Mine' } });
    expect((await h.store.list(ConversationKind, NS)).items.find((c) => c.metadata.labels?.['agentyard.dev/start-task'] === named.body.id)?.spec.title).toBe('Mine');
  });

  it('refuses a bad title at its field, another user (404), a source still starting (409)', async () => {
    const id = await h.conversation(h.workspace);
    const bad = await h.call('POST', `/api/v1/app-conversations/${id}/fork`, { body: { title: '' } });
    expect([bad.status, bad.body.detail[0].loc]).toEqual([422, ['body', 'title']]);
    expect((await h.call('POST', `/api/v1/app-conversations/${id}/fork`, { body: {}, key: h.bob.key })).status).toBe(404);
    const starting = await startConversationId(h, { sandbox_id: 'sb-1' });
    const res = await h.call('POST', `/api/v1/app-conversations/${starting}/fork`, { body: {} });
    expect(res.status).toBe(409);
  });
});
