// Canvas App backends in `agentyard up`, end to end over HTTP and WebSocket only: a conversation gets
// a real sandbox; its owner installs, approves and starts a Canvas App on the sandbox's agent server
// (the address and key the sandbox record gives the owner), then reaches the app's backend through
// the facade's app-backend ingress: a session opened with the owner's API key from the web app's
// origin, the app cookie scoped to the sandbox's app path, HTTP and a WebSocket relayed.
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { writeTestExtension } from '../../src/agent-server/canvas/test-extension.ts';
import { rawRequest as raw } from '../../src/testing/raw-http.ts';
import { eventually, startServiceWithModel, type RunningService } from './harness.ts';

describe('agentyard up: Canvas App backends through the facade', () => {
  let svc: RunningService;
  let stop: (() => Promise<void>) | undefined;

  beforeAll(async () => {
    ({ svc, stop } = await startServiceWithModel());
  }, 120_000);
  afterAll(async () => {
    await stop?.();
  });

  it('installs, approves and starts an app on the sandbox, and relays its session, HTTP and WebSocket', async () => {
    const ingress = svc.output.map((l) => /Canvas App backends of sandboxes are reached at (\S+)\/sandboxes\//.exec(l)?.[1]).find(Boolean);
    expect(ingress, svc.output.join('\n')).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(ingress).not.toBe(svc.url);

    const started = await svc.api<{ id: string }>('POST', '/api/v1/app-conversations', {});
    expect(started.status).toBeLessThan(300);
    const task = await eventually(async () => {
      const { body } = await svc.api<({ status: string; detail?: string; sandbox_id: string } | null)[]>('GET', `/api/v1/app-conversations/start-tasks?ids=${started.body.id}`);
      if (body[0]?.status === 'ERROR') throw new Error(`start failed: ${body[0].detail}`);
      return body[0]?.status === 'READY' ? body[0] : undefined;
    }, 'the sandbox to be ready');
    const { body: sandboxes } = await svc.api<{ session_api_key: string; exposed_urls: { name: string; url: string }[] }[]>('GET', `/api/v1/sandboxes?id=${task.sandbox_id}`);
    const agentUrl = sandboxes[0]!.exposed_urls.find((u) => u.name === 'AGENT_SERVER')!.url;
    const key = sandboxes[0]!.session_api_key;
    const agent = async (method: string, path: string, body?: unknown) => {
      const r = await fetch(agentUrl + path, { method, headers: { 'x-session-api-key': key, ...(body ? { 'content-type': 'application/json' } : {}) }, ...(body ? { body: JSON.stringify(body) } : {}) });
      return { status: r.status, body: (await r.json()) as Record<string, unknown> };
    };

    const app = 'hello-app';
    // In the sandbox's workspace: an isolated sandbox sees nothing else of the host's files.
    const src = writeTestExtension(join(svc.dataDir, 'sandboxes', task.sandbox_id, 'workspace', 'canvas-package'), app);
    const installed = await agent('POST', '/api/canvas-extensions/install', { source: src.dir });
    expect(installed.status, JSON.stringify(installed.body)).toBe(200);
    await agent('PATCH', `/api/canvas-extensions/installed/${app}`, { enabled: true });
    const revision = (await agent('GET', `/api/canvas-extensions/installed/${app}/backend`)).body['revision'];
    expect((await agent('POST', `/api/canvas-extensions/installed/${app}/backend/prepare`, { revision })).status).toBe(200);
    const running = await agent('POST', `/api/canvas-extensions/installed/${app}/backend/start`, { revision });
    expect(running.body, JSON.stringify(running.body)).toMatchObject({ state: 'ready' });

    const at = `${ingress}/sandboxes/${task.sandbox_id}/app-backends/${app}`;
    expect((await raw(`${at}/session`, { method: 'POST', headers: { origin: svc.url } })).status).toBe(401);
    const made = await raw(`${at}/session`, { method: 'POST', headers: { origin: svc.url, authorization: `Bearer ${svc.apiKey}` } });
    expect(made.status, made.text).toBe(200);
    expect(JSON.parse(made.text).ingress_url).toBe(`${at}/`);
    const setCookie = String(made.headers['set-cookie']);
    expect(setCookie).toContain(`; Path=/sandboxes/${task.sandbox_id}/app-backends/${app};`);
    const cookie = setCookie.split(';')[0]!;

    const echo = await raw(`${at}/echo?x=1`, { headers: { cookie } });
    expect(echo.status).toBe(200);
    expect(JSON.parse(echo.text)).toMatchObject({ method: 'GET', url: '/echo?x=1' });
    expect((await raw(`${at}/echo`)).status).toBe(401);

    const ws = new WebSocket(`${at.replace('http:', 'ws:')}/live`, ['canvas.v1'], { headers: { cookie, origin: ingress! } });
    expect(JSON.parse(await new Promise<string>((ok, fail) => (ws.once('message', (m) => ok(String(m))), ws.once('error', fail))))).toMatchObject({ hello: '/live', protocol: 'canvas.v1' });
    ws.send('hi');
    expect(await new Promise<string>((ok) => ws.once('message', (m) => ok(String(m))))).toBe('echo:hi');
    ws.close();
  }, 180_000);
});
