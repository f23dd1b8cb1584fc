// A Conversation deleted for good takes its app data with it; a restart catches up on deletions
// it missed.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ConversationKind } from '../api/conversation.ts';
import { SecretKind } from '../api/secret.ts';
import { createLogger } from '../util/log.ts';
import { ConversationCleanup } from './cleanup.ts';
import { eventually, makeSandbox, NS, pauseEvent, setStartTask, startConversationId, startHarness, type Harness } from './test-support.ts';

describe('conversation cleanup', () => {
  let h: Harness;
  let id: string;
  beforeEach(async () => {
    h = await startHarness();
    await makeSandbox(h.store, h.alice.user, 'sb-1', 'RUNNING', { key: 'sk-1' });
    id = await startConversationId(h, { sandbox_id: 'sb-1', secrets: { TOKEN: 't' } });
    await setStartTask(h.store, id, 'READY', 'sb-1');
    await h.call('POST', `/api/v1/webhooks/sb-1/events/${id}`, { key: null, headers: { 'x-session-api-key': 'sk-1' }, body: { items: [{ seq: 1, event: pauseEvent('e1') }] } });
    await h.db.pending.add(id, { role: 'user', content: [], run: true }, 'now');
  });
  afterEach(() => h.close());

  it('purges events, queued messages and the secrets Secret when the Conversation is deleted', async () => {
    expect(await h.db.conversationIds()).toEqual([id]);
    await h.store.delete(ConversationKind, NS, id);
    await eventually(async () => (await h.db.conversationIds()).length === 0, 'purge');
    expect(await h.store.get(SecretKind, NS, `${id}-secrets`)).toBeUndefined();
    expect(await h.db.events.count(id, {})).toBe(0);
  });

  it('purges on start what was deleted while it was not watching, and keeps the rest', async () => {
    const keep = await startConversationId(h, { sandbox_id: 'sb-1' });
    await h.db.setConversationMeta(keep, { title: 'kept', updatedAt: null });
    await h.db.setConversationMeta('00000000000000000000000000000000', { title: 'orphan', updatedAt: null });
    const cleanup = new ConversationCleanup({ store: h.store, db: h.db, clock: h.clock, namespace: NS, settings: { capacity: 1 }, log: createLogger('t') });
    cleanup.start();
    await eventually(async () => !(await h.db.conversationIds()).includes('00000000000000000000000000000000'), 'sweep');
    await cleanup.close();
    expect((await h.db.conversationIds()).sort()).toEqual([id, keep].sort());
  });
});
