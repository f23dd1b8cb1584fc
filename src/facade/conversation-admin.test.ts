// PATCH, DELETE and download of a conversation.
import { unzipSync, strFromU8 } from 'fflate';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ConversationKind } from '../api/conversation.ts';
import { SandboxKind } from '../api/sandbox.ts';
import { makeSandbox, messageEvent, NS, setStartTask, startConversationId, startHarness, type Harness } from './test-support.ts';

describe('conversation metadata, deletion and download', () => {
  let h: Harness;
  beforeEach(async () => (h = await startHarness()));
  afterEach(() => h.close());

  async function readyOn(sandbox: string) {
    const id = await startConversationId(h);
    await setStartTask(h.store, id, 'READY', sandbox);
    return id;
  }

  async function ingest(sandbox: string, id: string, events: Record<string, unknown>[]) {
    const r = await h.call('POST', `/api/v1/webhooks/${sandbox}/events/${id}`, {
      key: null,
      headers: { 'x-session-api-key': 'sk-1' },
      body: { items: events.map((event, i) => ({ seq: i + 1, event })) },
    });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
  }

  it('PATCH sets and clears the title, validates it, and refuses foreign ids', async () => {
    const id = await startConversationId(h);
    let r = await h.call('PATCH', `/api/v1/app-conversations/${id}`, { body: { title: 'Release notes' } });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ id, title: 'Release notes' });
    expect((await h.store.get(ConversationKind, NS, id))!.spec.title).toBe('Release notes');
    r = await h.call('PATCH', `/api/v1/app-conversations/${id}`, { body: { title: null } });
    expect(r.body.title).toBe(`Conversation ${id.slice(0, 5)}`); // cleared: the default title again
    r = await h.call('PATCH', `/api/v1/app-conversations/${id}`, { body: { title: '', tags: {} } });
    expect(r.status).toBe(422);
    expect(r.body.detail.map((e: { loc: string[] }) => e.loc.join('.'))).toEqual(expect.arrayContaining(['body.title', 'body.tags']));
    expect((await h.call('PATCH', `/api/v1/app-conversations/${id}`, { key: h.bob.key, body: { title: 'x' } })).status).toBe(404);
  });

  it('PATCH refuses selected_repository, selected_branch and git_provider with a 422 naming each (fixed at start)', async () => {
    const id = await startConversationId(h, { selected_repository: 'acme/api', selected_branch: 'main' });
    const before = (await h.store.get(ConversationKind, NS, id))!.spec;
    for (const [field, value] of [
      ['selected_repository', 'acme/web'],
      ['selected_repository', null],
      ['selected_branch', 'dev'],
      ['git_provider', 'gitlab'],
    ] as const) {
      const r = await h.call('PATCH', `/api/v1/app-conversations/${id}`, { body: { [field]: value } });
      expect(r.status, field).toBe(422);
      expect(r.body.detail).toEqual([{ loc: ['body', field], msg: expect.stringMatching(new RegExp(`^${field} is fixed when the conversation starts.*start a new conversation`)), type: 'value_error' }]);
    }
    // Every issue at once, and nothing applied: not even the valid title next to them.
    const r = await h.call('PATCH', `/api/v1/app-conversations/${id}`, { body: { title: 'ok', selected_branch: 'dev', git_provider: 'nope', public: 3 } });
    expect(r.status).toBe(422);
    expect(r.body.detail.map((e: { loc: string[]; type: string }) => `${e.loc.join('.')}:${e.type}`).sort()).toEqual([
      'body.git_provider:value_error',
      'body.public:type',
      'body.selected_branch:value_error',
    ]);
    const both = await h.call('PATCH', `/api/v1/app-conversations/${id}`, { body: { title: '', selected_repository: 'x/y' } });
    expect(both.body.detail.map((e: { loc: string[] }) => e.loc.join('.')).sort()).toEqual(['body.selected_repository', 'body.title']);
    expect((await h.store.get(ConversationKind, NS, id))!.spec).toEqual(before);
    expect((await h.call('GET', `/api/v1/app-conversations?ids=${id}`)).body[0]).toMatchObject({ title: `Conversation ${id.slice(0, 5)}`, selected_repository: 'acme/api', selected_branch: 'main', git_provider: 'github' });
  });

  it('download is a zip of every event in order plus meta.json', async () => {
    await makeSandbox(h.store, h.alice.user, 'sb-1', 'RUNNING', { url: 'http://127.0.0.1:9', key: 'sk-1' });
    const id = await readyOn('sb-1');
    await ingest('sb-1', id, [messageEvent('e1', 'first'), messageEvent('e2', 'second')]);
    const r = await fetch(`${h.server.url}/api/v1/app-conversations/${id}/download`, { headers: { authorization: `Bearer ${h.alice.key}` } });
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toBe('application/zip');
    expect(r.headers.get('content-disposition')).toContain(`conversation_${id}.zip`);
    const files = unzipSync(new Uint8Array(await r.arrayBuffer()));
    expect(Object.keys(files).sort()).toEqual(['event_000001_e1.json', 'event_000002_e2.json', 'meta.json']);
    expect(JSON.parse(strFromU8(files['meta.json']!))).toMatchObject({ id, sandbox_id: 'sb-1' });
    expect(JSON.parse(strFromU8(files['event_000002_e2.json']!))).toMatchObject({ id: 'e2', kind: 'MessageEvent' });
  });

  it("download never contains the sandbox's live session key (meta.json leaves session_api_key out)", async () => {
    const liveKey = 'sk-live-session-key-of-sb-1';
    await makeSandbox(h.store, h.alice.user, 'sb-1', 'RUNNING', { url: 'http://127.0.0.1:9', key: liveKey });
    const id = await readyOn('sb-1');
    // The record itself carries it (the owner needs it to reach the agent server) ...
    expect((await h.call('GET', `/api/v1/app-conversations?ids=${id}`)).body[0]).toMatchObject({ session_api_key: liveKey });
    const r = await fetch(`${h.server.url}/api/v1/app-conversations/${id}/download`, { headers: { authorization: `Bearer ${h.alice.key}` } });
    expect(r.status).toBe(200);
    // ... the archive does not, in any file, in any form.
    const files = unzipSync(new Uint8Array(await r.arrayBuffer()));
    const meta = JSON.parse(strFromU8(files['meta.json']!));
    expect(meta).toMatchObject({ id, sandbox_id: 'sb-1' });
    expect(meta).not.toHaveProperty('session_api_key');
    for (const [name, bytes] of Object.entries(files)) expect(strFromU8(bytes), name).not.toContain(liveKey);
  });

  it('DELETE removes the conversation and its events; the last one takes its sandbox along', async () => {
    await makeSandbox(h.store, h.alice.user, 'sb-1', 'PAUSED', { key: 'sk-1' });
    const first = await readyOn('sb-1');
    const second = await readyOn('sb-1');
    for (const id of [first, second]) {
      const c = (await h.store.get(ConversationKind, NS, id))!;
      await h.store.update(ConversationKind, { ...c, metadata: { ...c.metadata, labels: { ...c.metadata.labels, 'agentyard.dev/sandbox': 'sb-1' } } });
    }
    await ingest('sb-1', first, [messageEvent('e1', 'hello')]);

    expect((await h.call('DELETE', `/api/v1/app-conversations/${first}`, { key: h.bob.key })).status).toBe(404);
    expect((await h.call('DELETE', `/api/v1/app-conversations/${first}`)).body).toEqual({ success: true });
    expect((await h.call('GET', `/api/v1/app-conversations?ids=${first}`)).body).toEqual([null]);
    expect(await h.db.events.count(first, {})).toBe(0);
    expect(await h.store.get(SandboxKind, NS, 'sb-1')).toBeDefined(); // still has `second`

    await h.call('DELETE', `/api/v1/app-conversations/${second}`);
    const sb = await h.store.get(SandboxKind, NS, 'sb-1');
    expect(sb === undefined || sb.metadata.deletionTimestamp !== undefined).toBe(true);
  });

  it('answers a repeated DELETE by the same user with 200; a foreign or never-known id stays 404', async () => {
    await makeSandbox(h.store, h.alice.user, 'sb-1', 'RUNNING', { key: 'sk-1' });
    const id = await readyOn('sb-1');
    expect((await h.call('DELETE', `/api/v1/app-conversations/${id}`)).body).toEqual({ success: true });
    expect(await h.store.get(ConversationKind, NS, id)).toBeUndefined();
    for (const spelling of [id, id.toUpperCase(), `${id.slice(0, 8)}-${id.slice(8, 12)}-${id.slice(12, 16)}-${id.slice(16, 20)}-${id.slice(20)}`]) {
      expect(await h.call('DELETE', `/api/v1/app-conversations/${spelling}`)).toMatchObject({ status: 200, body: { success: true } });
    }
    // The last conversation took its sandbox along: deleting that too is a repeat, not a 404.
    expect(await h.store.get(SandboxKind, NS, 'sb-1')).toBeUndefined();
    expect((await h.call('DELETE', '/api/v1/sandboxes/sb-1')).body).toEqual({ success: true });
    // Nothing else reads the deleted conversation.
    expect((await h.call('PATCH', `/api/v1/app-conversations/${id}`, { body: { title: 'x' } })).status).toBe(404);
    expect((await h.call('GET', `/api/v1/conversation/${id}/events/search`)).status).toBe(404);
    // Another user learns nothing: the same answer as for an id nobody ever had.
    const foreign = await h.call('DELETE', `/api/v1/app-conversations/${id}`, { key: h.bob.key });
    const never = await h.call('DELETE', '/api/v1/app-conversations/ffffffffffffffffffffffffffffffff', { key: h.bob.key });
    expect(foreign).toMatchObject({ status: 404, body: { detail: `Conversation ${id} not found` } });
    expect(never).toMatchObject({ status: 404, body: { detail: 'Conversation ffffffffffffffffffffffffffffffff not found' } });
    expect((await h.call('DELETE', '/api/v1/sandboxes/sb-1', { key: h.bob.key })).status).toBe(404);
  });
});
