// Registered marketplaces over real HTTP with a real SQLite resource store: register, toggle
// Auto-Load, unregister; users kept apart; organization ones shared and governed by administrators;
// plugins listed from a real Git repository; a new conversation snapshots the Auto-Load
// marketplaces in its scope, and a later change does not reach it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConversationKind } from '../api/conversation.ts';
import { LABEL_OWNER } from '../api/meta.ts';
import { SecretKind } from '../api/secret.ts';
import { startGitHttpServer } from '../testing/git-http/server.ts';
import { marketplacesSecretName, ORGANIZATION_MARKETPLACES } from './marketplaces.ts';
import { NS, startConversationId, startHarness, type Harness } from './test-support.ts';

let h: Harness;
// Marketplaces on any host are listed here: the test's Git server is on 127.0.0.1 (embedded mode's setting).
beforeAll(async () => (h = await startHarness({ marketplaceListing: 'any-host' })));
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

  it('keeps organization marketplaces in one list every user sees and only administrators change', async () => {
    const org = { name: 'acme-only', url: 'https://github.com/acme/market', scope: 'organization', organization: 'acme', auto_load: true };
    // A user who is not an administrator may not register one.
    const refused = await h.call('POST', M, { body: org });
    expect(refused.status).toBe(403);
    await h.db.setUserAdmin(h.alice.user.id, true);
    try {
      expect((await h.call('POST', M, { body: org })).status).toBe(201);
      // Bob sees it, gets it on his conversations on that organization's repositories, and cannot change it.
      expect((await h.call('GET', M, { key: h.bob.key })).body.items).toEqual([{ ...org, ref: null, path: null }]);
      expect((await h.call('PATCH', `${M}/acme-only`, { key: h.bob.key, body: { auto_load: false } })).status).toBe(403);
      expect((await h.call('DELETE', `${M}/acme-only`, { key: h.bob.key })).status).toBe(403);
      expect((await h.call('POST', M, { key: h.bob.key, body: { name: 'acme-only', url: 'https://github.com/bob/market' } })).status).toBe(409);
      expect((await spec(await startConversationId(h, { selected_repository: 'Acme/widgets' }, h.bob.key))).autoLoadMarketplaces?.map((m) => m.name)).toEqual(['acme-only']);
      expect((await spec(await startConversationId(h, { selected_repository: 'Acme/widgets' }))).autoLoadMarketplaces?.map((m) => m.name)).toEqual(['acme-only']);
      expect((await spec(await startConversationId(h, { selected_repository: 'other/widgets' }))).autoLoadMarketplaces).toBeUndefined();
      expect((await spec(await startConversationId(h))).autoLoadMarketplaces).toBeUndefined();
      expect((await h.call('DELETE', `${M}/acme-only`)).body).toEqual({ success: true });
      expect((await h.call('GET', M, { key: h.bob.key })).body.items).toEqual([]);
    } finally {
      await h.db.setUserAdmin(h.alice.user.id, false);
    }
  });

  it("moves an organization marketplace kept in a user's personal list (before the installation list) to every user", async () => {
    const legacy = { name: 'old-org', url: 'https://github.com/acme/old', ref: null, path: null, scope: 'organization', organization: 'acme', auto_load: true };
    const personal = { name: 'keep', url: 'https://github.com/alice/keep', ref: null, path: null, scope: 'personal', organization: null, auto_load: false };
    // Written as an earlier version did: both in alice's own list.
    const data = { 'registrations.json': Buffer.from(JSON.stringify([personal, legacy])).toString('base64') };
    const existing = await h.store.get(SecretKind, NS, marketplacesSecretName(h.alice.user.id));
    if (existing) await h.store.update(SecretKind, { ...existing, data });
    else await h.store.create(SecretKind, { apiVersion: 'v1', kind: 'Secret', metadata: { name: marketplacesSecretName(h.alice.user.id), namespace: NS, labels: { [LABEL_OWNER]: h.alice.user.id } }, type: 'Opaque', data });
    // Bob does not see it until its owner's list is read; then it is the installation's.
    expect((await h.call('GET', M, { key: h.bob.key })).body.items).toEqual([]);
    expect((await h.call('GET', M)).body.items).toEqual([personal, legacy]);
    expect((await h.call('GET', M, { key: h.bob.key })).body.items).toEqual([legacy]);
    const stored = await h.store.get(SecretKind, NS, ORGANIZATION_MARKETPLACES);
    expect(JSON.parse(Buffer.from(stored!.data!['registrations.json']!, 'base64').toString())).toEqual([legacy]);
    await h.db.setUserAdmin(h.alice.user.id, true);
    await h.call('DELETE', `${M}/old-org`);
    await h.call('DELETE', `${M}/keep`);
    await h.db.setUserAdmin(h.alice.user.id, false);
  });

  it("lists a marketplace's plugins from its manifest in a real Git repository", async () => {
    const git = await startGitHttpServer();
    try {
      const manifest = { name: 'team', plugins: [{ name: 'lint', source: './plugins/lint' }, { name: 'remote', source: { source: 'github', repo: 'acme/remote-plugin', ref: 'v1' } }] };
      git.createRepo('acme/market', { main: { 'catalog/.claude-plugin/marketplace.json': JSON.stringify(manifest), 'catalog/plugins/lint/README.md': 'lint\n' } });
      const url = `${git.url}/acme/market.git`;
      await h.call('POST', M, { body: { name: 'team-plugins', url, path: 'catalog' } });
      await h.call('POST', M, { body: { name: 'no-manifest', url } });
      const listed = await h.call('GET', `${M}/team-plugins/plugins`);
      expect(listed.status).toBe(200);
      expect(listed.body).toMatchObject({ status: 'OK', detail: null, marketplace: { name: 'team-plugins' } });
      expect(listed.body.plugins).toEqual([
        { name: 'lint', source: url, repo_path: 'catalog/plugins/lint' },
        { name: 'remote', source: 'github:acme/remote-plugin', ref: 'v1' },
      ]);
      expect((await h.call('GET', `${M}/no-manifest/plugins`)).body).toMatchObject({ status: 'NO_MANIFEST', plugins: [] });
      expect((await h.call('GET', `${M}/team-plugins/plugins`, { key: h.bob.key })).status).toBe(404);
      expect((await h.call('GET', `${M}/Bad Name/plugins`)).status).toBe(422);
      await h.call('DELETE', `${M}/team-plugins`);
      await h.call('DELETE', `${M}/no-manifest`);
    } finally {
      await git.close();
    }
  });

  it('by default lists marketplaces on the configured Git hosts only, without cloning anything else', async () => {
    const git = await startGitHttpServer();
    const strict = await startHarness();
    try {
      git.createRepo('acme/market', { main: { '.claude-plugin/marketplace.json': '{"plugins":[]}' } });
      await strict.call('POST', M, { body: { name: 'inside', url: `${git.url}/acme/market.git` } });
      const r = await strict.call('GET', `${M}/inside/plugins`);
      expect(r.status).toBe(200);
      expect(r.body).toMatchObject({ status: 'FAILED', plugins: [] });
      expect(r.body.detail).toContain('Git hosts only');
      expect(git.requests).toEqual([]);
    } finally {
      await strict.close();
      await git.close();
    }
  });

  it('validates input with field paths (422)', async () => {
    const bad = await h.call('POST', M, { body: { name: 'Bad Name', url: 'https://user:pw@github.com/a/b', path: '../x', extra: 1 } });
    expect(bad.status).toBe(422);
    const locs = (bad.body.detail as { loc: string[] }[]).map((d) => d.loc.join('.'));
    expect(locs).toEqual(expect.arrayContaining(['body.name', 'body.url', 'body.path']));
    const org = await h.call('POST', M, { body: { name: 'o', url: 'https://github.com/a/b', scope: 'organization' } });  // 422 before the 403 for a non-administrator
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
