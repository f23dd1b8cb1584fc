// Managed LLM key refresh through the real CLI over real HTTP: the scripted model refuses the stale
// key with 401, a local control plane serves the current one; the conversation finishes with it, the
// refresh call carries the configured (expanded) headers, an LLM outside the allow-list is never
// refreshed, malformed headers stop the start, and no key or header value reaches logs or events.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';
import { startScriptedLlm, type ScriptedLlm } from '../testing/scripted-llm/server.ts';
import { eventually, tempDir } from './test-support.ts';

const CLI = fileURLToPath(new URL('../cli/main.ts', import.meta.url));
const OLD = 'sk-stale-managed-key';
const NEW = 'sk-current-managed-key';
const CRED = 'refresh-credential-4711';

let llm: ScriptedLlm;
let control: Server;
let controlUrl: string;
const refreshCalls: IncomingHttpHeaders[] = [];
/** What the control plane answers as the current key. */
let served = NEW;
let dir: ReturnType<typeof tempDir>;
let child: ChildProcess | undefined;

beforeAll(async () => {
  llm = await startScriptedLlm([], { apiKey: NEW });
  control = createServer((req, res) => {
    refreshCalls.push(req.headers);
    res.end(`${served}\n`);
  });
  await new Promise<void>((r) => control.listen(0, '127.0.0.1', r));
  controlUrl = `http://127.0.0.1:${(control.address() as AddressInfo).port}/api/keys/current`;
});
afterAll(async () => {
  await llm.close();
  await new Promise((r) => control.close(r));
});
afterEach(() => {
  if (child && child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  child = undefined;
  refreshCalls.length = 0;
  served = NEW;
  llm.requests.length = 0;
  llm.refusedAuthorizations.length = 0;
  dir?.remove();
});

function launch(env: Record<string, string>) {
  dir = tempDir();
  child = spawn(process.execPath, [CLI, 'agent-server', '--port', '0', '--workspace', join(dir.path, 'ws'), '--data-dir', join(dir.path, 'data')], {
    env: { PATH: process.env['PATH'] ?? '', HOME: dir.path, AGENTYARD_LOG_LEVEL: 'debug', OH_SESSION_API_KEYS_0: 'k0', LLM_MODEL: 'openai/scripted', LLM_API_KEY: OLD, LLM_NUM_RETRIES: '1', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const output: string[] = [];
  child.stderr!.on('data', (d: Buffer) => output.push(d.toString()));
  const url = new Promise<string>((resolve, reject) => {
    createInterface({ input: child!.stdout! }).on('line', (line) => {
      output.push(line);
      if (line.startsWith('{"listening"')) resolve((JSON.parse(line) as { listening: string }).listening);
    });
    child!.once('exit', (code) => reject(new Error(`exited with ${code} before listening: ${output.join('\n')}`)));
  });
  const exit = new Promise<number | null>((resolve) => child!.once('exit', (code) => resolve(code)));
  return { output, url, exit };
}

const headers = { 'x-session-api-key': 'k0', 'content-type': 'application/json' };
async function converse(url: string, text: string, id?: string, agentLlm: Record<string, string> = {}): Promise<{ id: string; status: string; events: string }> {
  const message = { role: 'user', content: [{ type: 'text', text }] };
  if (!id) {
    const body = { workspace: { working_dir: join(dir.path, 'ws') }, agent: { llm: agentLlm }, initial_message: message };
    id = ((await (await fetch(`${url}/api/conversations`, { method: 'POST', headers, body: JSON.stringify(body) })).json()) as { id: string }).id;
  } else {
    await fetch(`${url}/api/conversations/${id}/events`, { method: 'POST', headers, body: JSON.stringify({ ...message, run: true }) });
  }
  let status = '';
  await eventually(async () => ['finished', 'error'].includes((status = ((await (await fetch(`${url}/api/conversations/${id}`, { headers })).json()) as { execution_status: string }).execution_status)));
  // What a client reads back: the events and the conversation (its agent settings included).
  const events = (await (await fetch(`${url}/api/conversations/${id}/events/search?limit=100`, { headers })).text()) + (await (await fetch(`${url}/api/conversations/${id}`, { headers })).text());
  return { id, status, events };
}

const bearer = () => llm.requests.map((r) => r.headers['authorization']);

describe('managed LLM key refresh', () => {
  it('fetches the current key with the configured headers on a 401, retries once and keeps it', async () => {
    const p = launch({
      LLM_BASE_URL: llm.url,
      OH_LLM_API_KEY_REFRESH_URL: controlUrl,
      OH_LLM_API_KEY_REFRESH_BASE_URLS: `http://managed.test/v1, ${llm.url}/`,
      OH_LLM_API_KEY_REFRESH_HEADERS: JSON.stringify({ 'X-Session-API-Key': '${OH_SESSION_API_KEYS_0}', 'X-Refresh-Credential': CRED }),
    });
    const url = await p.url;
    llm.push({ content: 'first answer' });
    const first = await converse(url, 'hi');
    expect(first.status).toBe('finished');
    expect(first.events).toContain('first answer');
    expect(llm.refusedAuthorizations).toEqual([`Bearer ${OLD}`]);
    expect(bearer()).toEqual([`Bearer ${NEW}`]);
    expect(refreshCalls).toHaveLength(1);
    expect(refreshCalls[0]!['x-session-api-key']).toBe('k0');
    expect(refreshCalls[0]!['x-refresh-credential']).toBe(CRED);

    // The refreshed key stays in use: the next call is not refused first.
    llm.push({ content: 'second answer' });
    const second = await converse(url, 'again', first.id);
    expect(second.status).toBe('finished');
    expect(bearer().at(-1)).toBe(`Bearer ${NEW}`);
    expect(bearer()).toHaveLength(2);
    expect(llm.refusedAuthorizations).toHaveLength(1);
    expect(refreshCalls).toHaveLength(1);

    child!.kill('SIGTERM');
    expect(await p.exit).toBe(0);
    for (const secret of [OLD, NEW, CRED]) {
      expect(p.output.join('\n')).not.toContain(secret);
      expect(second.events).not.toContain(secret);
    }
  });

  it('never refreshes an LLM whose base URL is not on the allow-list: the 401 stands', async () => {
    const p = launch({
      LLM_BASE_URL: llm.url,
      OH_LLM_API_KEY_REFRESH_URL: controlUrl,
      OH_LLM_API_KEY_REFRESH_BASE_URLS: 'http://managed.test/v1',
    });
    const url = await p.url;
    const r = await converse(url, 'hi');
    expect(r.status).toBe('error');
    expect(r.events).toContain('LLMAuthenticationError');
    expect(llm.refusedAuthorizations).toEqual([`Bearer ${OLD}`]);
    expect(refreshCalls).toHaveLength(0);
  });

  it('refreshes the key a start request carries when its base_url is on the allow-list', async () => {
    const p = launch({ LLM_MODEL: '', LLM_API_KEY: '', OH_LLM_API_KEY_REFRESH_URL: controlUrl, OH_LLM_API_KEY_REFRESH_BASE_URLS: llm.url });
    llm.push({ content: 'answer via the request settings' });
    const r = await converse(await p.url, 'hi', undefined, { model: 'litellm_proxy/scripted', base_url: `${llm.url}/`, api_key: OLD });
    expect(r.status).toBe('finished');
    expect(llm.refusedAuthorizations).toEqual([`Bearer ${OLD}`]);
    expect(bearer()).toEqual([`Bearer ${NEW}`]);
    expect(refreshCalls).toHaveLength(1);
    expect(r.events).not.toContain(NEW);
  });

  it('refreshes once per refusal: a fetched key that is refused too leaves the authentication error', async () => {
    served = 'sk-also-wrong';
    const p = launch({ LLM_BASE_URL: llm.url, OH_LLM_API_KEY_REFRESH_URL: controlUrl, OH_LLM_API_KEY_REFRESH_BASE_URLS: llm.url });
    const r = await converse(await p.url, 'hi');
    expect(r.status).toBe('error');
    expect(r.events).toContain('LLMAuthenticationError');
    expect(llm.refusedAuthorizations).toEqual([`Bearer ${OLD}`, 'Bearer sk-also-wrong']);
    expect(refreshCalls).toHaveLength(1);
    expect(r.events).not.toContain('sk-also-wrong');
  });

  it('stops the start with a clear message when the headers are not a JSON object', async () => {
    const p = launch({ LLM_BASE_URL: llm.url, OH_LLM_API_KEY_REFRESH_URL: controlUrl, OH_LLM_API_KEY_REFRESH_BASE_URLS: llm.url, OH_LLM_API_KEY_REFRESH_HEADERS: `{"X-Refresh-Credential": ${CRED}` });
    await expect(p.url).rejects.toThrow(/OH_LLM_API_KEY_REFRESH_HEADERS is not valid JSON/);
    expect(await p.exit).toBe(1);
    expect(p.output.join('\n')).not.toContain(CRED);
  });
});
