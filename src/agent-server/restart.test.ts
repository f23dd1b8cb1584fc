// Restart on the same data dir: events survive, a conversation left running by a crash becomes
// error with an explanation (and its dangling tool calls are answered), one stopped by a clean
// shutdown is paused and resumable, sequence numbers continue, secrets come back only when a secret
// key is configured.
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { join } from 'node:path';
import { readdirSync, readFileSync } from 'node:fs';
import { newEventBase, type Event } from '../api/events/index.ts';
import { eventually, FakeAgents, FrameCollector, startRequest, TEST_KEY, userText, useServersOnOneDir, type TestServer } from './test-support.ts';

const on = useServersOnOneDir();
const start = (agents = new FakeAgents(), secretKey?: string): Promise<TestServer> => on.start({ agents, tuning: { runGraceMs: 50 }, ...(secretKey ? { secretKey } : {}) });

function action(toolCallId: string): Event {
  return {
    ...newEventBase('agent'),
    thought: [{ type: 'text', text: 'run it' }],
    action: { kind: 'TerminalAction', command: 'sleep 100' },
    tool_name: 'terminal',
    tool_call_id: toolCallId,
    tool_call: { id: toolCallId, name: 'terminal', arguments: '{"command":"sleep 100"}', origin: 'completion' },
    llm_response_id: 'r1',
    kind: 'ActionEvent',
  } as Event;
}

describe('restart recovery', () => {
  it('keeps events, moves running to error with an explanation, and continues sequence numbers', async () => {
    // Deaf to the abort: the close gives up on it, as if the process had been killed mid-run.
    const stuck = new FakeAgents(async (host) => {
      host.emit(action('call-1'));
      await new Promise(() => undefined);
    });
    const first = await start(stuck);
    const id = (await first.api('/api/conversations', { method: 'POST', body: startRequest(join(on.dir.path, 'w'), { initial_message: userText('long job') }) })).body.id;
    await eventually(async () => (await first.api(`/api/conversations/${id}/events/count?kind=ActionEvent`)).body === 1);
    const before = (await first.api(`/api/conversations/${id}/events/search`)).body.items.map((e: any) => e.id);
    // Simulate a crash: the run never stopped, so the row still says running.
    await on.stop(first);

    const second = await start();
    const info = (await second.api(`/api/conversations/${id}`)).body;
    expect(info.execution_status).toBe('error');
    const items = (await second.api(`/api/conversations/${id}/events/search`)).body.items;
    expect(items.slice(0, before.length).map((e: any) => e.id)).toEqual(before);
    const added = items.slice(before.length);
    expect(added.map((e: any) => e.kind)).toEqual(['AgentErrorEvent', 'ConversationErrorEvent', 'ConversationStateUpdateEvent']);
    expect(added[0]).toMatchObject({ tool_call_id: 'call-1', tool_name: 'terminal' });
    expect(added[1]).toMatchObject({ code: 'AgentServerRestarted' });
    expect(added[2]).toMatchObject({ key: 'execution_status', value: 'error' });

    // Resume on a socket by sequence number across the restart: no gap, no duplicate.
    const ws = new FrameCollector(`${second.url.replace('http', 'ws')}/sockets/events/${id}?after_seq=${before.length}`, { 'x-session-api-key': TEST_KEY });
    await ws.until(4);
    expect(ws.frames.slice(1).map((f) => f.id)).toEqual(added.map((e: any) => e.id));
    await ws.close();

    // The conversation works again: a new message runs it.
    await second.api(`/api/conversations/${id}/events`, { method: 'POST', body: userText('again', true) });
    await eventually(async () => (await second.api(`/api/conversations/${id}`)).body.execution_status === 'finished');
  });

  it('a clean shutdown (sandbox paused) leaves a running conversation paused, its tool call answered, and resumable', async () => {
    const stoppable = new FakeAgents(async (host, signal) => {
      host.emit(action('call-2'));
      await new Promise((r) => signal.addEventListener('abort', r, { once: true }));
    });
    const first = await start(stoppable);
    const id = (await first.api('/api/conversations', { method: 'POST', body: startRequest(join(on.dir.path, 'w'), { initial_message: userText('long job') }) })).body.id;
    await eventually(async () => (await first.api(`/api/conversations/${id}/events/count?kind=ActionEvent`)).body === 1);
    const before = (await first.api(`/api/conversations/${id}/events/search`)).body.items.length;
    await on.stop(first);

    const second = await start();
    expect((await second.api(`/api/conversations/${id}`)).body.execution_status).toBe('paused');
    const added = (await second.api(`/api/conversations/${id}/events/search`)).body.items.slice(before);
    expect(added.map((e: any) => e.kind)).toEqual(['AgentErrorEvent', 'PauseEvent', 'ConversationStateUpdateEvent']);
    expect(added[0]).toMatchObject({ tool_call_id: 'call-2', error: expect.stringMatching(/stopped .* while this tool was in progress/) });
    expect(added[1]).toMatchObject({ source: 'environment' });
    expect(added[2]).toMatchObject({ key: 'execution_status', value: 'paused' });
    await second.api(`/api/conversations/${id}/events`, { method: 'POST', body: userText('go on', true) });
    await eventually(async () => (await second.api(`/api/conversations/${id}`)).body.execution_status === 'finished');
  });

  it('persists secrets only sealed, and gets them back only with the same secret key', async () => {
    const agents = new FakeAgents();
    const first = await start(agents, 'k1');
    const body = startRequest(join(on.dir.path, 'w'), { secrets: { API_TOKEN: { kind: 'StaticSecret', value: 'tok_very_secret' } }, agent: { llm: { model: 'm', api_key: 'sk-llm-secret' } } });
    const id = (await first.api('/api/conversations', { method: 'POST', body })).body.id;
    await on.stop(first);
    const data = join(on.dir.path, 'data');
    const db = readdirSync(data).map((f) => readFileSync(join(data, f)).toString('latin1')).join('');
    expect(db).not.toContain('tok_very_secret');
    expect(db).not.toContain('sk-llm-secret');

    const withKey = new FakeAgents();
    const second = await start(withKey, 'k1');
    await second.api(`/api/conversations/${id}/events`, { method: 'POST', body: userText('x', true) });
    await eventually(() => withKey.hosts.length === 1);
    expect(withKey.hosts[0]!.secrets).toEqual({ API_TOKEN: 'tok_very_secret' });
    expect(withKey.hosts[0]!.llm?.apiKey).toBe('sk-llm-secret');
    await on.stop(second);

    const noKey = new FakeAgents();
    let logText = '';
    const third = await on.start({ agents: noKey, tuning: { runGraceMs: 50 }, log: pino({ level: 'info' }, new Writable({ write: (c, _e, cb) => ((logText += String(c)), cb()) })) });
    await third.api(`/api/conversations/${id}/events`, { method: 'POST', body: userText('y', true) });
    await eventually(() => noKey.hosts.length === 1);
    expect(noKey.hosts[0]!.secrets).toEqual({});
    expect(noKey.hosts[0]!.llm?.apiKey).toBeUndefined();
    expect(logText).toContain('cannot open stored secrets');
    await on.stop(third);
  });

  it('says so (log, names only) when secrets held in memory only (no key) are gone after a restart', async () => {
    const first = await start(new FakeAgents());
    const body = startRequest(join(on.dir.path, 'w'), { secrets: { OPENCODE_CONFIG_CONTENT: { kind: 'StaticSecret', value: 'config-secret-value' }, MY_TOKEN: { kind: 'StaticSecret', value: 'token-secret-value' } } });
    const id = (await first.api('/api/conversations', { method: 'POST', body })).body.id;
    await on.stop(first);
    let logText = '';
    const agents = new FakeAgents();
    const second = await on.start({ agents, tuning: { runGraceMs: 50 }, log: pino({ level: 'info' }, new Writable({ write: (c, _e, cb) => ((logText += String(c)), cb()) })) });
    const warning = logText.split('\n').filter(Boolean).map((l) => JSON.parse(l)).find((l) => l.conversationId === id && /held in memory only/.test(l.msg));
    expect(warning).toMatchObject({ secretNames: ['OPENCODE_CONFIG_CONTENT', 'MY_TOKEN'] });
    expect(logText).not.toMatch(/config-secret-value|token-secret-value/);
    // Sent again, the next run has them.
    expect((await second.api(`/api/conversations/${id}/secrets`, { method: 'POST', body: { secrets: { MY_TOKEN: 'token-secret-value' } } })).status).toBe(200);
    await second.api(`/api/conversations/${id}/events`, { method: 'POST', body: userText('z', true) });
    await eventually(() => agents.hosts.length === 1);
    expect(agents.hosts[0]!.secrets).toEqual({ MY_TOKEN: 'token-secret-value' });
  });

  it("keeps the MCP servers' env and header values out of the database: sealed with the key, back after a restart; without a key gone, and said", async () => {
    const mcp_config = { web: { url: 'http://127.0.0.1:9/mcp', headers: { Authorization: 'Bearer mcp-header-secret-1' } }, tool: { command: 'node', args: ['s.js'], env: { TOKEN: 'mcp-env-secret-2', PLAIN: '${NAMED}' } } };
    const first = await start(new FakeAgents(), 'k1');
    const body = startRequest(join(on.dir.path, 'w'), { agent: { llm: { model: 'm' }, mcp_config } });
    const id = (await first.api('/api/conversations', { method: 'POST', body })).body.id;
    const noKeyBody = startRequest(join(on.dir.path, 'w2'), { agent: { llm: { model: 'm' }, mcp_config } });
    await on.stop(first);
    const data = join(on.dir.path, 'data');
    const files = () => readdirSync(data).map((f) => readFileSync(join(data, f)).toString('latin1')).join('');
    expect(files()).not.toMatch(/mcp-header-secret-1|mcp-env-secret-2/);

    const withKey = new FakeAgents();
    const second = await start(withKey, 'k1');
    expect((await second.api(`/api/conversations/${id}`)).body.agent.mcp_config.tool.env).toEqual({ TOKEN: '**********', PLAIN: '**********' });
    await second.api(`/api/conversations/${id}/events`, { method: 'POST', body: userText('x', true) });
    await eventually(() => withKey.hosts.length === 1);
    expect(withKey.hosts[0]!.request.agent?.mcp_config).toEqual(mcp_config);
    // A later switch_llm or secrets update seals them again with the rest.
    expect((await second.api(`/api/conversations/${id}/switch_llm`, { method: 'POST', body: { llm: { model: 'm2' } } })).status).toBe(200);
    const noKeyId = (await second.api('/api/conversations', { method: 'POST', body: noKeyBody })).body.id;
    await on.stop(second);
    expect(files()).not.toMatch(/mcp-header-secret-1|mcp-env-secret-2/);
    const third = new FakeAgents();
    const again = await start(third, 'k1');
    await again.api(`/api/conversations/${id}/events`, { method: 'POST', body: userText('y', true) });
    await eventually(() => third.hosts.length === 1);
    expect(third.hosts[0]!.request.agent?.mcp_config).toEqual(mcp_config);
    await on.stop(again);

    let logText = '';
    const lost = new FakeAgents();
    const fourth = await on.start({ agents: lost, tuning: { runGraceMs: 50 }, log: pino({ level: 'info' }, new Writable({ write: (c, _e, cb) => ((logText += String(c)), cb()) })) });
    await fourth.api(`/api/conversations/${noKeyId}/events`, { method: 'POST', body: userText('z', true) });
    await eventually(() => lost.hosts.length === 1);
    expect((lost.hosts[0]!.request.agent?.mcp_config as any).tool.env).toEqual({ TOKEN: null, PLAIN: null });
    expect(logText).toMatch(/cannot open stored secrets/);
    expect(logText).not.toMatch(/mcp-header-secret-1|mcp-env-secret-2/);
  });
});
