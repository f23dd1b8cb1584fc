// The provider key never enters a sandbox (issue 18 item 2), through the real interface: `agentyard
// up` with a scripted provider that accepts only its own key, a conversation whose terminal command
// dumps everything it can see, and the gateway's answers to tokens of deleted sandboxes and forgeries.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CONVERSATION_HEADER, MODEL_GATEWAY_PATH, newModelToken } from '../../src/api/model-gateway.ts';
import { startScriptedLlm, type ScriptedLlm } from '../../src/testing/scripted-llm/server.ts';
import { createUser, finished, startReady, userMessage } from './flows.ts';
import { eventually, removeDataDir, startService, type RunningService } from './harness.ts';

const PROVIDER_KEY = 'sk-provider-e2e-4f1d2c3b5a6978';

// Every readable process environment, one `<pid> NAME=value` line per variable, and the command's own.
const DUMP = [
  `for f in /proc/[0-9]*/environ; do p=\${f#/proc/}; p=\${p%/environ}; { tr '\\0' '\\n' < "$f"; } 2>/dev/null | sed "s/^/$p /"; done > environ.txt`,
  'env > env.txt',
  'echo dumped',
].join('; ');

describe('model gateway in `agentyard up`', () => {
  let llm: ScriptedLlm;
  let svc: RunningService;
  let conversationId: string;
  let sandboxId: string;
  let environ: string;
  const gateway = () => `${svc.url}${MODEL_GATEWAY_PATH}`;
  const chat = (token: string) =>
    fetch(`${gateway()}/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify({ model: 'scripted', messages: [{ role: 'user', content: 'hi' }] }) });

  // A conversation's own model on the host's loopback: sandboxes with a network of their own reach it because it is listed.
  let own: ScriptedLlm;
  const OWN_KEY = 'sk-user-own-0123456789';

  beforeAll(async () => {
    llm = await startScriptedLlm([], { apiKey: PROVIDER_KEY });
    own = await startScriptedLlm([{ content: 'from my own model' }], { apiKey: OWN_KEY });
    svc = await startService({ env: { LLM_MODEL: 'openai/scripted', LLM_BASE_URL: llm.url, LLM_API_KEY: PROVIDER_KEY, AGENTYARD_SANDBOX_HOST_PORTS: new URL(own.url).port } });
    llm.push(
      { toolCalls: [{ name: 'terminal', arguments: { command: DUMP } }], usage: { prompt_tokens: 100, completion_tokens: 10 } },
      { toolCalls: [{ name: 'finish', arguments: { message: 'done' } }], usage: { prompt_tokens: 150, completion_tokens: 5, cost: 0.5 } },
    );
    const task = await startReady(svc, { initial_message: userMessage('dump what you can see') });
    ({ app_conversation_id: conversationId, sandbox_id: sandboxId } = task);
    await finished(svc, conversationId);
    environ = readFileSync(join(svc.dataDir, 'sandboxes', sandboxId, 'workspace', 'environ.txt'), 'utf8');
  }, 120_000);

  afterAll(async () => {
    await svc?.stop();
    await llm?.close();
    await own?.close();
    if (svc) removeDataDir(svc.dataDir);
  });

  it("the agent's model calls reach the provider with the provider's key, through the gateway", () => {
    expect(llm.failures).toEqual([]);
    expect(llm.requests).toHaveLength(2);
    for (const r of llm.requests) {
      expect(r.headers.authorization).toBe(`Bearer ${PROVIDER_KEY}`);
      // Which conversation a call is for is the gateway's business (usage below), not the provider's.
      expect(r.headers[CONVERSATION_HEADER]).toBeUndefined();
    }
  });

  it('no environment a sandbox command can read holds the provider key; the agent server holds its model token', () => {
    const env = readFileSync(join(svc.dataDir, 'sandboxes', sandboxId, 'workspace', 'env.txt'), 'utf8');
    expect(env).not.toContain(PROVIDER_KEY);
    expect(env).not.toMatch(/^LLM_API_KEY=/m);
    const lines = environ.split('\n');
    // The dump saw the agent server: its LLM_* name the gateway and its own token.
    expect(lines.some((l) => / LLM_BASE_URL=.*\/model-gateway\/v1$/.test(l))).toBe(true);
    expect(lines.some((l) => / LLM_API_KEY=aysb\./.test(l))).toBe(true);
    // `agentyard up` itself was started with the key. Isolated (bubblewrap, a PID namespace), a
    // sandbox sees no process of the service at all, so no line may hold it; unisolated, the
    // service's own process is visible (issue 18 item 1's to prevent), and no other may hold it.
    const isolated = svc.output.some((l) => l.includes('sandbox isolation: on'));
    const upPid = String(svc.process.pid);
    expect(lines.filter((l) => l.includes(PROVIDER_KEY) && (isolated || l.split(' ')[0] !== upPid))).toEqual([]);
  });

  it('usage is recorded per user and conversation as the provider reported it', async () => {
    const { body } = await svc.api<{ user_id: string; total: Record<string, number>; by_conversation: { conversation_id: string | null; calls: number }[] }>('GET', '/api/v1/usage');
    expect(body.user_id).toBe('admin');
    expect(body.total).toEqual({ calls: 2, prompt_tokens: 250, completion_tokens: 15, cache_read_tokens: 0, reasoning_tokens: 0, cost: 0.5 });
    expect(body.by_conversation).toEqual([expect.objectContaining({ conversation_id: conversationId, calls: 2 })]);
    // Another user has none of it and cannot see everyone's; the admin can.
    const bob = await createUser(svc, 'bob');
    expect((await svc.api<{ total: { calls: number } }>('GET', '/api/v1/usage', undefined, bob)).body.total.calls).toBe(0);
    expect((await svc.api('GET', '/api/v1/usage/users', undefined, bob)).status).toBe(403);
    const all = await svc.api<{ items: { user_id: string; calls: number }[] }>('GET', '/api/v1/usage/users');
    expect(all.body.items).toEqual([expect.objectContaining({ user_id: 'admin', calls: 2 })]);
  });

  it("a conversation's own model and key (agent.llm) go from the sandbox to that endpoint, never the sandbox's token; the gateway counts none of it", async () => {
    const [sandbox] = (await svc.api<{ session_api_key: string; exposed_urls: { url: string }[] }[]>('GET', `/api/v1/sandboxes?id=${sandboxId}`)).body;
    const res = await fetch(`${sandbox!.exposed_urls[0]!.url}/api/conversations`, {
      method: 'POST',
      headers: { 'x-session-api-key': sandbox!.session_api_key, 'content-type': 'application/json' },
      body: JSON.stringify({
        workspace: { kind: 'LocalWorkspace', working_dir: '.' },
        agent: { kind: 'Agent', llm: { model: 'openai/mine', base_url: own.url, api_key: OWN_KEY } },
        initial_message: { role: 'user', content: [{ type: 'text', text: 'hi' }], run: true },
      }),
    });
    expect(res.status, await res.clone().text()).toBeLessThan(300);
    await eventually(async () => (own.requests.length > 0 ? true : undefined), 'the call to the own model');
    expect(own.requests[0]!.headers.authorization).toBe(`Bearer ${OWN_KEY}`);
    expect(llm.requests).toHaveLength(2);
    expect((await svc.api<{ total: { calls: number } }>('GET', '/api/v1/usage')).body.total.calls).toBe(2);
  });

  it("a forged token is refused with 401; a deleted sandbox's token too", async () => {
    for (const forged of [newModelToken(sandboxId), PROVIDER_KEY, svc.apiKey, 'aysb.x.y']) expect((await chat(forged)).status).toBe(401);
    const token = /^\d+ LLM_API_KEY=(aysb\.\S+)$/m.exec(environ)![1]!;
    llm.push({ content: 'still here' });
    expect((await chat(token)).status).toBe(200);
    expect((await svc.api('DELETE', `/api/v1/sandboxes/${sandboxId}`)).status).toBe(200);
    await eventually(async () => ((await svc.api<unknown[]>('GET', `/api/v1/sandboxes?id=${sandboxId}`)).body[0] === null ? true : undefined), 'the sandbox to be gone');
    const refused = await chat(token);
    expect(refused.status).toBe(401);
    expect(((await refused.json()) as { error: { message: string } }).error.message).toBe('Invalid model token');
    expect(llm.requests).toHaveLength(3);
  });
});

