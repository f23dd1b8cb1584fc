// The published OpenHands TypeScript client, unmodified, drives this agent server with the real
// agent against the scripted model: create, message, run, events over its WebSocket, read back,
// fork, pause, switch the LLM, ask a side question, download the trajectory, and /server_info (a
// semver at or above the OpenHands level we emulate).
import { afterEach, describe, expect, it, vi } from 'vitest';

// The client picks `window.WebSocket` or `require('ws')` when its module loads; `require` does not
// exist in ESM, so give it the browser path (Node's own WebSocket), as in a web page. That also
// means the key travels as ?session_api_key=, the old-client path (it must never reach a log).
vi.hoisted(() => {
  (globalThis as { window?: unknown }).window = { WebSocket: globalThis.WebSocket };
});

import { Writable } from 'node:stream';
import { strFromU8, unzipSync } from 'fflate';
import { join } from 'node:path';
import { pino } from 'pino';
import { HttpClient, RemoteConversation, RemoteWorkspace } from '@openhands/typescript-client';
import { AgentServerClient, AgentServerFeatureRequirements, assertAgentServerSupports, compareAgentServerVersions } from '@openhands/typescript-client/clients';
import { createAgent } from '../agent/agent.ts';
import { REDACT_PATHS } from '../util/log.ts';
import { COMPATIBLE_VERSION } from './routes/health.ts';
import { eventually, TEST_KEY, useRealAgentServer } from './test-support.ts';

type Ev = { id?: string; kind: string; key?: string; value?: unknown; source?: string; tool_name?: string; observation?: unknown; action_id?: string };

let logs: string[] = [];
const t = useRealAgentServer({
  createAgent,
  overrides: () => {
    logs = [];
    // Everything the server logs, at every level, with the production redaction.
    const sink = new Writable({ write: (chunk: Buffer, _enc, done) => (logs.push(chunk.toString()), done()) });
    return { log: pino({ level: 'trace', redact: { paths: REDACT_PATHS, censor: '**********' } }, sink) };
  },
});
afterEach(() => {
  expect(logs.length).toBeGreaterThan(0);
  expect(logs.join('')).not.toContain(TEST_KEY);
});

const AGENT = { kind: 'Agent', llm: { model: 'openai/scripted', api_key: 'sk-client', usage_id: 'agent' }, tools: [{ name: 'terminal', params: {} }] };
const persisted = (events: Ev[]) => events.filter((e) => e.kind !== 'StreamingDeltaEvent' && e.key !== 'full_state');

describe('@openhands/typescript-client against the agent server', () => {
  it('creates, runs against the scripted model, streams over its WebSocket, reads back, forks and pauses', async () => {
    const workspace = new RemoteWorkspace({ host: t.s.url, workingDir: join(t.dir.path, 'w'), apiKey: TEST_KEY });
    const seen: Ev[] = [];
    const errors: Error[] = [];
    const conv = new RemoteConversation(AGENT as never, workspace, { callback: (e: unknown) => void seen.push(e as Ev), onError: (e: Error) => void errors.push(e) });
    await conv.start();
    expect(conv.id).toMatch(/^[0-9a-f-]{36}$/);
    await conv.startWebSocketClient();
    await eventually(() => seen.length > 0 || errors.length > 0);
    expect(seen[0]).toMatchObject({ kind: 'ConversationStateUpdateEvent', key: 'full_state' });

    // One real terminal command from a model tool call, then the answer.
    t.llm.push(
      { toolCalls: [{ name: 'terminal', arguments: { command: 'echo compat-$((40+2)) | tee out.txt' } }], usage: { prompt_tokens: 30, completion_tokens: 8 } },
      (req) => {
        expect(JSON.stringify(req.messages.find((m) => m.role === 'tool'))).toContain('compat-42');
        return { content: 'The file says compat-42.', usage: { prompt_tokens: 50, completion_tokens: 6 } };
      },
    );
    await conv.sendMessage('write the file');
    await conv.run();
    await eventually(() => seen.some((e) => e.kind === 'ConversationStateUpdateEvent' && e.key === 'execution_status' && e.value === 'finished'), 15_000);
    expect(await conv.getAgentFinalResponse()).toBe('The file says compat-42.');
    expect(await conv.state.getExecutionStatus()).toBe('finished');

    // What came over the socket is what reads back, in order.
    const page = await conv.state.events.search({ limit: 100 });
    const items = page.items as Ev[];
    await eventually(() => persisted(seen).length >= items.length);
    expect(persisted(seen).map((e) => e.id)).toEqual(items.map((e) => e.id));
    const action = items.find((e) => e.kind === 'ActionEvent' && e.tool_name === 'terminal')!;
    const observation = items.find((e) => e.kind === 'ObservationEvent' && e.action_id === action.id)!;
    expect(JSON.stringify(observation.observation)).toContain('compat-42');
    expect(await conv.state.events.count({ kind: 'MessageEvent' })).toBe(2);
    expect(((await conv.state.events.getEventById(action.id!)) as Ev).id).toBe(action.id);
    expect(await conv.state.events.getEventsById([observation.id!, 'unknown'])).toEqual([expect.objectContaining({ id: observation.id }), null]);
    const stats = (await conv.conversationStats()) as unknown as { usage_to_metrics: Record<string, { accumulated_token_usage: { prompt_tokens: number } }> };
    expect(stats.usage_to_metrics['agent']!.accumulated_token_usage.prompt_tokens).toBe(80);
    expect(JSON.stringify(await conv.state.refresh())).not.toContain('sk-client');
    await conv.setTitle('Compat');
    expect((await conv.state.refresh()).title).toBe('Compat');

    // Fork: a new conversation with the same memory, metrics reset; running it leaves the source alone.
    const fork = await conv.fork({ title: 'Branch' } as never);
    expect(fork.id).not.toBe(conv.id);
    const forkInfo = await fork.state.refresh();
    expect(forkInfo).toMatchObject({ execution_status: 'idle', title: 'Branch', forked_from_conversation_id: conv.id, stats: { usage_to_metrics: {} } });
    expect(((await fork.state.events.search({ limit: 100 })).items as Ev[]).map((e) => e.id)).toEqual(items.map((e) => e.id));
    t.llm.push((req) => {
      // The fork's model sees the source's history.
      expect(JSON.stringify(req.messages)).toContain('compat-42');
      return { content: 'Answered on the fork.', usage: { prompt_tokens: 9, completion_tokens: 1 } };
    });
    await fork.sendMessage('and on the fork?');
    await fork.run();
    await eventually(async () => (await fork.state.refresh(), (await fork.state.getExecutionStatus()) === 'finished'), 15_000);
    expect(await fork.getAgentFinalResponse()).toBe('Answered on the fork.');
    expect(((await fork.conversationStats()) as unknown as typeof stats).usage_to_metrics['agent']!.accumulated_token_usage.prompt_tokens).toBe(9);
    expect(((await conv.state.events.search({ limit: 100 })).items as Ev[]).map((e) => e.id)).toEqual(items.map((e) => e.id));
    await fork.close();

    // Pause while the model is thinking: the call is abandoned, the status is paused, the socket says so.
    t.llm.push(async (req) => {
      await new Promise((resolve) => req.signal.addEventListener('abort', resolve, { once: true }));
      return { content: 'never delivered' };
    });
    await conv.sendMessage('think for a long time');
    await conv.run();
    await eventually(async () => (await conv.state.refresh(), (await conv.state.getExecutionStatus()) === 'running') && t.llm.remaining() === 0);
    await conv.pause();
    await eventually(() => seen.some((e) => e.kind === 'PauseEvent'));
    expect((await conv.state.refresh()).execution_status).toBe('paused');
    await eventually(async () => (await conv.state.events.count({ kind: 'PauseEvent' })) === 1);
    expect(JSON.stringify(await conv.state.events.search({ limit: 100 }))).not.toContain('never delivered');
    expect(errors).toEqual([]);
    await conv.close();
  });

  it('switches the LLM through the client (the next call uses it, its key never shows), asks a side question, downloads the trajectory', async () => {
    const workspace = new RemoteWorkspace({ host: t.s.url, workingDir: join(t.dir.path, 'w'), apiKey: TEST_KEY });
    const conv = new RemoteConversation(AGENT as never, workspace);
    await conv.start();
    await conv.switchLlm({ model: 'openai/switched', base_url: t.llm.url, api_key: 'sk-client-switched', usage_id: 'agent' } as never);
    expect((await conv.state.refresh()).agent.llm).toMatchObject({ model: 'openai/switched', api_key: '**********' });
    t.llm.push((req) => {
      expect(req.model).toBe('switched');
      expect(req.headers['authorization']).toBe('Bearer sk-client-switched');
      return { content: 'switched answer' };
    });
    await conv.sendMessage('hello');
    await conv.run();
    await eventually(async () => (await conv.state.refresh(), (await conv.state.getExecutionStatus()) === 'finished'), 15_000);
    expect(await conv.getAgentFinalResponse()).toBe('switched answer');
    expect(JSON.stringify(await conv.state.events.search({ limit: 100 }))).not.toContain('sk-client-switched');

    // A side question: answered by the switched model, recorded nowhere.
    const count = await conv.state.events.count();
    t.llm.push((req) => {
      expect(req.model).toBe('switched');
      expect(JSON.stringify(req.messages)).toContain('switched answer');
      return { content: 'a side answer' };
    });
    expect(await conv.askAgent('what did you say?')).toBe('a side answer');
    expect(await conv.state.events.count()).toBe(count);

    // The trajectory as a zip: every event, and the metadata.
    const zip = unzipSync(new Uint8Array(await ((await conv.downloadTrajectory()) as Blob).arrayBuffer()));
    expect(Object.keys(zip).filter((f) => f.startsWith('events/'))).toHaveLength(count);
    expect(JSON.parse(strFromU8(zip['meta.json']!))).toMatchObject({ id: conv.id });
    expect(logs.join('')).not.toContain('sk-client-switched');
    await conv.close();
  });

  it('reads /server_info, tools and the file helpers through the client', async () => {
    const client = new AgentServerClient({ host: t.s.url, apiKey: TEST_KEY });
    const info = await client.server.getServerInfo();
    expect(info.version).toMatch(/^\d+\.\d+\.\d+$/);
    expect(compareAgentServerVersions(info.version!, '1.44.0')).toBeGreaterThanOrEqual(0);
    expect(info.version).toBe(COMPATIBLE_VERSION);
    // The client's own feature gates pass, the newest one included.
    const http = new HttpClient({ baseUrl: t.s.url, apiKey: TEST_KEY });
    for (const req of Object.values(AgentServerFeatureRequirements)) await assertAgentServerSupports(http, req);
    expect(await client.tools.listTools()).toEqual(info.usable_tools);
    expect(info.usable_tools).toContain('terminal');

    const home = await client.files.getHome();
    expect(home.home).toBeTruthy();
    await client.files.uploadTextFile('hi', join(t.dir.path, 'w', 'sub', 'a.txt'));
    expect((await client.files.searchSubdirectories(join(t.dir.path, 'w'))).items).toEqual([{ name: 'sub', path: join(t.dir.path, 'w', 'sub') }]);
    expect(await client.files.downloadTextFile(join(t.dir.path, 'w', 'sub', 'a.txt'))).toBe('hi');
    client.close();
  });
});
