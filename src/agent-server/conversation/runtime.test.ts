import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { join } from 'node:path';
import { newEventBase } from '../../api/events/index.ts';
import { agentMessage, echoScript, eventually, FakeAgents, startRequest, startTestServer, tempDir, userText, type TestServer } from '../test-support.ts';

let dir: ReturnType<typeof tempDir>;
let s: TestServer;
let agents: FakeAgents;

beforeEach(async () => {
  dir = tempDir();
  agents = new FakeAgents();
  s = await startTestServer(dir.path, { agents, llmDefaults: { model: 'default/model', baseUrl: 'http://127.0.0.1:9/v1', apiKey: 'sk-default' } });
});
afterEach(async () => {
  await s.close();
  dir.remove();
});

async function create(extra: Record<string, unknown> = {}): Promise<string> {
  const res = await s.api('/api/conversations', { method: 'POST', body: startRequest(join(dir.path, 'w'), extra) });
  expect(res.status).toBe(201);
  return res.body.id;
}
const status = async (id: string) => (await s.api(`/api/conversations/${id}`)).body.execution_status as string;
const kinds = async (id: string) => (await s.api(`/api/conversations/${id}/events/search`)).body.items.map((e: any) => (e.kind === 'ConversationStateUpdateEvent' ? (e.key === 'last_user_message_id' ? 'last_user' : `status:${e.value}`) : e.kind));

describe('execution status', () => {
  it('runs the initial message at once, even with run: false (as OpenHands; the Python SDK sends that)', async () => {
    const id = await create({ initial_message: userText('hi') });
    await eventually(async () => (await status(id)) === 'finished');
    expect(await kinds(id)).toEqual(['MessageEvent', 'last_user', 'status:running', 'MessageEvent', 'status:finished']);
    const sdkStyle = await create({ initial_message: userText('hi', false) });
    await eventually(async () => (await status(sdkStyle)) === 'finished');
    expect(agents.runs).toBe(2);
  });

  it('POST /run on a finished conversation with nothing new runs nothing and records nothing', async () => {
    const id = await create({ initial_message: userText('hi') });
    await eventually(async () => (await status(id)) === 'finished');
    const before = await kinds(id);
    expect(await s.api(`/api/conversations/${id}/run`, { method: 'POST' })).toMatchObject({ status: 200 });
    expect(await status(id)).toBe('finished');
    expect(await kinds(id)).toEqual(before);
    expect(agents.runs).toBe(1);
    // A new message makes it idle again, and then a run goes.
    await s.api(`/api/conversations/${id}/events`, { method: 'POST', body: userText('again', true) });
    await eventually(async () => agents.runs === 2 && (await status(id)) === 'finished');
  });

  it('answers 409 to run while running, and queues exactly one rerun for messages sent meanwhile', async () => {
    const release = agents.hold();
    const id = await create();
    await s.api(`/api/conversations/${id}/events`, { method: 'POST', body: userText('one', true) });
    expect(await status(id)).toBe('running');
    const conflict = await s.api(`/api/conversations/${id}/run`, { method: 'POST' });
    expect(conflict).toEqual({ status: 409, body: { detail: 'Conversation already running. Wait for completion or pause first.' } });
    await s.api(`/api/conversations/${id}/events`, { method: 'POST', body: userText('two', true) });
    await s.api(`/api/conversations/${id}/events`, { method: 'POST', body: userText('three', true) });
    release();
    await eventually(async () => agents.runs === 2 && (await status(id)) === 'finished');
    const texts = (await s.api(`/api/conversations/${id}/events/search?kind=MessageEvent`)).body.items.map((e: any) => e.llm_message.content[0].text);
    expect(texts).toEqual(['one', 'two', 'three', 'echo: three', 'echo: three']);
    expect(agents.runs).toBe(2);
  });

  it('pauses a running agent: status paused, PauseEvent, and the aborted run cannot overwrite it', async () => {
    agents.script = async (host, signal) => {
      host.emit(agentMessage('working'));
      await new Promise((r) => signal.addEventListener('abort', r, { once: true }));
      host.setExecutionStatus('finished'); // too late: the user paused
    };
    const id = await create();
    await s.api(`/api/conversations/${id}/events`, { method: 'POST', body: userText('go', true) });
    await eventually(async () => (await kinds(id)).includes('MessageEvent') && (await kinds(id)).length >= 3);
    expect((await s.api(`/api/conversations/${id}/pause`, { method: 'POST' })).body).toEqual({ success: true });
    await eventually(async () => !s.agents.hosts[0] || (await status(id)) === 'paused');
    expect(await kinds(id)).toEqual(['MessageEvent', 'last_user', 'status:running', 'MessageEvent', 'status:paused', 'PauseEvent']);
    // A paused conversation runs again on request.
    agents.script = echoScript;
    await s.api(`/api/conversations/${id}/run`, { method: 'POST' });
    await eventually(async () => (await status(id)) === 'finished');
  });

  it('turns an agent crash into ConversationErrorEvent and error', async () => {
    agents.script = async () => {
      throw new TypeError('boom');
    };
    const id = await create({ initial_message: userText('x') });
    await eventually(async () => (await status(id)) === 'error');
    const err = (await s.api(`/api/conversations/${id}/events/search?kind=ConversationErrorEvent`)).body.items[0];
    expect(err).toMatchObject({ code: 'TypeError', detail: 'boom', source: 'environment' });
  });

  it('resets finished to idle on a new message, and a run ending without a status counts as finished', async () => {
    agents.script = async (host) => host.emit(agentMessage('done'));
    const id = await create({ initial_message: userText('x') });
    await eventually(async () => (await status(id)) === 'finished');
    await s.api(`/api/conversations/${id}/events`, { method: 'POST', body: userText('more') });
    expect(await status(id)).toBe('idle');
  });
});

describe('what the agent is given', () => {
  it('hands secrets and the request LLM to the agent and masks secret values in stored events', async () => {
    agents.script = async (host) => {
      host.emit(agentMessage(`token is ${host.secrets['GITHUB_TOKEN']}`));
      host.setExecutionStatus('finished');
    };
    const id = await create({ agent: { llm: { model: 'req/model', api_key: 'sk-req-key' } }, secrets: { GITHUB_TOKEN: { kind: 'StaticSecret', value: 'ghp_secret_value' } }, initial_message: userText('x') });
    await eventually(async () => (await status(id)) === 'finished');
    const host = agents.hosts[0]!;
    expect(host.secrets).toEqual({ GITHUB_TOKEN: 'ghp_secret_value' });
    // The request names a model without a base URL: the server default fills it in.
    expect(host.llm).toEqual({ model: 'req/model', baseUrl: 'http://127.0.0.1:9/v1', apiKey: 'sk-req-key' });
    expect(host.workspaceDir).toBe(join(dir.path, 'w'));
    const all = JSON.stringify((await s.api(`/api/conversations/${id}/events/search`)).body);
    expect(all).toContain('token is **********');
    expect(all).not.toContain('ghp_secret_value');
  });

  it('falls back to the server LLM defaults when the request names no model', async () => {
    await s.api('/api/conversations', { method: 'POST', body: { workspace: { working_dir: join(dir.path, 'w') }, agent: { llm: {} }, initial_message: userText('x') } });
    await eventually(() => agents.hosts.length === 1);
    expect(agents.hosts[0]!.llm).toEqual({ model: 'default/model', baseUrl: 'http://127.0.0.1:9/v1', apiKey: 'sk-default' });
  });

  it('gives the agent every persisted event, oldest first, including its own', async () => {
    let seen: string[] = [];
    agents.script = async (host) => {
      host.emit({ ...newEventBase('environment'), kind: 'ConversationStateUpdateEvent', key: 'note', value: 1 });
      seen = host.events().map((e) => (e.kind === 'ConversationStateUpdateEvent' ? `${e.key}:${String(e.value)}` : e.kind));
      host.setExecutionStatus('finished');
    };
    const id = await create({ initial_message: userText('x') });
    await eventually(async () => (await status(id)) === 'finished');
    expect(seen).toEqual(['MessageEvent', expect.stringMatching(/^last_user_message_id:[0-9a-f-]{36}$/), 'execution_status:running', 'note:1']);
  });
});
