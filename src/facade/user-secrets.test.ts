// Stored secrets over real HTTP with a real SQLite resource store: names out, values only in,
// one user never sees or gets another's, and a conversation gets its owner's stored secrets under
// its own per-conversation ones (spec part 2, rule 2).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConversationKind } from '../api/conversation.ts';
import { LABEL_OWNER } from '../api/meta.ts';
import { SecretKind } from '../api/secret.ts';
import { readConversationSecrets } from '../controller/conversation/start-request.ts';
import { NS, startConversationId, startHarness, type Harness } from './test-support.ts';
import { storedSecretsName } from './user-secrets.ts';

let h: Harness;
beforeAll(async () => (h = await startHarness()));
afterAll(() => h.close());

describe('/api/v1/secrets', () => {
  it('creates, lists names only, updates and deletes; values never come back', async () => {
    const created = await h.call('POST', '/api/v1/secrets', { body: { name: 'GITHUB_TOKEN', value: 'ghp_alice_value', description: 'my GitHub' } });
    expect(created).toMatchObject({ status: 201, body: { name: 'GITHUB_TOKEN', description: 'my GitHub' } });
    await h.call('POST', '/api/v1/secrets', { body: { name: 'NPM_TOKEN', value: 'npm_alice' } });
    const dup = await h.call('POST', '/api/v1/secrets', { body: { name: 'NPM_TOKEN', value: 'x' } });
    expect(dup.status).toBe(409);

    const list = await h.call('GET', '/api/v1/secrets/search');
    expect(list.body).toEqual({ items: [{ name: 'GITHUB_TOKEN', description: 'my GitHub' }, { name: 'NPM_TOKEN', description: null }], next_page_id: null });
    const page = await h.call('GET', '/api/v1/secrets/search?limit=1');
    expect(page.body).toEqual({ items: [{ name: 'GITHUB_TOKEN', description: 'my GitHub' }], next_page_id: expect.any(String) });
    expect((await h.call('GET', `/api/v1/secrets/search?limit=1&page_id=${page.body.next_page_id}`)).body).toEqual({ items: [{ name: 'NPM_TOKEN', description: null }], next_page_id: null });
    expect((await h.call('GET', '/api/v1/secrets/search?page_id=GITHUB_TOKEN')).body.detail).toEqual([expect.objectContaining({ loc: ['query', 'page_id'] })]);
    expect((await h.call('GET', '/api/v1/secrets/NPM_TOKEN')).body).toEqual({ name: 'NPM_TOKEN', description: null });

    const patched = await h.call('PATCH', '/api/v1/secrets/NPM_TOKEN', { body: { value: 'npm_alice_2', description: 'npm' } });
    expect(patched.body).toEqual({ name: 'NPM_TOKEN', description: 'npm' });
    for (const r of [created, list, patched]) expect(JSON.stringify(r.body)).not.toMatch(/ghp_alice_value|npm_alice/);

    // Stored as the user's Secret resource, labelled with its owner.
    const secret = (await h.store.get(SecretKind, NS, storedSecretsName(h.alice.user.id)))!;
    expect(secret.metadata.labels?.[LABEL_OWNER]).toBe(h.alice.user.id);
    expect(Buffer.from(secret.data!.NPM_TOKEN!, 'base64').toString()).toBe('npm_alice_2');

    expect((await h.call('DELETE', '/api/v1/secrets/NPM_TOKEN')).body).toEqual({ success: true });
    expect((await h.call('GET', '/api/v1/secrets/NPM_TOKEN')).status).toBe(404);
    expect((await h.call('DELETE', '/api/v1/secrets/NPM_TOKEN')).status).toBe(404);
    expect((await h.call('PATCH', '/api/v1/secrets/NOPE', { body: { value: 'v' } })).status).toBe(404);
  });

  it('validates input with field paths (422)', async () => {
    const bad = await h.call('POST', '/api/v1/secrets', { body: { name: 'has space', value: 1, extra: true } });
    expect(bad.status).toBe(422);
    const locs = (bad.body.detail as { loc: string[] }[]).map((d) => d.loc.join('.'));
    expect(locs).toEqual(expect.arrayContaining(['body.name', 'body.value']));
    const reserved = await h.call('POST', '/api/v1/secrets', { body: { name: 'LLM_API_KEY', value: 'x' } });
    expect(reserved.status).toBe(422);
    expect(reserved.body.detail[0].loc).toEqual(['body', 'name']);
    expect((await h.call('GET', '/api/v1/secrets/search?limit=0')).status).toBe(422);
    expect((await h.call('POST', '/api/v1/secrets', { key: null, body: { name: 'A', value: 'b' } })).status).toBe(401);
  });

  it("keeps users apart: bob neither sees nor changes alice's secrets, and his same-named one is his own", async () => {
    const bob = h.bob.key;
    expect((await h.call('GET', '/api/v1/secrets/search', { key: bob })).body.items).toEqual([]);
    expect((await h.call('GET', '/api/v1/secrets/GITHUB_TOKEN', { key: bob })).status).toBe(404);
    expect((await h.call('DELETE', '/api/v1/secrets/GITHUB_TOKEN', { key: bob })).status).toBe(404);
    expect((await h.call('POST', '/api/v1/secrets', { key: bob, body: { name: 'GITHUB_TOKEN', value: 'ghp_bob_value' } })).status).toBe(201);
    expect((await h.call('GET', '/api/v1/secrets/GITHUB_TOKEN')).body.description).toBe('my GitHub');
  });

  it("a new conversation gets its owner's stored secrets, a per-conversation secret of the same name winning", async () => {
    await h.call('POST', '/api/v1/secrets', { body: { name: 'SHARED', value: 'stored-value' } });
    await h.call('POST', '/api/v1/secrets', { body: { name: 'ONLY_STORED', value: 'only-stored' } });
    const id = await startConversationId(h, { secrets: { SHARED: 'request-value', ONLY_REQUEST: 'only-request' } });
    const conv = (await h.store.get(ConversationKind, NS, id))!;
    expect(await readConversationSecrets(h.store, conv)).toEqual({
      GITHUB_TOKEN: 'ghp_alice_value',
      SHARED: 'request-value',
      ONLY_STORED: 'only-stored',
      ONLY_REQUEST: 'only-request',
    });
    const bobs = (await h.store.get(ConversationKind, NS, await startConversationId(h, {}, h.bob.key)))!;
    expect(await readConversationSecrets(h.store, bobs)).toEqual({ GITHUB_TOKEN: 'ghp_bob_value' });
  });

  it('refuses an initial message carrying a secret value, per-conversation or stored (rule 4), naming the secret only', async () => {
    const text = (t: string) => ({ initial_message: { role: 'user', content: [{ type: 'text', text: t }] } });
    const stored = await h.call('POST', '/api/v1/app-conversations', { body: text('use ghp_alice_value to push') });
    expect(stored.status).toBe(422);
    expect(stored.body.detail[0]).toMatchObject({ loc: ['body', 'initial_message', 'content'], msg: expect.stringContaining('GITHUB_TOKEN') });
    expect(JSON.stringify(stored.body)).not.toContain('ghp_alice_value');
    const inline = await h.call('POST', '/api/v1/app-conversations', { body: { ...text('the key is sk-live-12345678'), secrets: { API_KEY: 'sk-live-12345678' } } });
    expect(inline.status).toBe(422);
    expect(JSON.stringify(inline.body)).not.toContain('sk-live-12345678');
    expect((await h.call('POST', '/api/v1/app-conversations', { body: text('use $GITHUB_TOKEN to push') })).status).toBe(200);
  });
});
