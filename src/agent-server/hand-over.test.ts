// POST /api/agentyard/hand-over on the real agent server with the real agent and a scripted model
// provider over HTTP: a warm-pool agent server started with the pool's key and no model key passes
// to its user, after which only the new key opens it and its conversations call the model with the
// sandbox's new token.
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { join } from 'node:path';
import { createAgent } from '../agent/agent.ts';
import { startScriptedLlm, type ScriptedLlm } from '../testing/scripted-llm/server.ts';
import { eventually, startTestServer, TEST_KEY, tempDir, userText, type TestServer } from './test-support.ts';

const NEW_KEY = 'the-users-new-session-key-0123456789';
const TOKEN = 'aysb.sb-1.model-token-of-the-user';

let llm: ScriptedLlm;
let dir: ReturnType<typeof tempDir>;
let s: TestServer;

beforeAll(async () => (llm = await startScriptedLlm([], { apiKey: TOKEN })));
afterAll(() => llm.close());
beforeEach(async () => {
  dir = tempDir();
  // As a warm-pool member starts: the gateway as its model endpoint, but no model key yet.
  s = await startTestServer(dir.path, { createAgent, llmDefaults: { model: 'openai/scripted', baseUrl: llm.url } });
});
afterEach(async () => {
  await s.close();
  dir.remove();
});

const handOver = (key: string, body: Record<string, unknown> = { session_key: NEW_KEY, llm_api_key: TOKEN, secret_key: 'sealing-key-of-the-new-session' }) =>
  s.api('/api/agentyard/hand-over', { method: 'POST', key, body });

describe('the hand-over of a warm-pool agent server', () => {
  it('switches to the new session key at once: the pool key is refused from then on, a repeat with the new key changes nothing', async () => {
    expect((await handOver(TEST_KEY)).status).toBe(200);
    expect((await s.api('/api/conversations/search', { key: TEST_KEY })).status).toBe(401);
    expect((await s.api('/api/conversations/search', { key: NEW_KEY })).status).toBe(200);
    expect((await handOver(TEST_KEY)).status).toBe(401);
    expect((await handOver(NEW_KEY)).status).toBe(200);
  });

  it("starts the user's conversations with the model token it was handed", async () => {
    await handOver(TEST_KEY);
    const body = { workspace: { kind: 'LocalWorkspace', working_dir: join(dir.path, 'w') }, agent: { llm: { model: 'openai/scripted' } }, initial_message: userText('hello') };
    llm.push({ content: 'hi there' });
    const created = await s.api('/api/conversations', { method: 'POST', key: NEW_KEY, body });
    expect(created.status).toBe(201);
    await eventually(async () => (await s.api(`/api/conversations/${created.body.id}`, { key: NEW_KEY })).body.execution_status === 'finished', 15_000);
    // The provider stand-in refuses any other key (401), so a finished run means the token was used.
    expect(llm.requests.length).toBeGreaterThan(0);
  });

  it('refuses a hand-over once a conversation exists (422 for a malformed one)', async () => {
    const body = { workspace: { kind: 'LocalWorkspace', working_dir: join(dir.path, 'w') }, agent: { llm: { model: 'openai/scripted' } } };
    expect((await s.api('/api/conversations', { method: 'POST', body })).status).toBe(201);
    expect((await handOver(TEST_KEY)).status).toBe(409);
    const bad = await handOver(TEST_KEY, { session_key: 'short' });
    expect(bad.status).toBe(422);
    expect(bad.body.detail[0].loc).toEqual(['body', 'session_key']);
  });
});
