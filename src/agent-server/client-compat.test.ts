// The published OpenHands TypeScript client, unmodified, drives this agent server.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';

// The client picks `window.WebSocket` or `require('ws')` when its module loads; `require` does not
// exist in ESM, so give it the browser path (Node's own WebSocket), as in a web page. That also
// means the key travels as ?session_api_key=, the old-client path.
vi.hoisted(() => {
  (globalThis as { window?: unknown }).window = { WebSocket: globalThis.WebSocket };
});

import { join } from 'node:path';
import { RemoteConversation, RemoteWorkspace } from '@openhands/typescript-client';
import { eventually, startTestServer, tempDir, TEST_KEY, type TestServer } from './test-support.ts';

let dir: ReturnType<typeof tempDir>;
let s: TestServer;

beforeEach(async () => {
  dir = tempDir();
  s = await startTestServer(dir.path);
});
afterEach(async () => {
  await s.close();
  dir.remove();
});

describe('@openhands/typescript-client against the agent server', () => {
  it('starts, messages, runs, reads events and state, titles, pauses', async () => {
    const workspace = new RemoteWorkspace({ host: s.url, workingDir: join(dir.path, 'w'), apiKey: TEST_KEY });
    const agent = { kind: 'Agent', llm: { model: 'test/model', api_key: 'sk-x', usage_id: 'agent' }, tools: [{ name: 'terminal', params: {} }] };
    const conv = new RemoteConversation(agent as never, workspace);
    await conv.start({ initialMessage: 'hello' });
    expect(conv.id).toMatch(/^[0-9a-f-]{36}$/);
    await eventually(async () => (await conv.state.refresh(), (await conv.state.getExecutionStatus()) === 'finished'));
    expect(await conv.getAgentFinalResponse()).toBe('echo: hello');

    await conv.sendMessage('again');
    await conv.run();
    await eventually(async () => (await conv.getAgentFinalResponse()) === 'echo: again');

    const page = await conv.state.events.search({ limit: 100 });
    expect(page.items.filter((e: { kind: string }) => e.kind === 'MessageEvent')).toHaveLength(4);
    expect(await conv.state.events.count({ kind: 'MessageEvent' })).toBe(4);
    const first = page.items[0] as { id: string };
    expect(((await conv.state.events.getEventById(first.id)) as { id: string }).id).toBe(first.id);
    expect(await conv.state.events.getEventsById([first.id, 'unknown'])).toEqual([expect.objectContaining({ id: first.id }), null]);

    await conv.setTitle('Compat');
    expect((await conv.state.refresh()).title).toBe('Compat');
    // As in OpenHands, pause only acts on idle or running conversations.
    await conv.pause();
    expect((await conv.state.refresh()).execution_status).toBe('finished');
    await conv.close();
  });

  it('streams events over its WebSocket client', async () => {
    const workspace = new RemoteWorkspace({ host: s.url, workingDir: join(dir.path, 'w'), apiKey: TEST_KEY });
    const seen: { kind: string; key?: string }[] = [];
    const errors: Error[] = [];
    const conv = new RemoteConversation({ kind: 'Agent', llm: { model: 'm' } } as never, workspace, {
      callback: (e: unknown) => void seen.push(e as { kind: string }),
      onError: (e: Error) => void errors.push(e),
    });
    await conv.start();
    await conv.startWebSocketClient();
    await eventually(() => seen.length > 0 || errors.length > 0);
    expect(errors).toEqual([]);
    expect(seen[0]).toMatchObject({ kind: 'ConversationStateUpdateEvent', key: 'full_state' });
    await conv.sendMessage('over the socket');
    await conv.run();
    await eventually(() => seen.some((e) => e.kind === 'ConversationStateUpdateEvent' && (e as { value?: unknown }).value === 'finished'));
    expect(await conv.state.getExecutionStatus()).toBe('finished');
    await conv.close();
  });
});
