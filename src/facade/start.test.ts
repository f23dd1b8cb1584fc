// POST /api/v1/app-conversations and the start-task reads.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ConversationKind } from '../api/conversation.ts';
import { LABEL_START_TASK } from '../api/meta.ts';
import { SecretKind } from '../api/secret.ts';
import { makeSandbox, NS, setStartTask, startHarness, type Harness } from './test-support.ts';

const hello = { role: 'user', content: [{ type: 'text', text: 'hello' }] };

describe('start a conversation', () => {
  let h: Harness;
  beforeEach(async () => (h = await startHarness({ capacity: 2, retryAfterSeconds: 7 })));
  afterEach(() => h.close());

  it('writes a Conversation owned by the caller and answers a WORKING start task', async () => {
    const r = await h.call('POST', '/api/v1/app-conversations', {
      body: {
        initial_message: hello,
        selected_repository: 'acme/api',
        selected_branch: 'main',
        plugins: [{ source: 'github:acme/plugin', ref: 'v1' }],
        observability_span_name: 'fix tests nightly',
        observability_tags: ['ci'],
        observability_metadata: { run: 3, labels: ['a', 'b'] },
      },
    });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({
      id: expect.stringMatching(/^[0-9a-f]{32}$/),
      created_by_user_id: h.alice.user.id,
      status: 'WORKING',
      detail: null,
      app_conversation_id: null,
      sandbox_id: null,
      agent_server_url: null,
      request: { initial_message: { ...hello, run: true }, selected_repository: 'acme/api', secrets: null },
      created_at: '2026-03-01T10:00:00.000Z',
    });
    const [conv] = (await h.store.list(ConversationKind, NS)).items;
    expect(conv!.metadata.labels?.[LABEL_START_TASK]).toBe(r.body.id);
    expect(conv!.spec).toMatchObject({
      owner: h.alice.user.id,
      sandboxGrouping: 'NO_GROUPING',
      selectedRepository: 'acme/api',
      plugins: [{ source: 'github:acme/plugin', ref: 'v1' }],
      observability: { spanName: 'fix tests nightly', tags: ['ci'], metadata: { run: 3, labels: ['a', 'b'] } },
    });
  });

  it('keeps secrets in a Secret, masks them everywhere and never echoes them', async () => {
    const r = await h.call('POST', '/api/v1/app-conversations', { body: { initial_message: hello, secrets: { GITHUB_TOKEN: 'ghp_s3cret' } } });
    expect(r.status).toBe(200);
    expect(r.body.request.secrets).toEqual({ GITHUB_TOKEN: '**********' });
    expect(JSON.stringify(r.body)).not.toContain('ghp_s3cret');
    const [conv] = (await h.store.list(ConversationKind, NS)).items;
    expect(JSON.stringify(conv)).not.toContain('ghp_s3cret');
    const secret = await h.store.get(SecretKind, NS, conv!.spec.secretsRef!);
    expect(Buffer.from(secret!.data!['GITHUB_TOKEN']!, 'base64').toString()).toBe('ghp_s3cret');
    expect(secret!.metadata.ownerReferences?.[0]).toMatchObject({ kind: 'Conversation', name: conv!.metadata.name, uid: conv!.metadata.uid });
    const tasks = await h.call('GET', `/api/v1/app-conversations/start-tasks?ids=${r.body.id}`);
    expect(tasks.body[0].request.secrets).toEqual({ GITHUB_TOKEN: '**********' });
  });

  it('refuses reserved or malformed secret names with located 422s', async () => {
    const r = await h.call('POST', '/api/v1/app-conversations', { body: { secrets: { LLM_API_KEY: 'x', 'bad name': 'y' } } });
    expect(r.status).toBe(422);
    expect(r.body.detail.map((i: { loc: unknown[] }) => i.loc)).toEqual([
      ['body', 'secrets', 'LLM_API_KEY'],
      ['body', 'secrets', 'bad name'],
    ]);
    expect((await h.store.list(SecretKind, NS)).items).toEqual([]);
  });

  it('removes the Secret again when the Conversation cannot be created', async () => {
    const create = h.store.create.bind(h.store);
    h.store.create = (async (kind: { kind: string }, obj: unknown) => {
      if (kind.kind === 'Conversation') throw new Error('disk full');
      return create(kind as never, obj as never);
    }) as typeof h.store.create;
    const r = await h.call('POST', '/api/v1/app-conversations', { body: { secrets: { TOKEN: 'x' } } });
    h.store.create = create;
    expect(r.status).toBe(500);
    expect((await h.store.list(SecretKind, NS)).items).toEqual([]);
  });

  it('validates selected_repository and unknown fields', async () => {
    const r = await h.call('POST', '/api/v1/app-conversations', { body: { selected_repository: 'not-a-repo', no_such_field: 'x' } });
    expect(r.status).toBe(422);
    expect(r.body.detail.map((i: { loc: unknown[] }) => i.loc)).toEqual(expect.arrayContaining([['body', 'selected_repository'], ['body', 'no_such_field']]));
  });

  it('attaches to an explicit sandbox only when it is the caller’s and RUNNING', async () => {
    await makeSandbox(h.store, h.alice.user, 'sb-run', 'RUNNING', { url: 'http://127.0.0.1:1' });
    await makeSandbox(h.store, h.alice.user, 'sb-paused', 'PAUSED');
    await makeSandbox(h.store, h.bob.user, 'sb-bob', 'RUNNING');
    const ok = await h.call('POST', '/api/v1/app-conversations', { body: { sandbox_id: 'sb-run' } });
    expect(ok.status).toBe(200);
    expect(ok.body.sandbox_id).toBe('sb-run');
    expect(await h.call('POST', '/api/v1/app-conversations', { body: { sandbox_id: 'sb-paused' } })).toMatchObject({
      status: 409,
      body: { detail: expect.stringContaining('RUNNING') },
    });
    expect((await h.call('POST', '/api/v1/app-conversations', { body: { sandbox_id: 'sb-bob' } })).status).toBe(404);
    expect((await h.call('POST', '/api/v1/app-conversations', { body: { sandbox_id: 'nope' } })).status).toBe(404);
  });

  it('answers 429 with Retry-After at capacity instead of pausing anyone', async () => {
    await makeSandbox(h.store, h.bob.user, 'sb-1', 'RUNNING');
    expect((await h.call('POST', '/api/v1/app-conversations', { body: {} })).status).toBe(200); // awaits a sandbox: 2 of 2
    const r = await h.call('POST', '/api/v1/app-conversations', { body: {} });
    expect(r.status).toBe(429);
    expect(r.headers.get('retry-after')).toBe('7');
    const sb = (await h.store.list(ConversationKind, NS)).items;
    expect(sb).toHaveLength(1);
    // Grouping onto a running sandbox of one's own needs no new slot.
    await makeSandbox(h.store, h.alice.user, 'sb-a', 'RUNNING');
    await h.call('POST', '/api/v1/settings', { body: { sandbox_grouping_strategy: 'ADD_TO_ANY' } });
    const grouped = await h.call('POST', '/api/v1/app-conversations', { body: {} });
    expect(grouped.status).toBe(200);
    expect(grouped.body.request.sandbox_id).toBeNull();
    const convs = (await h.store.list(ConversationKind, NS)).items;
    expect(convs.map((c) => c.spec.sandboxGrouping).sort()).toEqual(['ADD_TO_ANY', 'NO_GROUPING']);
  });
});

describe('start tasks', () => {
  let h: Harness;
  beforeEach(async () => (h = await startHarness()));
  afterEach(() => h.close());

  async function start(key = h.alice.key) {
    return (await h.call('POST', '/api/v1/app-conversations', { key, body: { initial_message: hello } })).body;
  }

  it('reads tasks aligned with the ids, null for unknown and foreign ones, and follows the controller', async () => {
    const a = await start();
    const b = await start(h.bob.key);
    const dashed = `${a.id.slice(0, 8)}-${a.id.slice(8, 12)}-${a.id.slice(12, 16)}-${a.id.slice(16, 20)}-${a.id.slice(20)}`;
    const r = await h.call('GET', `/api/v1/app-conversations/start-tasks?ids=${a.id}&ids=${b.id}&ids=ffffffffffffffffffffffffffffffff&ids=${dashed}`);
    expect(r.status).toBe(200);
    expect(r.body.map((t: { id: string } | null) => t?.id ?? null)).toEqual([a.id, null, null, a.id]);
    const junk = await h.call('GET', `/api/v1/app-conversations/start-tasks?ids=${a.id}&ids=junk`);
    expect(junk.status).toBe(422);
    expect(junk.body.detail.map((i: { loc: unknown[] }) => i.loc)).toEqual([['query', 'ids', 1]]);

    const [conv] = (await h.store.list(ConversationKind, NS, { labelSelector: `${LABEL_START_TASK}=${a.id}` })).items;
    await makeSandbox(h.store, h.alice.user, 'sb-1', 'RUNNING', { url: 'http://127.0.0.1:9' });
    await setStartTask(h.store, conv!.metadata.name, 'READY', 'sb-1', '2026-03-01T10:05:00.000Z');
    const ready = (await h.call('GET', `/api/v1/app-conversations/start-tasks?ids=${a.id}`)).body[0];
    expect(ready).toMatchObject({
      status: 'READY',
      app_conversation_id: conv!.metadata.name,
      sandbox_id: 'sb-1',
      agent_server_url: 'http://127.0.0.1:9',
      updated_at: '2026-03-01T10:05:00.000Z',
    });
  });

  it('limits batch reads to 100 ids', async () => {
    const ids = Array.from({ length: 101 }, () => 'ids=0123456789abcdef0123456789abcdef').join('&');
    expect((await h.call('GET', `/api/v1/app-conversations/start-tasks?${ids}`)).status).toBe(422);
  });

  it('searches with stable cursors and counts', async () => {
    const made = [];
    for (let i = 0; i < 5; i++) {
      made.push((await start()).id);
      h.clock.advance(1000);
    }
    await start(h.bob.key);
    const p1 = await h.call('GET', '/api/v1/app-conversations/start-tasks/search?limit=2');
    expect(p1.body.items.map((t: { id: string }) => t.id)).toEqual([made[4], made[3]]);
    await start(); // newer: must not shift the next page
    const p2 = await h.call('GET', `/api/v1/app-conversations/start-tasks/search?limit=2&page_id=${p1.body.next_page_id}`);
    expect(p2.body.items.map((t: { id: string }) => t.id)).toEqual([made[2], made[1]]);
    const asc = await h.call('GET', '/api/v1/app-conversations/start-tasks/search?sort_order=CREATED_AT&limit=1');
    expect(asc.body.items[0].id).toBe(made[0]);
    expect((await h.call('GET', '/api/v1/app-conversations/start-tasks/count')).body).toBe(6);
    expect((await h.call('GET', '/api/v1/app-conversations/start-tasks/count?created_at__gte=2026-03-01T10:00:03Z')).body).toBe(3);
    expect((await h.call('GET', '/api/v1/app-conversations/start-tasks/search?page_id=%%%')).status).toBe(422);
  });
});
