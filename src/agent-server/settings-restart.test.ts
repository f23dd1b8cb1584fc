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

let dir: ReturnType<typeof tempDir> | undefined;
const children: ChildProcess[] = [];
afterEach(() => {
  for (const c of children.splice(0)) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  dir?.remove();
});

/** Starts the server; resolves its URL and a getter of everything it wrote. */
async function launch(dataDir: string): Promise<{ url: string; output: () => string; child: ChildProcess }> {
  const child = spawn(process.execPath, [CLI, 'agent-server', '--port', '0', '--workspace', join(dataDir, '..', 'ws'), '--data-dir', dataDir], {
    env: { PATH: process.env['PATH'] ?? '', HOME: dataDir, AGENTYARD_LOG_LEVEL: 'debug', OH_SESSION_API_KEYS_0: KEY, OH_SECRET_KEY: 'restart-secret-key-0123456789' },
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
    const settingsDiff = { agent_settings_diff: { llm: { model: 'openai/kept', api_key: LLM_KEY }, mcp_config: { web: { url: 'http://127.0.0.1:1/mcp', headers: { Authorization: MCP_HEADER } } } }, conversation_settings_diff: { max_iterations: 42 } };
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
    // On disk only sealed: the database file (and its WAL) never holds the settings' secret values.
    for (const f of ['agent-server.db', 'agent-server.db-wal']) {
      const bytes = existsSync(join(dataDir, f)) ? readFileSync(join(dataDir, f)).toString('latin1') : '';
      expect(bytes).not.toContain(LLM_KEY);
      expect(bytes).not.toContain(MCP_HEADER);
    }
  }, 60_000);
});
