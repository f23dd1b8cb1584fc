// Revoking API keys and disabling users (#18 finding 5), over HTTP against the running API and with
// the `agentyard users` CLI on the same installation: a revoked key and a disabled user's keys are
// refused with 401 on the very next request.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runUsersCli } from '../cli/users.ts';
import { startHarness, type Harness } from './test-support.ts';

describe('API keys and users', () => {
  let h: Harness;
  beforeEach(async () => (h = await startHarness()));
  afterEach(() => h.close());

  const me = (key: string) => h.call('GET', '/api/v1/users/me', { key });

  it('a user lists their keys and revokes one: refused at once, the others keep working', async () => {
    const second = await h.db.createApiKey(h.alice.user.id);
    const listed = await h.call('GET', '/api/v1/users/me/keys');
    expect(listed.status).toBe(200);
    expect(listed.body.items.map((k: { prefix: string }) => k.prefix).sort()).toEqual([h.alice.key.slice(0, 9), second.slice(0, 9)].sort());
    expect(JSON.stringify(listed.body)).not.toContain(h.alice.key);

    expect(await h.call('DELETE', `/api/v1/users/me/keys/${h.alice.key.slice(0, 9)}`, { key: second })).toMatchObject({ status: 200, body: { success: true } });
    expect(await me(h.alice.key)).toMatchObject({ status: 401, body: { detail: 'Invalid API key' } });
    expect((await me(second)).status).toBe(200);
    expect((await h.call('GET', '/api/v1/users/me/keys', { key: second })).body.items.find((k: { prefix: string }) => k.prefix === h.alice.key.slice(0, 9))).toMatchObject({ revoked_at: expect.any(String) });
    // Again, or another user's prefix: no working key of the caller has it.
    expect((await h.call('DELETE', `/api/v1/users/me/keys/${h.alice.key.slice(0, 9)}`, { key: second })).status).toBe(404);
    expect((await h.call('DELETE', `/api/v1/users/me/keys/${h.bob.key.slice(0, 9)}`, { key: second })).status).toBe(404);
    expect((await me(h.bob.key)).status).toBe(200);
    // A user may revoke the key they are using; the next request with it is refused.
    expect((await h.call('DELETE', `/api/v1/users/me/keys/${second.slice(0, 9)}`, { key: second })).status).toBe(200);
    expect((await me(second)).status).toBe(401);
  });

  it('a user creates a key: shown once, then listed by its prefix, and it works at once', async () => {
    const created = await h.call('POST', '/api/v1/users/me/keys');
    expect(created.status).toBe(201);
    const { key, prefix } = created.body as { key: string; prefix: string };
    expect(key.startsWith(prefix)).toBe(true);
    expect(created.body.created_at).toEqual(expect.any(String));
    expect((await me(key)).body).toMatchObject({ id: h.alice.user.id });
    const listed = await h.call('GET', '/api/v1/users/me/keys');
    expect(listed.body.items.map((k: { prefix: string }) => k.prefix)).toContain(prefix);
    expect(JSON.stringify(listed.body)).not.toContain(key);
    expect((await h.call('DELETE', `/api/v1/users/me/keys/${prefix}`)).status).toBe(200);
    expect((await me(key)).status).toBe(401);
  });

  it('administrators grant and revoke the administrator role, never their own', async () => {
    expect((await h.call('POST', `/api/v1/users/${h.bob.user.id}/admin`)).status).toBe(403);
    await h.db.setUserAdmin(h.alice.user.id, true);
    expect(await h.call('POST', `/api/v1/users/${h.bob.user.id}/admin`)).toMatchObject({ status: 200, body: { id: h.bob.user.id, admin: true } });
    // Bob is an administrator on his very next request.
    expect((await h.call('GET', '/api/v1/users', { key: h.bob.key })).status).toBe(200);
    expect((await h.call('DELETE', `/api/v1/users/${h.alice.user.id}/admin`)).status).toBe(409);
    expect(await h.call('DELETE', `/api/v1/users/${h.bob.user.id}/admin`)).toMatchObject({ status: 200, body: { admin: false } });
    expect((await h.call('GET', '/api/v1/users', { key: h.bob.key })).status).toBe(403);
    expect((await h.call('POST', '/api/v1/users/nobody/admin')).status).toBe(404);
  });

  it('only administrators manage users; a disabled user is refused at once and comes back when enabled', async () => {
    expect(await h.call('GET', '/api/v1/users')).toMatchObject({ status: 403, body: { detail: 'Only administrators manage users' } });
    expect((await h.call('POST', `/api/v1/users/${h.bob.user.id}/disable`)).status).toBe(403);
    expect((await me(h.bob.key)).status).toBe(200);

    await h.db.setUserAdmin(h.alice.user.id, true);
    const users = await h.call('GET', '/api/v1/users');
    expect(users.body.items.map((u: { name: string; admin: boolean }) => [u.name, u.admin]).sort()).toEqual([['alice', true], ['bob', false]]);

    const disabled = await h.call('POST', `/api/v1/users/${h.bob.user.id}/disable`);
    expect(disabled).toMatchObject({ status: 200, body: { id: h.bob.user.id, disabled_at: expect.any(String) } });
    expect((await me(h.bob.key)).status).toBe(401);
    expect((await h.call('GET', '/api/v1/sandboxes/search', { key: h.bob.key })).status).toBe(401);
    expect((await h.call('POST', `/api/v1/users/${h.bob.user.id}/enable`)).body).toMatchObject({ disabled_at: null });
    expect((await me(h.bob.key)).status).toBe(200);

    // An administrator revokes another user's key; cannot disable themselves; unknown ids are 404.
    expect((await h.call('GET', `/api/v1/users/${h.bob.user.id}/keys`)).body.items).toHaveLength(1);
    expect((await h.call('DELETE', `/api/v1/users/${h.bob.user.id}/keys/${h.bob.key.slice(0, 9)}`)).status).toBe(200);
    expect((await me(h.bob.key)).status).toBe(401);
    expect(await h.call('POST', `/api/v1/users/${h.alice.user.id}/disable`)).toMatchObject({ status: 409 });
    expect((await h.call('POST', '/api/v1/users/nobody/disable')).status).toBe(404);
  });

  it('the CLI revokes keys and disables users of the running installation, refused at once', async () => {
    const out: string[] = [];
    const cli = (...args: string[]) => runUsersCli([...args, '--data-dir', h.dir], {}, (s) => out.push(s));
    const second = await h.db.createApiKey(h.bob.user.id);
    expect(await cli('revoke-key', h.bob.user.id, `${h.bob.key.slice(0, 9)}…`)).toBe(0);
    expect((await me(h.bob.key)).status).toBe(401);
    expect((await me(second)).status).toBe(200);
    expect(await cli('revoke-key', h.bob.user.id, h.bob.key.slice(0, 9))).toBe(2); // already revoked
    expect(await cli('disable', h.bob.user.id)).toBe(0);
    expect((await me(second)).status).toBe(401);
    out.length = 0;
    expect(await cli('list')).toBe(0);
    expect(out.join('')).toMatch(new RegExp(`${h.bob.user.id}  bob  disabled \\S+`));
    expect(await cli('enable', h.bob.user.id)).toBe(0);
    expect((await me(second)).status).toBe(200);
    out.length = 0;
    expect(await cli('keys', h.bob.user.id)).toBe(0);
    expect(out.join('')).toMatch(new RegExp(`${h.bob.key.slice(0, 9)}…  created \\S+  revoked \\S+`));
    expect(await cli('disable', 'nobody')).toBe(2);
  });
});
