// GET /api/v1/app-conversations/changes over real HTTP (Server-Sent Events) on real SQLite stores:
// the snapshot, sandbox and execution status pushed as they change, only the caller's
// conversations, a reconnect that resumes without missing a change, and a snapshot again when the
// position is too old (compacted) or not one of ours.
import type { EventSourceMessage } from 'eventsource-parser';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ConversationKind } from '../api/conversation.ts';
import { decodeCursor, encodeCursor } from './conversation-changes.ts';
import { SseStream } from '../testing/sse.ts';
import { makeSandbox, NS, setSandboxPhase, setStartTask, startConversationId, startHarness, type Harness } from './test-support.ts';

type Rec = { id: string; sandbox_status: string; execution_status: string | null; title: string };

const rec = (e: EventSourceMessage) => JSON.parse(e.data) as Rec;
const changeOf = (id: string, ok: (r: Rec) => boolean) => (e: EventSourceMessage) => e.event === 'change' && rec(e).id === id && ok(rec(e));

describe('conversation changes (SSE)', () => {
  let h: Harness;
  const streams: SseStream[] = [];
  beforeEach(async () => (h = await startHarness()));
  afterEach(async () => {
    for (const s of streams.splice(0)) s.close();
    await h.close();
  });
  type OpenOptions = { key?: string; lastEventId?: string; query?: string };
  const connect = (opts: OpenOptions = {}) =>
    SseStream.open(`${h.server.url}/api/v1/app-conversations/changes${opts.query ? `?${opts.query}` : ''}`, { authorization: `Bearer ${opts.key ?? h.alice.key}`, ...(opts.lastEventId ? { 'last-event-id': opts.lastEventId } : {}) });
  const open = async (opts: OpenOptions = {}) => {
    const s = await connect(opts);
    streams.push(s);
    return s;
  };

  it('starts with a snapshot of the caller\'s conversations, then pushes sandbox and execution status as they change; never another user\'s', async () => {
    const mine = await startConversationId(h, { title: 'mine' });
    const bobs = await startConversationId(h, { title: 'bobs' }, h.bob.key);
    await makeSandbox(h.store, h.alice.user, 'sb-a', 'STARTING', { url: 'http://127.0.0.1:7000', key: 'sk-a' });
    await makeSandbox(h.store, h.bob.user, 'sb-b', 'RUNNING', { url: 'http://127.0.0.1:7001', key: 'sk-b' });
    await setStartTask(h.store, mine, 'READY', 'sb-a');
    await setStartTask(h.store, bobs, 'READY', 'sb-b');

    const s = await open();
    expect(s.contentType).toContain('text/event-stream');
    const snap = await s.next((e) => e.event === 'snapshot');
    const page = JSON.parse(snap.data) as { items: Rec[] };
    expect(page.items.map((r) => [r.id, r.sandbox_status])).toEqual([[mine, 'STARTING']]);

    // The sandbox runs: pushed. Then the agent runs (the agent server's webhook): pushed.
    let n = s.events.length;
    await setSandboxPhase(h.store, 'sb-a', 'RUNNING');
    await s.next(changeOf(mine, (r) => r.sandbox_status === 'RUNNING'), n);
    n = s.events.length;
    const hook = await h.call('POST', '/api/v1/webhooks/sb-a/conversations', { key: null, headers: { 'x-session-api-key': 'sk-a' }, body: { id: mine, execution_status: 'running', updated_at: '2026-03-01T10:20:00Z' } });
    expect(hook.status).toBe(200);
    await s.next(changeOf(mine, (r) => r.execution_status === 'running'), n);

    // Bob's changes never reach alice's stream; her next change does, and nothing of bob's came before it.
    n = s.events.length;
    await setSandboxPhase(h.store, 'sb-b', 'PAUSED');
    const c = (await h.store.get(ConversationKind, NS, bobs))!;
    await h.store.updateStatus(ConversationKind, { ...c, status: { ...c.status, executionStatus: 'finished' } });
    await setSandboxPhase(h.store, 'sb-a', 'PAUSED');
    await s.next(changeOf(mine, (r) => r.sandbox_status === 'PAUSED'), n);
    expect(s.events.map((e) => e.data).join('\n')).not.toContain(bobs);

    // A new conversation arrives; a deleted one is removed.
    n = s.events.length;
    const another = await startConversationId(h, { title: 'another' });
    await s.next(changeOf(another, (r) => r.title === 'another'), n);
    expect((await h.call('DELETE', `/api/v1/app-conversations/${another}`)).status).toBe(200);
    await s.next((e) => e.event === 'remove' && JSON.parse(e.data).id === another, n);
  });

  it('resumes after a reconnect from the last event id: every change made meanwhile, no snapshot', async () => {
    const id = await startConversationId(h, { title: 'resume me' });
    await makeSandbox(h.store, h.alice.user, 'sb-r', 'RUNNING', { url: 'http://127.0.0.1:7002', key: 'sk-r' });
    const first = await open();
    await first.next((e) => e.event === 'snapshot');
    await setStartTask(h.store, id, 'READY', 'sb-r');
    const seen = await first.next(changeOf(id, (r) => r.sandbox_status === 'RUNNING'));
    first.close();

    // While nobody listens: the sandbox pauses, the agent's status moves, a conversation comes.
    await setSandboxPhase(h.store, 'sb-r', 'PAUSED');
    const c = (await h.store.get(ConversationKind, NS, id))!;
    await h.store.updateStatus(ConversationKind, { ...c, status: { ...c.status, executionStatus: 'stuck' } });
    const added = await startConversationId(h, { title: 'while away' });

    const again = await open({ lastEventId: seen.id! });
    await again.next(changeOf(id, (r) => r.sandbox_status === 'PAUSED' && r.execution_status === 'stuck'));
    await again.next(changeOf(added, (r) => r.title === 'while away'));
    expect(again.events.some((e) => e.event === 'snapshot')).toBe(false);
    // The same through ?after= (a client that cannot set the header).
    const viaQuery = await open({ query: `after=${encodeURIComponent(seen.id!)}` });
    await viaQuery.next(changeOf(added, () => true));
    expect(viaQuery.events.some((e) => e.event === 'snapshot')).toBe(false);
  });

  it('sends a snapshot instead when the position is too old for the store, or not one it made', async () => {
    const id = await startConversationId(h, { title: 'old' });
    const s = await open();
    const snap = await s.next((e) => e.event === 'snapshot');
    s.close();
    await startConversationId(h, { title: 'newer' });
    h.store.compact(0);
    const stale = await open({ lastEventId: snap.id! });
    const again = JSON.parse((await stale.next((e) => e.event === 'snapshot')).data) as { items: Rec[] };
    expect(again.items.map((r) => r.title).sort()).toEqual(['newer', 'old']);
    expect(again.items.map((r) => r.id)).toContain(id);
    const forged = await open({ lastEventId: 'not-a-cursor' });
    await forged.next((e) => e.event === 'snapshot');
  });

  it('applies the search filters, and refuses a caller without a key', async () => {
    await startConversationId(h, { title: 'fix the payment tests' });
    const other = await startConversationId(h, { title: 'write docs' });
    const s = await open({ query: 'title__contains=payment' });
    const page = JSON.parse((await s.next((e) => e.event === 'snapshot')).data) as { items: Rec[] };
    expect(page.items.map((r) => r.title)).toEqual(['fix the payment tests']);
    const n = s.events.length;
    await h.call('PATCH', `/api/v1/app-conversations/${other}`, { body: { title: 'payment docs' } });
    // A rename is the app store's, not a resource change: it shows with the conversation's next change.
    await makeSandbox(h.store, h.alice.user, 'sb-f', 'RUNNING', { url: 'http://127.0.0.1:7003', key: 'sk-f' });
    await setStartTask(h.store, other, 'READY', 'sb-f');
    await s.next(changeOf(other, (r) => r.title === 'payment docs'), n);

    expect((await connect({ key: 'no-such-key' })).status).toBe(401);
    expect((await connect({ query: 'limit=0' })).status).toBe(422);
    // The filters' checks run before the stream starts: a malformed time is a 422, not a stream that cannot read.
    expect((await connect({ query: 'created_at__gte=last-tuesday' })).status).toBe(422);
  });


  it('follows one conversation (id__eq, dashed or not): its changes only, the others never', async () => {
    const one = await startConversationId(h, { title: 'this one' });
    const other = await startConversationId(h, { title: 'another' });
    const dashed = `${one.slice(0, 8)}-${one.slice(8, 12)}-${one.slice(12, 16)}-${one.slice(16, 20)}-${one.slice(20)}`;
    const s = await open({ query: `id__eq=${dashed}` });
    const page = JSON.parse((await s.next((e) => e.event === 'snapshot')).data) as { items: Rec[] };
    expect(page.items.map((r) => r.id)).toEqual([one]);
    const n = s.events.length;
    await makeSandbox(h.store, h.alice.user, 'sb-o', 'RUNNING', { url: 'http://127.0.0.1:7004', key: 'sk-o' });
    await setStartTask(h.store, other, 'READY', 'sb-o');
    await setStartTask(h.store, one, 'READY', 'sb-o');
    await s.next(changeOf(one, (r) => r.sandbox_status === 'RUNNING'), n);
    expect(s.events.slice(n).filter((e) => e.event === 'change').map((e) => rec(e).id)).toEqual([one]);
    const search = await h.call('GET', `/api/v1/app-conversations/search?id__eq=${other}`);
    expect(search.body.items.map((r: Rec) => r.id)).toEqual([other]);
  });
  it('ends when the key no longer holds (revoked, or its user disabled): the reconnect gets the 401', async () => {
    const s = await open({ key: h.bob.key });
    await s.next((e) => e.event === 'snapshot');
    const prefix = ((await h.call('GET', '/api/v1/users/me/keys', { key: h.bob.key })).body as { items: { prefix: string }[] }).items[0]!.prefix;
    expect((await h.call('DELETE', `/api/v1/users/me/keys/${prefix}`, { key: h.bob.key })).status).toBe(200);
    const deadline = Date.now() + 10_000;
    while (!s.ended && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    expect(s.ended).toBe(true);
    expect((await connect({ key: h.bob.key })).status).toBe(401);
  });

  it('cursors round-trip, and only decimal positions are taken', () => {
    expect(decodeCursor(encodeCursor({ conversations: '12', sandboxes: '7' }))).toEqual({ conversations: '12', sandboxes: '7' });
    expect(decodeCursor(Buffer.from(JSON.stringify(['1', 'x'])).toString('base64url'))).toBeUndefined();
    expect(decodeCursor(undefined)).toBeUndefined();
  });
});
