// The full collection once the last run ends (idle-gc.ts): one when the server goes idle, none while
// another conversation still runs, none per step.
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { eventually, FakeAgents, startRequest, startTestServer, tempDir, userText, type TestServer } from './test-support.ts';

type Gc = (options?: { type?: string; execution?: string }) => void;
const global = globalThis as { gc?: Gc };

describe('a full collection when the agent server goes idle', () => {
  let dir: ReturnType<typeof tempDir>;
  let server: TestServer;
  const calls: { type?: string; execution?: string }[] = [];
  let saved: Gc | undefined;

  beforeEach(() => {
    dir = tempDir();
    saved = global.gc;
    calls.length = 0;
    global.gc = (o) => void calls.push(o ?? {});
  });
  afterEach(async () => {
    await server?.close();
    dir.remove();
    if (saved) global.gc = saved;
    else delete global.gc;
  });

  it('runs one major collection after the last run ends, not while another conversation runs', async () => {
    const agents = new FakeAgents();
    server = await startTestServer(dir.path, { agents });
    const start = async () => (await server.api('/api/conversations', { method: 'POST', body: startRequest(join(dir.path, 'w')) })).body.id as string;
    const [a, b] = [await start(), await start()];
    const release = agents.hold();
    for (const id of [a, b]) await server.api(`/api/conversations/${id}/events`, { method: 'POST', body: userText('go', true) });
    // b's run ends (paused) while a's is still held: no collection then, a still runs.
    const status = async (id: string) => (await server.api(`/api/conversations/${id}`)).body.execution_status;
    await server.api(`/api/conversations/${b}/pause`, { method: 'POST' });
    await eventually(async () => (await status(b)) === 'paused');
    await new Promise((r) => setTimeout(r, 50));
    expect(calls).toEqual([]);
    // a's run ends: the server is idle, one major collection.
    release();
    await eventually(async () => (await status(a)) === 'finished');
    await eventually(async () => calls.length > 0);
    await new Promise((r) => setTimeout(r, 50));
    expect(calls).toEqual([{ type: 'major', execution: 'sync' }]);
  });
});
