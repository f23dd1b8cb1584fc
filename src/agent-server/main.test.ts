// `agentyard agent-server` as a real child process: configuration from the environment, the
// {"listening": url} line, a conversation run by the real agent, clean exit on SIGTERM.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';
import { startScriptedLlm, type ScriptedLlm } from '../testing/scripted-llm/server.ts';
import { llmDefaultsFromEnv, modelRetriesFromEnv, previousSecretKeysFromEnv, secretKeyFromEnv, sessionKeysFromEnv } from './main.ts';
import { eventually, tempDir } from './test-support.ts';

const CLI = fileURLToPath(new URL('../cli/main.ts', import.meta.url));

let llm: ScriptedLlm;
let dir: ReturnType<typeof tempDir>;
let child: ChildProcess | undefined;
beforeAll(async () => (llm = await startScriptedLlm()));
afterAll(() => llm.close());
afterEach(() => {
  if (child && child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  child = undefined;
  dir?.remove();
});

function launch(env: Record<string, string>): { lines: string[]; url: Promise<string>; exit: Promise<number | null> } {
  dir = tempDir();
  child = spawn(process.execPath, [CLI, 'agent-server', '--port', '0', '--workspace', join(dir.path, 'ws'), '--data-dir', join(dir.path, 'data')], {
    env: { PATH: process.env['PATH'] ?? '', HOME: dir.path, AGENTYARD_LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines: string[] = [];
  const url = new Promise<string>((resolve, reject) => {
    createInterface({ input: child!.stdout! }).on('line', (line) => {
      lines.push(line);
      try {
        const parsed = JSON.parse(line) as { listening?: string };
        if (parsed.listening) resolve(parsed.listening);
      } catch {
        // not a JSON line
      }
    });
    child!.once('exit', (code) => reject(new Error(`exited with ${code} before listening: ${lines.join('\n')}`)));
  });
  const exit = new Promise<number | null>((resolve) => child!.once('exit', (code) => resolve(code)));
  return { lines, url, exit };
}

describe('runAgentServerCli', () => {
  it('reads keys and LLM defaults from the environment, runs the real agent, exits cleanly on SIGTERM', async () => {
    const p = launch({ OH_SESSION_API_KEYS_0: 'k0', OH_SESSION_API_KEYS_1: 'k1', LLM_MODEL: 'openai/scripted', LLM_BASE_URL: llm.url, LLM_API_KEY: 'sk-env' });
    const url = await p.url;
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect((await fetch(`${url}/health`)).status).toBe(200);
    expect((await fetch(`${url}/api/conversations/count`)).status).toBe(401);
    expect((await fetch(`${url}/api/conversations/count`, { headers: { 'x-session-api-key': 'k1' } })).status).toBe(200);

    llm.push({ content: 'Hello from the scripted model.' });
    const headers = { 'x-session-api-key': 'k0', 'content-type': 'application/json' };
    const body = { workspace: { working_dir: join(dir.path, 'ws') }, agent: { llm: {} }, initial_message: { role: 'user', content: [{ type: 'text', text: 'hi' }] } };
    const created = (await (await fetch(`${url}/api/conversations`, { method: 'POST', headers, body: JSON.stringify(body) })).json()) as { id: string };
    await eventually(async () => ((await (await fetch(`${url}/api/conversations/${created.id}`, { headers })).json()) as { execution_status: string }).execution_status === 'finished');
    expect(llm.requests.at(-1)?.headers['authorization']).toBe('Bearer sk-env');

    child!.kill('SIGTERM');
    expect(await p.exit).toBe(0);
    expect(p.lines.join('\n')).not.toContain('sk-env');
  });

  it('warns that authentication is off when no key is set', async () => {
    const p = launch({});
    await p.url;
    expect(p.lines.some((l) => l.includes('authentication is OFF'))).toBe(true);
    child!.kill('SIGINT');
    expect(await p.exit).toBe(0);
  });
});

describe('environment parsing', () => {
  it('collects OH_SESSION_API_KEYS_<n> until the first gap, skipping empty ones', () => {
    expect(sessionKeysFromEnv({ OH_SESSION_API_KEYS_0: 'a', OH_SESSION_API_KEYS_1: '', OH_SESSION_API_KEYS_2: 'c', OH_SESSION_API_KEYS_4: 'e' })).toEqual(['a', 'c']);
    expect(sessionKeysFromEnv({})).toEqual([]);
  });

  it('takes the secret key as OpenHands 1.58 does: OH_SECRET_KEY unless blank, else the first session key, else none', () => {
    expect(secretKeyFromEnv({ OH_SECRET_KEY: 'k', OH_SESSION_API_KEYS_0: 's' })).toEqual({ key: 'k', from: 'OH_SECRET_KEY' });
    expect(secretKeyFromEnv({ OH_SECRET_KEY: '  ', OH_SESSION_API_KEYS_0: 's' })).toEqual({ key: 's', from: 'OH_SESSION_API_KEYS_0' });
    expect(secretKeyFromEnv({ SESSION_API_KEY: 'v0', OH_SESSION_API_KEYS_0: 's' })).toEqual({ key: 'v0', from: 'SESSION_API_KEY' });
    expect(secretKeyFromEnv({ OH_SESSION_API_KEYS_0: '' })).toBeUndefined();
    expect(secretKeyFromEnv({})).toBeUndefined();
  });

  it('takes the previous secret keys as 1.58 does: OH_PREVIOUS_SECRET_KEYS as a JSON list, else _0, _1, ...; anything else stops the start', () => {
    expect(previousSecretKeysFromEnv({ OH_PREVIOUS_SECRET_KEYS: '["a", " ", "b"]', OH_PREVIOUS_SECRET_KEYS_0: 'ignored' })).toEqual(['a', 'b']);
    expect(previousSecretKeysFromEnv({ OH_PREVIOUS_SECRET_KEYS_0: 'a', OH_PREVIOUS_SECRET_KEYS_1: '', OH_PREVIOUS_SECRET_KEYS_2: 'c' })).toEqual(['a', 'c']);
    expect(previousSecretKeysFromEnv({})).toEqual([]);
    expect(() => previousSecretKeysFromEnv({ OH_PREVIOUS_SECRET_KEYS: 'old-key' })).toThrow(/JSON list of strings/);
    expect(() => previousSecretKeysFromEnv({ OH_PREVIOUS_SECRET_KEYS: '[1]' })).toThrow(/JSON list of strings/);
  });

  it('builds LLM defaults only when LLM_MODEL is set', () => {
    expect(llmDefaultsFromEnv({ LLM_BASE_URL: 'x' })).toBeUndefined();
    expect(llmDefaultsFromEnv({ LLM_MODEL: 'm', LLM_API_KEY: 'k' })).toEqual({ model: 'm', apiKey: 'k' });
  });

  it('reads LLM_NUM_RETRIES as attempts in all (retries after the first), refusing anything else', () => {
    expect(modelRetriesFromEnv({})).toBeUndefined();
    expect(modelRetriesFromEnv({ LLM_NUM_RETRIES: '10' })).toBe(9);
    expect(() => modelRetriesFromEnv({ LLM_NUM_RETRIES: '0' })).toThrow(/LLM_NUM_RETRIES must be an integer/);
    expect(() => modelRetriesFromEnv({ LLM_NUM_RETRIES: 'many' })).toThrow(/LLM_NUM_RETRIES must be an integer/);
  });
});
