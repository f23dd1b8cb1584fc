// A deferred start (OH_DEFERRED_INIT, as OpenHands 1.58) of the real `agentyard agent-server`
// process: dormant, it answers its health routes and /api/init, and 503 everywhere else; POST
// /api/init gives it its session key, secret key, earlier keys and data directory, and it serves
// what an earlier server left there, sealed again with the new key (a later start with only that key
// opens it). A failed initialization leaves it dormant with the error said, and it can be retried.
import { afterEach, describe, expect, it } from 'vitest';
import { spawn, type ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';
import WebSocket from 'ws';
import { tempDir } from './test-support.ts';

const CLI = fileURLToPath(new URL('../cli/main.ts', import.meta.url));
const SECRET = 'ghp_deferred_survivor_52e1';
const LLM_KEY = 'sk-deferred-llm-survivor-19ab';
const DORMANT_KEY = 'dormant-secret-key-0123456789';

let dir: ReturnType<typeof tempDir> | undefined;
const children: ChildProcess[] = [];
afterEach(() => {
  for (const c of children.splice(0)) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  dir?.remove();
});

async function launch(env: Record<string, string>, dataDir = join(dir!.path, 'boot-data')): Promise<{ url: string; output: () => string; stop(): Promise<void> }> {
  const home = join(dir!.path, 'home');
  const child = spawn(process.execPath, [CLI, 'agent-server', '--port', '0', '--workspace', join(dir!.path, 'ws'), '--data-dir', dataDir], {
    env: { PATH: process.env['PATH'] ?? '', HOME: home, AGENTYARD_LOG_LEVEL: 'debug', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  let out = '';
  child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  const url = await new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout! }).on('line', (line) => {
      out += line + '\n';
      if (line.startsWith('{"listening"')) resolve((JSON.parse(line) as { listening: string }).listening);
    });
    child.once('exit', (code) => reject(new Error(`exited with ${code} before listening:\n${out}`)));
  });
  const stop = async () => {
    const exited = new Promise((r) => child.once('exit', r));
    child.kill('SIGTERM');
    await exited;
  };
  return { url, output: () => out, stop };
}

async function call(url: string, path: string, o: { method?: string; body?: unknown; headers?: Record<string, string> } = {}): Promise<{ status: number; body: any }> {
  const res = await fetch(url + path, { method: o.method ?? 'GET', headers: { ...o.headers, ...(o.body !== undefined ? { 'content-type': 'application/json' } : {}) }, ...(o.body !== undefined ? { body: JSON.stringify(o.body) } : {}) });
  const text = await res.text();
  try {
    return { status: res.status, body: JSON.parse(text) };
  } catch {
    return { status: res.status, body: text };
  }
}

/** The status a WebSocket upgrade is answered with (101 when it opens). */
function upgradeStatus(url: string, headers: Record<string, string>): Promise<number> {
  return new Promise((resolve) => {
    const ws = new WebSocket(url, { headers });
    ws.on('unexpected-response', (_req, res) => {
      resolve(res.statusCode ?? 0);
      ws.terminate();
    });
    ws.on('open', () => {
      resolve(101);
      ws.close();
    });
    ws.on('error', () => resolve(0));
  });
}

describe('a deferred start (OH_DEFERRED_INIT) initialized by POST /api/init', () => {
  it('is dormant until initialized, then serves the data it is pointed at with the keys it is given, sealed again with the new key', async () => {
    dir = tempDir();
    const userData = join(dir.path, 'user-data');
    // What an earlier server of this user left in the directory a warm pool later mounts, sealed with key A.
    const earlier = await launch({ OH_SESSION_API_KEYS_0: 'sess-a', OH_SECRET_KEY: 'key-a' }, userData);
    const a = { 'x-session-api-key': 'sess-a' };
    expect((await call(earlier.url, '/api/settings/secrets', { method: 'PUT', body: { name: 'ROTATED', value: SECRET }, headers: a })).status).toBe(200);
    expect((await call(earlier.url, '/api/settings', { method: 'PATCH', body: { agent_settings_diff: { llm: { model: 'openai/kept', api_key: LLM_KEY } } }, headers: a })).status).toBe(200);
    await earlier.stop();

    const s = await launch({ OH_DEFERRED_INIT: 'true', OH_SECRET_KEY: DORMANT_KEY });
    // Dormant: booted (ready for its configuration), the API closed, with or without a key.
    expect((await call(s.url, '/ready')).status).toBe(200);
    expect((await call(s.url, '/server_info')).body).toMatchObject({ version: expect.any(String) });
    expect(await call(s.url, '/api/init')).toEqual({ status: 200, body: { state: 'dormant', error: null } });
    const dormant = { status: 503, body: { detail: "server is in deferred-init state 'dormant'; call POST /api/init first" } };
    expect(await call(s.url, '/api/settings')).toEqual(dormant);
    expect(await call(s.url, '/api/conversations/search', { headers: { 'x-session-api-key': 'anything' } })).toEqual(dormant);
    expect((await call(s.url, '/v1/models')).status).toBe(503);
    expect(await upgradeStatus(`${s.url.replace('http', 'ws')}/sockets/events/0b6d9c1e-2f4a-4c1b-9a51-1b7f4c9d2e10`, {})).toBe(503);

    // POST: the dormant server's secret key first; then the body as 1.58 checks it, and what is not taken here.
    const init = (body: unknown, key = DORMANT_KEY) => call(s.url, '/api/init', { method: 'POST', body, headers: { 'x-init-api-key': key } });
    expect((await init({}, 'wrong')).status).toBe(401);
    const bad = await init({ bogus: 1, max_concurrent_runs: 0 });
    expect([bad.status, bad.body.detail.map((d: any) => d.loc.join('.')).sort()]).toEqual([422, ['body.bogus', 'body.max_concurrent_runs']]);
    expect((await init({ session_api_keys: [''] })).body.detail).toEqual([{ loc: ['body', 'session_api_keys'], msg: 'session_api_keys cannot contain empty keys', type: 'value_error' }]);
    expect((await init({ webhooks: [{ base_url: 'http://x' }] })).body.detail.map((d: any) => d.loc)).toEqual([['body', 'webhooks']]);
    // A data directory that cannot be opened: 500, dormant again with the error said; a retry may follow.
    writeFileSync(join(dir.path, 'not-a-dir'), '');
    expect((await init({ conversations_path: join(dir.path, 'not-a-dir', 'data') })).status).toBe(500);
    const failed = await call(s.url, '/api/init');
    expect(failed.body).toMatchObject({ state: 'dormant', error: expect.stringMatching(/.+/) });
    expect((await call(s.url, '/api/settings')).status).toBe(503);

    const done = await init({ session_api_keys: ['sess-b'], secret_key: 'key-b', previous_secret_keys: ['key-a'], conversations_path: userData });
    expect(done).toEqual({ status: 200, body: { state: 'ready', error: null } });
    expect(await call(s.url, '/api/init')).toEqual({ status: 200, body: { state: 'ready', error: null } });
    // Now the X-Init-API-Key is the new secret key, and a second initialization is refused.
    expect((await init({}, DORMANT_KEY)).status).toBe(401);
    expect(await init({}, 'key-b')).toEqual({ status: 400, body: { detail: 'server already in state: ready' } });
    const b = { 'x-session-api-key': 'sess-b' };
    expect((await call(s.url, '/api/settings/secrets/ROTATED')).status).toBe(401);
    expect(await call(s.url, '/api/settings/secrets/ROTATED', { headers: b })).toEqual({ status: 200, body: SECRET });
    expect((await call(s.url, '/api/settings', { headers: { ...b, 'x-expose-secrets': 'plaintext' } })).body.agent_settings.llm).toMatchObject({ model: 'openai/kept', api_key: LLM_KEY });
    expect(await upgradeStatus(`${s.url.replace('http', 'ws')}/sockets/events/0b6d9c1e-2f4a-4c1b-9a51-1b7f4c9d2e10`, b)).not.toBe(503);
    await s.stop();
    expect(s.output()).toContain('sealed again with the current OH_SECRET_KEY');

    // Sealed again at the initialization: a start with key B alone (no earlier key) opens it.
    const again = await launch({ OH_SESSION_API_KEYS_0: 'sess-b', OH_SECRET_KEY: 'key-b' }, userData);
    expect(await call(again.url, '/api/settings/secrets/ROTATED', { headers: b })).toEqual({ status: 200, body: SECRET });
    await again.stop();
    for (const out of [earlier.output(), s.output(), again.output()]) {
      expect(out).not.toContain(SECRET);
      expect(out).not.toContain(LLM_KEY);
      expect(out).not.toContain('key-b');
    }
  }, 90_000);

  it('refuses to start with an OH_DEFERRED_INIT that is not a boolean', async () => {
    dir = tempDir();
    await expect(launch({ OH_DEFERRED_INIT: 'later' })).rejects.toThrow(/OH_DEFERRED_INIT must be true or false/);
  });
});
