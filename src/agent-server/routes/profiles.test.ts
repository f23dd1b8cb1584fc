// /api/profiles over HTTP: saved, listed, read, renamed, activated and deleted as OpenHands 1.58
// does; stored in the agent server's database (a restart keeps them, the key sealed, never in plain
// text on disk); the API key never in an answer, the log or the file; names, bodies and base URLs
// checked (422/400); the 50-profile limit (409).
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { REDACT_PATHS } from '../../util/log.ts';
import { startTestServer, tempDir, type TestServer } from '../test-support.ts';

const SECRET = 'sk-profile-secret-value-123';
let dir: ReturnType<typeof tempDir>;
let s: TestServer;
let logged = '';
const logger = () => pino({ level: 'debug', redact: { paths: REDACT_PATHS, censor: '**********' } }, new Writable({ write: (c, _e, cb) => ((logged += String(c)), cb()) }));
const start = (secretKey: string | undefined = 'profiles-test-key') => startTestServer(dir.path, { ...(secretKey ? { secretKey } : {}), log: logger() });

beforeEach(async () => {
  dir = tempDir();
  logged = '';
  s = await start();
});
afterEach(async () => {
  await s.close();
  dir.remove();
});

const save = (name: string, llm: Record<string, unknown>, extra: Record<string, unknown> = {}) => s.api(`/api/profiles/${name}`, { method: 'POST', body: { llm, ...extra } });

describe('/api/profiles', () => {
  it('saves, lists, reads, renames, activates and deletes; the key is stored sealed and never shown; all of it survives a restart', async () => {
    expect(await s.api('/api/profiles')).toEqual({ status: 200, body: { profiles: [], active_profile: null } });
    expect(await save('fast', { model: 'openai/fast', base_url: 'http://127.0.0.1:9/v1', api_key: SECRET, temperature: 0.2 })).toEqual({ status: 201, body: { name: 'fast', message: "Profile 'fast' saved" } });
    expect((await save('plain', { model: 'anthropic/claude', api_key: SECRET }, { include_secrets: false })).status).toBe(201);

    const list = await s.api('/api/profiles');
    expect(list.body).toEqual({
      profiles: [
        { name: 'fast', model: 'openai/fast', base_url: 'http://127.0.0.1:9/v1', provider_connection_id: null, provider_connection_broken: false, api_key_set: true },
        { name: 'plain', model: 'anthropic/claude', base_url: null, provider_connection_id: null, provider_connection_broken: false, api_key_set: false },
      ],
      active_profile: null,
    });
    const detail = await s.api('/api/profiles/fast');
    expect(detail.status).toBe(200);
    expect(detail.body).toMatchObject({ name: 'fast', api_key_set: true, config: { model: 'openai/fast', base_url: 'http://127.0.0.1:9/v1', api_key: null, temperature: 0.2 } });
    // `foo.json` addresses profile `foo`, as in OpenHands.
    expect((await s.api('/api/profiles/fast.json')).body.config.model).toBe('openai/fast');

    expect(await s.api('/api/profiles/fast/activate', { method: 'POST' })).toEqual({ status: 200, body: { name: 'fast', message: "Profile 'fast' activated and applied to current settings", llm_applied: true } });
    // Its LLM is now the stored settings' LLM (what the SDK's get_llm() reads), the key masked.
    expect((await s.api('/api/settings')).body.agent_settings.llm).toMatchObject({ model: 'openai/fast', base_url: 'http://127.0.0.1:9/v1', api_key: '**********' });
    expect(await s.api('/api/profiles/fast/rename', { method: 'POST', body: { new_name: 'quick' } })).toEqual({ status: 200, body: { name: 'quick', message: "Profile 'fast' renamed to 'quick'" } });
    expect((await s.api('/api/profiles')).body.active_profile).toBe('quick');
    expect((await s.api('/api/profiles/quick/rename', { method: 'POST', body: { new_name: 'quick' } })).body.message).toBe("Profile 'quick' unchanged (same name)");

    // Restart: the profiles, the active one and the (sealed) key are still there.
    await s.close();
    s = await start();
    expect((await s.api('/api/profiles')).body).toMatchObject({ active_profile: 'quick', profiles: [{ name: 'plain' }, { name: 'quick', api_key_set: true }] });

    expect(await s.api('/api/profiles/quick', { method: 'DELETE' })).toEqual({ status: 200, body: { name: 'quick', message: "Profile 'quick' deleted" } });
    expect((await s.api('/api/profiles/quick', { method: 'DELETE' })).status).toBe(200); // idempotent
    expect((await s.api('/api/profiles')).body).toEqual({ profiles: [expect.objectContaining({ name: 'plain' })], active_profile: null });

    // The key was in no answer above, in no log line, and in no file of the data dir in plain text.
    expect(logged).toContain('saved LLM profile');
    expect(logged).not.toContain(SECRET);
    for (const f of readdirSync(join(dir.path, 'data'))) expect(readFileSync(join(dir.path, 'data', f)).includes(SECRET), f).toBe(false);
  });

  it('answers 404 for a missing profile, 409 for a taken rename target and past 50 profiles', async () => {
    expect(await s.api('/api/profiles/nope')).toEqual({ status: 404, body: { detail: "Profile 'nope' not found" } });
    expect((await s.api('/api/profiles/nope/activate', { method: 'POST' })).status).toBe(404);
    expect((await s.api('/api/profiles/nope/rename', { method: 'POST', body: { new_name: 'x' } })).status).toBe(404);
    for (let i = 0; i < 50; i++) expect((await save(`p${i}`, { model: 'openai/m' })).status).toBe(201);
    expect((await s.api('/api/profiles/p0/rename', { method: 'POST', body: { new_name: 'p1' } }))).toEqual({ status: 409, body: { detail: "Profile 'p1' already exists" } });
    const over = await save('p50', { model: 'openai/m' });
    expect(over).toEqual({ status: 409, body: { detail: 'Profile limit reached (50). Delete a profile before saving a new one.' } });
    expect((await save('p0', { model: 'openai/overwritten' })).status).toBe(201); // overwriting is not a new one
    expect((await s.api('/api/profiles/p0')).body.config.model).toBe('openai/overwritten');
  });

  it('checks names, bodies, base URLs and X-Expose-Secrets', async () => {
    const badName = await s.api('/api/profiles/-bad', { method: 'POST', body: { llm: { model: 'x' } } });
    expect(badName.status).toBe(422);
    expect(badName.body.detail[0].loc).toEqual(['path', 'name']);
    const noLlm = await s.api('/api/profiles/ok', { method: 'POST', body: {} });
    expect(noLlm.status).toBe(422);
    expect(noLlm.body.detail[0]).toMatchObject({ loc: ['body', 'llm'], type: 'missing' });
    expect((await s.api('/api/profiles/ok/rename', { method: 'POST', body: { new_name: 'a b' } })).body.detail[0].loc).toEqual(['body', 'new_name']);
    for (const base_url of ['file:///etc/passwd', 'not a url', 'gopher://x']) {
      const r = await save('ok', { model: 'openai/x', base_url });
      expect(r.status, base_url).toBe(422);
      expect(r.body.detail[0].loc).toEqual(['body', 'llm', 'base_url']);
    }
    expect((await s.api('/api/profiles/ok')).status).toBe(404);

    await save('ok', { model: 'openai/x', api_key: SECRET });
    const invalid = await fetch(`${s.url}/api/profiles/ok`, { headers: { 'x-session-api-key': 'test-session-key', 'x-expose-secrets': 'yes-please' } });
    expect(invalid.status).toBe(400);
    for (const mode of ['plaintext', 'encrypted']) {
      const r = await fetch(`${s.url}/api/profiles/ok`, { headers: { 'x-session-api-key': 'test-session-key', 'x-expose-secrets': mode } });
      expect(r.status, mode).toBe(403);
      expect(await r.text()).not.toContain(SECRET);
    }
  });

  it('without OH_SECRET_KEY holds the key in memory only, as every secret store does: usable now, never on disk; after a restart not set, and a use asks for it again (409)', async () => {
    await s.close();
    s = await start(null as never);
    expect(await save('k', { model: 'openai/x', api_key: SECRET })).toMatchObject({ status: 201 });
    expect((await s.api('/api/profiles/k')).body).toMatchObject({ api_key_set: true, config: { api_key: null } });
    expect((await s.api('/api/profiles/k/activate', { method: 'POST' })).status).toBe(200);
    // Renamed: the held key goes with it.
    expect((await s.api('/api/profiles/k/rename', { method: 'POST', body: { new_name: 'kept' } })).status).toBe(200);
    expect((await s.api('/api/profiles/kept')).body.api_key_set).toBe(true);
    for (const f of readdirSync(join(dir.path, 'data'))) expect(readFileSync(join(dir.path, 'data', f)).includes(SECRET), f).toBe(false);

    await s.close();
    s = await start(null as never);
    expect((await s.api('/api/profiles/kept')).body).toMatchObject({ name: 'kept', api_key_set: false, config: { model: 'openai/x', api_key: null } });
    const r = await s.api('/api/profiles/kept/activate', { method: 'POST' });
    expect(r.status).toBe(409);
    expect(r.body.detail).toMatch(/held in memory only .*save the profile again/);
    // Saved again: usable again.
    expect((await save('kept', { model: 'openai/x', api_key: SECRET })).status).toBe(201);
    expect((await s.api('/api/profiles/kept/activate', { method: 'POST' })).status).toBe(200);
    expect(logged).not.toContain(SECRET);
  });

  it('a hand-over gives a server that had no secret key one: the keys it held in memory are sealed and stored', async () => {
    await s.close();
    s = await start(null as never);
    await save('held', { model: 'openai/x', api_key: SECRET });
    expect((await s.api('/api/agentyard/hand-over', { method: 'POST', body: { session_key: 'a-new-session-key-0123456789', secret_key: 'a-new-secret-key-0123456789' } })).status).toBe(200);
    await s.close();
    s = await start('a-new-secret-key-0123456789');
    expect((await s.api('/api/profiles/held')).body.api_key_set).toBe(true);
    expect((await s.api('/api/profiles/held/activate', { method: 'POST' })).status).toBe(200);
  });

  it("a warm-pool hand-over seals the stored keys again with the new secret key", async () => {
    await save('pooled', { model: 'openai/x', api_key: SECRET });
    const handOver = await s.api('/api/agentyard/hand-over', { method: 'POST', body: { session_key: 'a-new-session-key-0123456789', secret_key: 'a-new-secret-key-0123456789' } });
    expect(handOver.status).toBe(200);
    await s.close();
    s = await start('a-new-secret-key-0123456789');
    // Opened with the new key (a key that cannot be opened is a 409 at activation).
    expect((await s.api('/api/profiles/pooled/activate', { method: 'POST' })).status).toBe(200);
  });

  it('a key sealed with another secret key is reported at use (409), not sent to the model empty', async () => {
    await save('sealed', { model: 'openai/x', api_key: SECRET });
    await s.close();
    s = await start('a-different-key');
    expect((await s.api('/api/profiles/sealed')).body.api_key_set).toBe(true);
    const r = await s.api('/api/profiles/sealed/activate', { method: 'POST' });
    expect(r.status).toBe(409);
    expect(r.body.detail).toMatch(/cannot be opened/);
  });
});
