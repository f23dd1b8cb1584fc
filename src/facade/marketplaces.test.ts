// Registered marketplaces over real HTTP with a real SQLite resource store: register, toggle
// Auto-Load, unregister; users kept apart; a new conversation snapshots the Auto-Load
// marketplaces in its scope, and a later change does not reach it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConversationKind } from '../api/conversation.ts';
import { NS, startConversationId, startHarness, type Harness } from './test-support.ts';

let h: Harness;
beforeAll(async () => (h = await startHarness()));
afterAll(() => h.close());

const M = '/api/v1/settings/marketplaces';
const spec = async (id: string) => (await h.store.get(ConversationKind, NS, id))!.spec;

describe('/api/v1/settings/marketplaces', () => {
  it('registers, lists, toggles Auto-Load and unregisters', async () => {
    const created = await h.call('POST', M, { body: { name: 'team', url: 'https://github.com/acme/market', ref: 'v2', path: 'catalog' } });
    expect(created).toMatchObject({ status: 201, body: { name: 'team', url: 'https://github.com/acme/market', ref: 'v2', path: 'catalog', scope: 'personal', organization: null, auto_load: false } });
    expect((await h.call('POST', M, { body: { name: 'team', url: 'https://github.com/acme/other' } })).status).toBe(409);
    expect((await h.call('GET', M)).body.items).toHaveLength(1);

    // Registering alone loads nothing.
    expect((await spec(await startConversationId(h))).autoLoadMarketplaces).toBeUndefined();

    const on = await h.call('PATCH', `${M}/team`, { body: { auto_load: true } });
    expect(on.body.auto_load).toBe(true);
    const started = await startConversationId(h);
    expect((await spec(started)).autoLoadMarketplaces).toEqual([{ name: 'team', url: 'https://github.com/acme/market', ref: 'v2', path: 'catalog' }]);

    // A change applies to later conversations only.
    await h.call('PATCH', `${M}/team`, { body: { ref: null, path: null } });
    expect((await spec(await startConversationId(h))).autoLoadMarketplaces).toEqual([{ name: 'team', url: 'https://github.com/acme/market' }]);
    expect((await spec(started)).autoLoadMarketplaces).toEqual([{ name: 'team', url: 'https://github.com/acme/market', ref: 'v2', path: 'catalog' }]);

    expect((await h.call('DELETE', `${M}/team`)).body).toEqual({ success: true });
    expect((await h.call('DELETE', `${M}/team`)).status).toBe(404);
    expect((await h.call('PATCH', `${M}/team`, { body: { auto_load: false } })).status).toBe(404);
  });

  it('applies organization marketplaces only to conversations on that organization repositories', async () => {
    await h.call('POST', M, { body: { name: 'acme-only', url: 'https://github.com/acme/market', scope: 'organization', organization: 'acme', auto_load: true } });
    expect((await spec(await startConversationId(h, { selected_repository: 'Acme/widgets' }))).autoLoadMarketplaces?.map((m) => m.name)).toEqual(['acme-only']);
    expect((await spec(await startConversationId(h, { selected_repository: 'other/widgets' }))).autoLoadMarketplaces).toBeUndefined();
    expect((await spec(await startConversationId(h))).autoLoadMarketplaces).toBeUndefined();
    await h.call('DELETE', `${M}/acme-only`);
  });

  it('validates input with field paths (422)', async () => {
    const bad = await h.call('POST', M, { body: { name: 'Bad Name', url: 'https://user:pw@github.com/a/b', path: '../x', extra: 1 } });
    expect(bad.status).toBe(422);
    const locs = (bad.body.detail as { loc: string[] }[]).map((d) => d.loc.join('.'));
    expect(locs).toEqual(expect.arrayContaining(['body.name', 'body.url', 'body.path']));
    const org = await h.call('POST', M, { body: { name: 'o', url: 'https://github.com/a/b', scope: 'organization' } });
    expect(org.status).toBe(422);
    expect(org.body.detail[0].loc).toEqual(['body', 'organization']);
    expect((await h.call('PATCH', `${M}/x`, { body: { auto_load: 'yes' } })).status).toBe(422);
  });

  it("keeps users apart: bob's conversations never get alice's marketplaces", async () => {
    await h.call('POST', M, { body: { name: 'mine', url: 'https://github.com/alice/market', auto_load: true } });
    expect((await h.call('GET', M, { key: h.bob.key })).body.items).toEqual([]);
    expect((await h.call('DELETE', `${M}/mine`, { key: h.bob.key })).status).toBe(404);
    expect((await spec(await startConversationId(h, {}, h.bob.key))).autoLoadMarketplaces).toBeUndefined();
    expect((await spec(await startConversationId(h))).autoLoadMarketplaces?.map((m) => m.name)).toEqual(['mine']);
  });
});
