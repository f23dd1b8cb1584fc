// The agent server's stored settings (secrets, workspaces, provider connections, agent and conversation settings) survive a real restart of the process: `agentyard agent-server`
// as a child, killed with SIGKILL (no clean shutdown) after writing, started again on the same data
// dir with the same OH_SECRET_KEY. Its log, at debug level, never carries a secret value.
import { afterEach, describe, expect, it } from 'vitest';
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';
import { existsSync, readFileSync } from 'node:fs';
import { tempDir } from './test-support.ts';

const CLI = fileURLToPath(new URL('../cli/main.ts', import.meta.url));
const KEY = 'restart-session-key';
const SECRET_VALUE = 'ghp_restart_survivor_7f3a';
const CONNECTION_KEY = 'sk-connection-survivor-91c2';
const LLM_KEY = 'sk-settings-llm-survivor-5d0e';
const MCP_HEADER = 'Bearer mcp-survivor-77aa';
const CRITIC_KEY = 'sk-critic-survivor-3b1f';

let dir: ReturnType<typeof tempDir> | undefined;
const children: ChildProcess[] = [];
afterEach(() => {
  for (const c of children.splice(0)) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  dir?.remove();
});

/** Starts the server; resolves its URL and a getter of everything it wrote. */
async function launch(dataDir: string, keys: Record<string, string> = { OH_SECRET_KEY: 'restart-secret-key-0123456789' }): Promise<{ url: string; output: () => string; child: ChildProcess }> {
  const child = spawn(process.execPath, [CLI, 'agent-server', '--port', '0', '--workspace', join(dataDir, '..', 'ws'), '--data-dir', dataDir], {
    env: { PATH: process.env['PATH'] ?? '', HOME: dataDir, AGENTYARD_LOG_LEVEL: 'debug', OH_SESSION_API_KEYS_0: KEY, ...keys },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  let out = '';
  child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  const url = await new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout! }).on('line', (line) => {
      out += line + '\n';
      try {
        const parsed = JSON.parse(line) as { listening?: string };
        if (parsed.listening) resolve(parsed.listening);
      } catch {
        // not a JSON line
      }
    });
    child.once('exit', (code) => reject(new Error(`exited with ${code} before listening:\n${out}`)));
  });
  return { url, output: () => out, child };
}

async function call(url: string, path: string, method = 'GET', body?: unknown, headers: Record<string, string> = {}): Promise<{ status: number; text: string }> {
  const res = await fetch(url + path, { method, headers: { 'x-session-api-key': KEY, ...headers, ...(body ? { 'content-type': 'application/json' } : {}) }, ...(body ? { body: JSON.stringify(body) } : {}) });
  return { status: res.status, text: await res.text() };
}

describe('stored settings over a real process restart', () => {
  it('keeps secrets, provider connection keys and the stored settings (secrets sealed) and workspaces after SIGKILL and a new start with the same secret key; logs no value', async () => {
    dir = tempDir();
    const dataDir = join(dir.path, 'data');
    const first = await launch(dataDir);
    expect((await call(first.url, '/api/settings/secrets', 'PUT', { name: 'GITHUB_TOKEN', value: SECRET_VALUE, description: 'GitHub' })).status).toBe(200);
    expect((await call(first.url, '/api/workspaces', 'POST', { workspaces: [{ id: '/src/app', name: 'app', path: '/src/app' }] })).status).toBe(200);
    expect((await call(first.url, '/api/settings/secrets/GITHUB_TOKEN')).text).toBe(SECRET_VALUE);
    expect((await call(first.url, '/api/llm/provider-connections', 'POST', { display_name: 'Models', api_key: CONNECTION_KEY })).status).toBe(201);
    const settingsDiff = { agent_settings_diff: { llm: { model: 'openai/kept', api_key: LLM_KEY }, mcp_config: { web: { url: 'http://127.0.0.1:1/mcp', headers: { Authorization: MCP_HEADER } } }, verification: { critic_enabled: true, critic_api_key: CRITIC_KEY } }, conversation_settings_diff: { max_iterations: 42 } };
    expect((await call(first.url, '/api/settings', 'PATCH', settingsDiff)).status).toBe(200);
    const killed = new Promise((r) => first.child.once('exit', r));
    first.child.kill('SIGKILL');
    await killed;

    const second = await launch(dataDir);
    expect(JSON.parse((await call(second.url, '/api/settings/secrets')).text)).toEqual({ secrets: [{ name: 'GITHUB_TOKEN', description: 'GitHub' }] });
    expect(await call(second.url, '/api/settings/secrets/GITHUB_TOKEN')).toEqual({ status: 200, text: SECRET_VALUE });
    expect(JSON.parse((await call(second.url, '/api/workspaces')).text)).toEqual({ workspaces: [{ id: '/src/app', name: 'app', path: '/src/app' }], workspaceParents: [] });
    expect(JSON.parse((await call(second.url, '/api/llm/provider-connections')).text)).toMatchObject([{ display_name: 'Models', api_key_set: true }]);
    const settings = JSON.parse((await call(second.url, '/api/settings', 'GET', undefined, { 'X-Expose-Secrets': 'plaintext' })).text);
    expect(settings.agent_settings.llm).toMatchObject({ model: 'openai/kept', api_key: LLM_KEY });
    expect(settings.agent_settings.mcp_config.web.headers).toEqual({ Authorization: MCP_HEADER });
    expect(settings.agent_settings.verification).toMatchObject({ critic_enabled: true, critic_api_key: CRITIC_KEY });
    expect(settings.conversation_settings.max_iterations).toBe(42);
    expect((await call(second.url, '/api/settings/secrets/GITHUB_TOKEN', 'DELETE')).status).toBe(200);

    const exited = new Promise((r) => second.child.once('exit', r));
    second.child.kill('SIGTERM');
    await exited;
    const logs = first.output() + second.output();
    expect(logs).toContain('GITHUB_TOKEN'); // the names are logged (so the check below reads real log lines)
    expect(logs).not.toContain(SECRET_VALUE);
    expect(logs).not.toContain(CONNECTION_KEY);
    expect(logs).not.toContain(LLM_KEY);
    expect(logs).not.toContain(MCP_HEADER);
    expect(logs).not.toContain(CRITIC_KEY);
    // On disk only sealed: the database file (and its WAL) never holds the settings' secret values.
    for (const f of ['agent-server.db', 'agent-server.db-wal']) {
      const bytes = existsSync(join(dataDir, f)) ? readFileSync(join(dataDir, f)).toString('latin1') : '';
      expect(bytes).not.toContain(LLM_KEY);
      expect(bytes).not.toContain(MCP_HEADER);
      expect(bytes).not.toContain(CRITIC_KEY);
    }
  }, 60_000);

  it('rotates the secret key over restarts: OH_PREVIOUS_SECRET_KEYS opens and re-seals what the old key sealed (and opens its tokens); without it the values are missing, named in the log, refused to be overwritten, and come back with the key', async () => {
    dir = tempDir();
    const dataDir = join(dir.path, 'data');
    const stop = async (c: ChildProcess) => {
      const exited = new Promise((r) => c.once('exit', r));
      c.kill('SIGKILL');
      await exited;
    };
    const plainSettings = async (url: string) => JSON.parse((await call(url, '/api/settings', 'GET', undefined, { 'X-Expose-Secrets': 'plaintext' })).text).agent_settings;
    const stored = async (url: string) => ({
      secret: (await call(url, '/api/settings/secrets/GITHUB_TOKEN')).text,
      llmKey: (await plainSettings(url)).llm.api_key ?? null,
      header: (await plainSettings(url)).mcp_config.web?.headers?.Authorization ?? null,
    });
    const all = { secret: SECRET_VALUE, llmKey: LLM_KEY, header: MCP_HEADER };

    const a = await launch(dataDir, { OH_SECRET_KEY: 'key-a' });
    expect((await call(a.url, '/api/settings/secrets', 'PUT', { name: 'GITHUB_TOKEN', value: SECRET_VALUE, description: 'GitHub' })).status).toBe(200);
    expect((await call(a.url, '/api/settings', 'PATCH', { agent_settings_diff: { llm: { model: 'openai/kept', api_key: LLM_KEY }, mcp_config: { web: { url: 'http://127.0.0.1:1/mcp', headers: { Authorization: MCP_HEADER } } } } })).status).toBe(200);
    expect(await stored(a.url)).toEqual(all);
    // A token of key A, as a browser holds it from X-Expose-Secrets: encrypted.
    const tokenA = JSON.parse((await call(a.url, '/api/settings', 'GET', undefined, { 'X-Expose-Secrets': 'encrypted' })).text).agent_settings.llm.api_key as string;
    expect(tokenA).toMatch(/^gAAAAA/);
    await stop(a.child);

    // Rotated: B is the key, A only opens (as a JSON list, 1.58's form).
    const b = await launch(dataDir, { OH_SECRET_KEY: 'key-b', OH_PREVIOUS_SECRET_KEYS: '["key-a"]' });
    expect(await stored(b.url)).toEqual(all);
    expect(b.output()).toContain('sealed again with the current OH_SECRET_KEY');
    // The browser's token of key A still opens: sent back in a PATCH, it is stored as its value.
    expect((await call(b.url, '/api/settings', 'PATCH', { agent_settings_diff: { llm: { api_key: tokenA } } })).status).toBe(200);
    expect((await plainSettings(b.url)).llm.api_key).toBe(LLM_KEY);
    await stop(b.child);

    // A dropped: everything was sealed again with B at the last start.
    const b2 = await launch(dataDir, { OH_SECRET_KEY: 'key-b' });
    expect(await stored(b2.url)).toEqual(all);
    await stop(b2.child);

    // A wrong key (C, B forgotten): the values are missing, never the sealed text, and the log says what to do.
    const c = await launch(dataDir, { OH_SECRET_KEY: 'key-c' });
    const lost = await stored(c.url);
    expect(lost.llmKey).toBeNull();
    expect(lost.header).toBeNull();
    expect(lost.secret).not.toContain(SECRET_VALUE);
    expect(lost.secret).not.toContain('aes-256-gcm');
    expect(c.output()).toContain('OH_PREVIOUS_SECRET_KEYS');
    expect(c.output()).toMatch(/"store":"settings secrets","keys":\["GITHUB_TOKEN"\]/);
    // A settings PATCH would write over the sealed secrets with none: refused as 1.58 refuses (409).
    const refused = await call(c.url, '/api/settings', 'PATCH', { conversation_settings_diff: { max_iterations: 7 } });
    expect(refused.status).toBe(409);
    expect(refused.text).toContain('OH_PREVIOUS_SECRET_KEYS');
    await stop(c.child);

    // B given back as a previous key (the _0 form): nothing was lost.
    const c2 = await launch(dataDir, { OH_SECRET_KEY: 'key-c', OH_PREVIOUS_SECRET_KEYS_0: 'key-b' });
    expect(await stored(c2.url)).toEqual(all);
    await stop(c2.child);
    for (const out of [a, b, b2, c, c2].map((x) => x.output())) for (const v of Object.values(all)) expect(out).not.toContain(v);
  }, 120_000);

  it('refuses to start with an OH_PREVIOUS_SECRET_KEYS that is not a JSON list of strings', async () => {
    dir = tempDir();
    await expect(launch(join(dir.path, 'data'), { OH_SECRET_KEY: 'key-b', OH_PREVIOUS_SECRET_KEYS: 'key-a' })).rejects.toThrow(/OH_PREVIOUS_SECRET_KEYS must be a JSON list/);
  }, 60_000);
});
