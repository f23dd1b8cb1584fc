// /ready says whether the agent server can serve: 503 from the moment it listens until its stored
// conversations are restored (the /api routes and the sockets refuse meanwhile, /alive answers),
// 200 after. A restart with a stored conversation, the restoring phase held open by the test.
import { afterAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { FakeAgents, startRequest, startTestServer, tempDir, TEST_KEY } from './test-support.ts';

const dir = tempDir();
afterAll(() => dir.remove());

describe('/ready', () => {
  it('is 503 while the conversations are being restored, with /api and the sockets refused; 200 once they are', async () => {
    const first = await startTestServer(dir.path, { agents: new FakeAgents() });
    expect((await fetch(`${first.url}/ready`)).status).toBe(200);
    const created = await first.api('/api/conversations', { method: 'POST', body: startRequest('.') });
    expect(created.status).toBe(201);
    const id = created.body.id as string;
    await first.close();

    let release!: () => void;
    let listening!: (url: string) => void;
    const url = new Promise<string>((r) => (listening = r));
    const second = startTestServer(dir.path, {
      agents: new FakeAgents(),
      tuning: { beforeRestore: (u) => (listening(u), new Promise<void>((r) => (release = r))) },
    });
    const base = await url;
    expect(await (await fetch(`${base}/alive`)).json()).toEqual({ status: 'ok' });
    const ready = await fetch(`${base}/ready`);
    expect(ready.status).toBe(503);
    expect(await ready.json()).toEqual({ status: 'initializing', message: 'Server is still initializing' });
    const read = await fetch(`${base}/api/conversations/${id}`, { headers: { 'x-session-api-key': TEST_KEY } });
    expect(read.status).toBe(503);
    expect(read.headers.get('retry-after')).toBe('1');
    expect(JSON.stringify(await read.json())).toContain('being restored');
    const refused = await new Promise<number>((resolve) => {
      const ws = new WebSocket(`${base.replace('http', 'ws')}/sockets/events/${id}`);
      ws.on('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0));
      ws.on('open', () => resolve(101));
      ws.on('error', () => resolve(-1));
    });
    expect(refused).toBe(503);

    release();
    const server = await second;
    try {
      expect((await fetch(`${server.url}/ready`)).status).toBe(200);
      const after = await server.api(`/api/conversations/${id}`);
      expect(after.status).toBe(200);
      expect(after.body.id).toBe(id);
    } finally {
      await server.close();
    }
  });
});
