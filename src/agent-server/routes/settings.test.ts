// /api/settings/secrets, /api/workspaces, /api/auth/workspace-session and /api/init on a real agent
// server (real SQLite): wire shapes as OpenHands 1.58 answers them, 422 locations, what survives a
// restart on the same data dir (sealed secrets need the secret key), and a hand-over's new key.
import { describe, expect, it } from 'vitest';
import Database from 'better-sqlite3';
import { join } from 'node:path';
import { TEST_KEY, useServersOnOneDir, type TestServer } from '../test-support.ts';

const on = useServersOnOneDir();
const start = (secretKey?: string): Promise<TestServer> => on.start(secretKey ? { secretKey } : {});
const restart = (s: TestServer, secretKey?: string): Promise<TestServer> => on.restart(s, secretKey ? { secretKey } : {});
const put = (s: TestServer, body: unknown) => s.api('/api/settings/secrets', { method: 'PUT', body });

describe('/api/settings/secrets', () => {
  it('lists names and descriptions without values, in the order first written; reads one value as text; deletes', async () => {
    const s = await start('a-secret-key-of-some-length');
    expect((await s.api('/api/settings/secrets')).body).toEqual({ secrets: [] });
    expect(await put(s, { name: 'GITHUB_TOKEN', value: 'ghp_one', description: 'GitHub' })).toEqual({ status: 200, body: { name: 'GITHUB_TOKEN', description: 'GitHub' } });
    expect((await put(s, { name: 'npm_token', value: 'npm-1' })).body).toEqual({ name: 'npm_token', description: null });
    // An upsert keeps the secret's place and takes the new description.
    expect((await put(s, { name: 'GITHUB_TOKEN', value: 'ghp_two', description: null })).status).toBe(200);
    const list = await s.api('/api/settings/secrets');
    expect(list.body).toEqual({ secrets: [{ name: 'GITHUB_TOKEN', description: null }, { name: 'npm_token', description: null }] });
    expect(JSON.stringify(list.body)).not.toContain('ghp_');

    const res = await fetch(`${s.url}/api/settings/secrets/GITHUB_TOKEN`, { headers: { 'x-session-api-key': TEST_KEY } });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/plain; charset=utf-8');
    expect(await res.text()).toBe('ghp_two');

    expect(await s.api('/api/settings/secrets/GITHUB_TOKEN', { method: 'DELETE' })).toEqual({ status: 200, body: { deleted: true } });
    expect(await s.api('/api/settings/secrets/GITHUB_TOKEN', { method: 'DELETE' })).toEqual({ status: 404, body: { detail: 'Secret not found' } });
    expect(await s.api('/api/settings/secrets/GITHUB_TOKEN')).toEqual({ status: 404, body: { detail: 'Secret not found' } });
    expect((await s.api('/api/settings/secrets/npm_token', { key: 'wrong' })).status).toBe(401);
    // No agent profiles here: any id is unknown, as OpenHands answers an unknown one.
    expect(await s.api('/api/settings/secrets?agent_profile_id=p1')).toEqual({ status: 404, body: { detail: 'Agent profile not found' } });
  });

  it('refuses bad input with 422 at the field', async () => {
    const s = await start('a-secret-key-of-some-length');
    const locs = async (body: unknown) => {
      const r = await put(s, body);
      expect(r.status).toBe(422);
      return r.body.detail.map((i: { loc: unknown }) => i.loc);
    };
    expect(await locs({})).toEqual([['body', 'name'], ['body', 'value']]);
    expect(await locs({ name: 'A', value: 5 })).toEqual([['body', 'value']]);
    expect(await locs({ name: '1abc', value: 'v' })).toEqual([['body', 'name']]);
    expect(await locs({ name: 'x'.repeat(65), value: 'v' })).toEqual([['body', 'name']]);
    expect(await locs({ name: 'A', value: '   ' })).toEqual([['body', 'value']]);
    expect(await locs({ name: 'A', value: '**********' })).toEqual([['body', 'value']]);
    expect(await locs([])).toEqual([['body']]);
    for (const method of ['GET', 'DELETE']) {
      const r = await s.api('/api/settings/secrets/has-dash', { method });
      expect(r.status).toBe(422);
      expect(r.body.detail[0]).toMatchObject({ loc: ['path', 'name'], msg: expect.stringContaining('Must start with a letter') });
    }
    expect((await s.api('/api/settings/secrets')).body).toEqual({ secrets: [] });
  });

  it('keeps values sealed on disk and gets them back after a restart with the same secret key', async () => {
    let s = await start('a-secret-key-of-some-length');
    await put(s, { name: 'API_TOKEN', value: 'tok-plain-value', description: 'd' });
    const db = new Database(join(on.dir.path, 'data', 'agent-server.db'), { readonly: true });
    const rows = db.prepare('SELECT * FROM settings_secrets').all();
    db.close();
    expect(JSON.stringify(rows)).not.toContain('tok-plain-value');
    expect(rows).toHaveLength(1);

    s = await restart(s, 'a-secret-key-of-some-length');
    expect((await s.api('/api/settings/secrets')).body).toEqual({ secrets: [{ name: 'API_TOKEN', description: 'd' }] });
    expect(await s.api('/api/settings/secrets/API_TOKEN')).toEqual({ status: 200, body: 'tok-plain-value' });

    // Another key cannot open it: not found (one answer for every reason), never garbage.
    s = await restart(s, 'another-key-entirely-different');
    expect((await s.api('/api/settings/secrets/API_TOKEN')).status).toBe(404);
  });

  it('without a secret key keeps values in memory only: nothing on disk, forgotten on restart', async () => {
    let s = await start();
    await put(s, { name: 'API_TOKEN', value: 'tok-memory' });
    expect(await s.api('/api/settings/secrets/API_TOKEN')).toEqual({ status: 200, body: 'tok-memory' });
    const db = new Database(join(on.dir.path, 'data', 'agent-server.db'), { readonly: true });
    expect(db.prepare('SELECT count(*) AS n FROM settings_secrets').get()).toEqual({ n: 0 });
    db.close();
    s = await restart(s);
    expect((await s.api('/api/settings/secrets')).body).toEqual({ secrets: [] });
  });

  it('a hand-over with a new secret key seals the stored values again, so the next start opens them', async () => {
    const s = await start('pool-secret-key-0123456789');
    await put(s, { name: 'KEPT', value: 'kept-value' });
    const handed = await s.api('/api/agentyard/hand-over', { method: 'POST', body: { session_key: 'user-session-key-0123456789', secret_key: 'user-secret-key-0123456789' } });
    expect(handed.status).toBe(200);
    const next = await on.restart(s, { secretKey: 'user-secret-key-0123456789', sessionKeys: ['user-session-key-0123456789'] });
    expect(await next.api('/api/settings/secrets/KEPT', { key: 'user-session-key-0123456789' })).toEqual({ status: 200, body: 'kept-value' });
  });
});

describe('/api/workspaces', () => {
  it('adds idempotently by path (also within one request), removes by path, and keeps them over a restart', async () => {
    let s = await start();
    expect((await s.api('/api/workspaces')).body).toEqual({ workspaces: [], workspaceParents: [] });
    const added = await s.api('/api/workspaces', {
      method: 'POST',
      body: { workspaces: [{ id: '/a', name: 'a', path: '/a', parentPath: '/' }, { id: '/a', name: 'again', path: '/a' }, { id: '/b', name: 'b', path: '/b', parent_path: '/p' }, { id: '/c', name: 'c', path: '/c', parentPath: null }] },
    });
    expect(added).toEqual({
      status: 200,
      body: { workspaces: [{ id: '/a', name: 'a', path: '/a', parentPath: '/' }, { id: '/b', name: 'b', path: '/b', parentPath: '/p' }, { id: '/c', name: 'c', path: '/c' }], workspaceParents: [] },
    });
    expect((await s.api('/api/workspaces/parents', { method: 'POST', body: { parents: [{ id: '/p', name: 'p', path: '/p', extra: 1 }] } })).body.workspaceParents).toEqual([{ id: '/p', name: 'p', path: '/p' }]);
    expect(await s.api('/api/workspaces?path=/a', { method: 'DELETE' })).toEqual({ status: 200, body: { deleted: true } });
    expect(await s.api('/api/workspaces?path=/a', { method: 'DELETE' })).toEqual({ status: 404, body: { detail: 'Workspace not found' } });
    expect(await s.api('/api/workspaces/parents?path=/zz', { method: 'DELETE' })).toEqual({ status: 404, body: { detail: 'Workspace parent not found' } });

    s = await restart(s);
    expect((await s.api('/api/workspaces')).body).toEqual({ workspaces: [{ id: '/b', name: 'b', path: '/b', parentPath: '/p' }, { id: '/c', name: 'c', path: '/c' }], workspaceParents: [{ id: '/p', name: 'p', path: '/p' }] });
  });

  it('answers 422 with OpenHands\' locations', async () => {
    const s = await start();
    const bad = await s.api('/api/workspaces', { method: 'POST', body: { workspaces: [{ id: '', name: 'a' }] } });
    expect(bad.status).toBe(422);
    expect(bad.body.detail.map((i: { loc: unknown }) => JSON.stringify(i.loc)).sort()).toEqual([JSON.stringify(['body', 'workspaces', 0, 'id']), JSON.stringify(['body', 'workspaces', 0, 'path'])]);
    const noPath = await s.api('/api/workspaces', { method: 'DELETE' });
    expect(noPath.status).toBe(422);
    expect(noPath.body.detail[0]).toMatchObject({ loc: ['query', 'path'], type: 'missing' });
    expect((await s.api('/api/workspaces/parents', { method: 'POST', body: { parents: [{ id: 'x', name: 'n'.repeat(257), path: '/x' }] } })).body.detail[0].loc).toEqual(['body', 'parents', 0, 'name']);
  });
});

describe('/api/auth/workspace-session', () => {
  it('sets an HttpOnly SameSite=None cookie holding the key (Secure and Partitioned on loopback or HTTPS), scoped to /api/conversations; clears it', async () => {
    const s = await start();
    const post = await fetch(`${s.url}/api/auth/workspace-session`, { method: 'POST', headers: { 'x-session-api-key': TEST_KEY } });
    expect(post.status).toBe(204);
    expect(post.headers.get('set-cookie')).toBe(`oh_workspace_session_key=${TEST_KEY}; HttpOnly; Max-Age=315360000; Path=/api/conversations; SameSite=none; Secure; Partitioned`);
    const remote = await fetch(`${s.url}/api/auth/workspace-session`, { method: 'DELETE', headers: { 'x-session-api-key': TEST_KEY, 'x-forwarded-host': 'sandbox.example.com' } });
    expect(remote.status).toBe(204);
    expect(remote.headers.get('set-cookie')).toBe('oh_workspace_session_key=""; HttpOnly; Max-Age=0; Path=/api/conversations; SameSite=none');
    const tls = await fetch(`${s.url}/api/auth/workspace-session`, { method: 'POST', headers: { 'x-session-api-key': TEST_KEY, 'x-forwarded-host': 'sandbox.example.com', 'x-forwarded-proto': 'https' } });
    expect(tls.headers.get('set-cookie')).toContain('; Secure; Partitioned');
    // The session key check comes first: no cookie for a caller without the key.
    const refused = await fetch(`${s.url}/api/auth/workspace-session`, { method: 'POST', headers: { 'x-session-api-key': 'wrong' } });
    expect(refused.status).toBe(401);
    expect(refused.headers.get('set-cookie')).toBeNull();
  });

  it('the cookie stands in for the header on the workspace file routes only', async () => {
    const s = await start();
    const cookie = { cookie: `oh_workspace_session_key=${TEST_KEY}` };
    const id = '0b6d9c1e-2f4a-4c1b-9a51-1b7f4c9d2e10';
    // Past the key check (whatever the route then answers), where without it the answer is 401.
    expect((await fetch(`${s.url}/api/conversations/${id}/workspace/index.html`, { headers: cookie })).status).not.toBe(401);
    expect((await fetch(`${s.url}/api/conversations/${id}/workspace/index.html`)).status).toBe(401);
    expect((await fetch(`${s.url}/api/conversations/${id}`, { headers: cookie })).status).toBe(401);
    expect((await fetch(`${s.url}/api/settings/secrets`, { headers: cookie })).status).toBe(401);
  });
});

describe('/api/init', () => {
  it('answers 404 as OpenHands does when not deferred; POST wants X-Init-API-Key (the secret key) first', async () => {
    const s = await start('the-secret-key-0123456789');
    const notDeferred = { detail: 'server is not running with deferred_init=True; the /api/init endpoint is not available' };
    expect(await s.api('/api/init', { key: null })).toEqual({ status: 404, body: notDeferred });
    expect(await s.api('/api/init', { method: 'POST', key: null, body: {} })).toEqual({ status: 401, body: { detail: 'Unauthorized' } });
    const withKey = await fetch(`${s.url}/api/init`, { method: 'POST', headers: { 'x-init-api-key': 'the-secret-key-0123456789', 'content-type': 'application/json' }, body: '{}' });
    expect(withKey.status).toBe(404);
    expect(await withKey.json()).toEqual(notDeferred);
  });

  it('without a secret key, a session key opens POST (OpenHands falls back to the first one)', async () => {
    const s = await start();
    const r = await fetch(`${s.url}/api/init`, { method: 'POST', headers: { 'x-init-api-key': TEST_KEY } });
    expect(r.status).toBe(404);
    expect((await fetch(`${s.url}/api/init`, { method: 'POST', headers: { 'x-init-api-key': 'nope' } })).status).toBe(401);
  });
});

describe('/api/llm/provider-connections', () => {
  it('stores connections with a write-only key, changes the fields given, deletes; keeps them (key sealed) over a restart', async () => {
    let s = await start('a-secret-key-of-some-length');
    const created = await s.api('/api/llm/provider-connections', { method: 'POST', body: { display_name: 'Open', api_key: 'sk-conn-secret', base_url: 'http://models.local' } });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ display_name: 'Open', provider: 'custom', base_url: 'http://models.local', api_key_set: true });
    expect(created.body.id).toMatch(/^[0-9a-f]{32}$/);
    expect(created.body.created_at).toBe(created.body.updated_at);
    const id = created.body.id;
    const patched = await s.api(`/api/llm/provider-connections/${id}`, { method: 'PATCH', body: { base_url: null, provider: 'openai', api_key: 'sk-rotated' } });
    expect(patched.body).toMatchObject({ id, display_name: 'Open', provider: 'openai', base_url: null, api_key_set: true });
    const list = await s.api('/api/llm/provider-connections');
    expect(list.body).toEqual([patched.body]);
    expect(JSON.stringify(list.body)).not.toContain('sk-');
    const db = new Database(join(on.dir.path, 'data', 'agent-server.db'), { readonly: true });
    expect(JSON.stringify(db.prepare('SELECT * FROM provider_connections').all())).not.toContain('sk-rotated');
    db.close();

    s = await restart(s, 'a-secret-key-of-some-length');
    expect((await s.api('/api/llm/provider-connections')).body).toEqual([patched.body]);
    const deleted = await s.api(`/api/llm/provider-connections/${id}`, { method: 'DELETE' });
    expect(deleted).toEqual({ status: 200, body: { ...patched.body, api_key_set: false } });
    expect(await s.api(`/api/llm/provider-connections/${id}`, { method: 'DELETE' })).toEqual({ status: 404, body: { detail: `Provider connection '${id}' not found` } });
    expect((await s.api('/api/llm/provider-connections')).body).toEqual([]);
  });

  it('without a secret key the key lives in memory: after a restart the connection says api_key_set false', async () => {
    let s = await start();
    await s.api('/api/llm/provider-connections', { method: 'POST', body: { display_name: 'Mem', api_key: 'sk-memory-only' } });
    s = await restart(s);
    expect((await s.api('/api/llm/provider-connections')).body).toMatchObject([{ display_name: 'Mem', api_key_set: false }]);
  });

  it('refuses bad input at the field, an empty or clearing PATCH, and an unknown id', async () => {
    const s = await start('a-secret-key-of-some-length');
    const locs = async (method: string, path: string, body: unknown) => {
      const r = await s.api(path, { method, body });
      return [r.status, Array.isArray(r.body.detail) ? r.body.detail.map((i: { loc: unknown }) => JSON.stringify(i.loc)).sort() : r.body.detail];
    };
    const P = '/api/llm/provider-connections';
    expect(await locs('POST', P, {})).toEqual([422, ['["body","api_key"]', '["body","display_name"]']]);
    expect(await locs('POST', P, { display_name: '', api_key: 'k', extra: 1 })).toEqual([422, ['["body","display_name"]', '["body","extra"]']]);
    expect(await locs('POST', P, { display_name: 'x', api_key: '  ' })).toEqual([422, ['["body","api_key"]']]);
    expect(await locs('POST', P, { display_name: 'x', api_key: '**********' })).toEqual([422, ['["body","api_key"]']]);
    const id = (await s.api(P, { method: 'POST', body: { display_name: 'x', api_key: 'k' } })).body.id;
    expect(await locs('PATCH', `${P}/${id}`, {})).toEqual([422, ['["body"]']]);
    expect(await locs('PATCH', `${P}/${id}`, { display_name: null })).toEqual([422, ['["body"]']]);
    expect(await locs('PATCH', `${P}/${id}`, { api_key: null })).toEqual([422, ['["body","api_key"]']]);
    expect(await locs('PATCH', `${P}/nope`, { api_key: 'x' })).toEqual([404, "Provider connection 'nope' not found"]);
  });

  it('keeps at most 64', async () => {
    const s = await start();
    for (let i = 0; i < 64; i++) expect((await s.api('/api/llm/provider-connections', { method: 'POST', body: { display_name: `c${i}`, api_key: 'k' } })).status).toBe(201);
    expect(await s.api('/api/llm/provider-connections', { method: 'POST', body: { display_name: 'one more', api_key: 'k' } })).toEqual({ status: 409, body: { detail: 'Provider connection limit reached (64). Delete one before adding another.' } });
  });
});
