// The app-backend ingress end to end with real pieces: the facade's store and users (real SQLite), a
// real agent server as alice's sandbox (configured as a sandbox is: appBackendEnv's settings), a real
// Canvas App installed, approved and started on it, and HTTP and WebSocket from the "browser" through
// the ingress listener to the app's backend. Bob (and nobody without a key) gets no session.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { startTestServer, tempDir, TEST_KEY, type TestServer } from '../agent-server/test-support.ts';
import { writeTestExtension } from '../agent-server/canvas/test-extension.ts';
import { createLogger } from '../util/log.ts';
import { rawRequest as raw } from '../testing/raw-http.ts';
import { AppBackendRelay, appBackendEnv } from './app-backend-relay.ts';
import { makeSandbox, startHarness, type Harness } from './test-support.ts';

const WEB = 'http://localhost:3000'; // the web app's origin

describe('Canvas App backends of a sandbox, through the facade ingress', () => {
  let h: Harness;
  let dir: ReturnType<typeof tempDir>;
  let ingress: Server;
  let base: string;
  let agent: TestServer;
  const app = 'hello-app';

  beforeAll(async () => {
    h = await startHarness();
    dir = tempDir();
    ingress = createServer();
    await new Promise<void>((ok) => ingress.listen(0, '127.0.0.1', ok));
    base = `http://127.0.0.1:${(ingress.address() as AddressInfo).port}`;
    const relay = new AppBackendRelay({ store: h.store, db: h.db, namespace: 'default', log: createLogger('relay-test') }, { publicUrl: base, webOrigins: [WEB] });
    ingress.on('request', relay.handle);
    ingress.on('upgrade', relay.upgrade);
    const env = appBackendEnv({ publicUrl: base, webOrigins: [WEB] }, 'sb-alice');
    agent = await startTestServer(dir.path, { appBackends: { publicUrl: env['OH_APP_BACKEND_PUBLIC_URL']!, allowedOrigins: JSON.parse(env['OH_ALLOW_CORS_ORIGINS']!), trustForwarded: true } });
    await makeSandbox(h.store, h.alice.user, 'sb-alice', 'RUNNING', { url: agent.url, key: TEST_KEY });
    await makeSandbox(h.store, h.bob.user, 'sb-bob', 'PAUSED', { key: 'bob-key' });
    const src = writeTestExtension(join(dir.path, 'pkg'), app);
    expect((await agent.api('/api/canvas-extensions/install', { method: 'POST', body: { source: src.dir } })).status).toBe(200);
    await agent.api(`/api/canvas-extensions/installed/${app}`, { method: 'PATCH', body: { enabled: true } });
    const { revision } = (await agent.api(`/api/canvas-extensions/installed/${app}/backend`)).body as { revision: string };
    expect((await agent.api(`/api/canvas-extensions/installed/${app}/backend/prepare`, { method: 'POST', body: { revision } })).status).toBe(200);
    expect((await agent.api(`/api/canvas-extensions/installed/${app}/backend/start`, { method: 'POST', body: { revision } })).body.state).toBe('ready');
  }, 60_000);
  afterAll(async () => {
    await agent?.close();
    await new Promise((ok) => ingress?.close(ok));
    await h?.close();
    dir?.remove();
  });

  it('opens a session for the owner only, with the cookie scoped to the sandbox app path, and relays HTTP and WebSocket', async () => {
    const session = `${base}/sandboxes/sb-alice/app-backends/${app}/session`;
    const pre = await raw(session, { method: 'OPTIONS', headers: { origin: WEB, 'access-control-request-method': 'POST' } });
    expect([pre.status, pre.headers['access-control-allow-origin'], pre.headers['access-control-allow-credentials']]).toEqual([204, WEB, 'true']);
    expect((await raw(session, { method: 'POST', headers: { origin: WEB } })).status).toBe(401);
    expect((await raw(session, { method: 'POST', headers: { origin: WEB, authorization: `Bearer ${h.bob.key}` } })).status).toBe(404);
    expect((await raw(session, { method: 'POST', headers: { origin: 'https://evil.test', authorization: `Bearer ${h.alice.key}` } })).status).toBe(403);
    expect((await raw(`${base}/sandboxes/sb-bob/app-backends/${app}/session`, { method: 'POST', headers: { origin: WEB, authorization: `Bearer ${h.bob.key}` } })).status).toBe(404); // not running

    const made = await raw(session, { method: 'POST', headers: { origin: WEB, authorization: `Bearer ${h.alice.key}` } });
    expect(made.status).toBe(200);
    expect(made.headers['access-control-allow-origin']).toBe(WEB);
    expect(JSON.parse(made.text).ingress_url).toBe(`${base}/sandboxes/sb-alice/app-backends/${app}/`);
    const setCookie = String(made.headers['set-cookie']);
    expect(setCookie).toMatch(new RegExp(`^oh_app_backend_session=[\\w-]{40,}; HttpOnly; Max-Age=300; Path=/sandboxes/sb-alice/app-backends/${app}; SameSite=none; Secure; Partitioned$`));
    expect(setCookie).not.toContain(TEST_KEY);
    const cookie = setCookie.split(';')[0]!;

    const at = `${base}/sandboxes/sb-alice/app-backends/${app}`;
    expect((await raw(`${at}/echo`)).status).toBe(401);
    const echo = await raw(`${at}/echo/a?x=1`, { headers: { cookie: `${cookie}; agentyard_session=facade-secret`, authorization: `Bearer ${h.alice.key}` } });
    expect(echo.status).toBe(200);
    const seen = JSON.parse(echo.text) as { url: string; headers: Record<string, string> };
    expect(seen.url).toBe('/echo/a?x=1');
    expect(JSON.stringify(seen.headers)).not.toMatch(/facade-secret|Bearer|oh_app_backend_session/);
    const posted = await raw(`${at}/echo`, { method: 'POST', headers: { cookie, origin: base, 'content-type': 'text/plain' }, body: 'payload' });
    expect(JSON.parse(posted.text).body).toBe('payload');
    for (const p of ['/%2e%2e/x', '/a/%252e%252e/x']) expect((await raw(`${at}${p}`, { headers: { cookie } })).status, p).toBe(400);
    // A path that names a host reaches the app's own backend all the same, as a path.
    const hostPath = await raw(`${at}//evil.test:9/x`, { headers: { cookie } });
    expect([hostPath.status, JSON.parse(hostPath.text).url]).toEqual([200, '//evil.test:9/x']);
    // The same cookie is no key to another sandbox or to nothing at all.
    expect((await raw(`${base}/sandboxes/sb-bob/app-backends/${app}/echo`, { headers: { cookie } })).status).toBe(404);
    expect((await raw(`${base}/elsewhere`, { headers: { cookie } })).status).toBe(404);

    const ws = new WebSocket(`${at.replace('http:', 'ws:')}/socket`, ['canvas.v1'], { headers: { cookie, origin: base } });
    const first = await new Promise<string>((ok, fail) => {
      ws.once('message', (m) => ok(String(m)));
      ws.once('error', fail);
    });
    expect(JSON.parse(first)).toMatchObject({ hello: '/socket', cookie: null, key: null, protocol: 'canvas.v1' });
    ws.send('ping');
    expect(await new Promise<string>((ok) => ws.once('message', (m) => ok(String(m))))).toBe('echo:ping');
    const code = await new Promise<number>((ok) => {
      ws.once('close', (c) => ok(c));
      ws.send('close-4001');
    });
    expect(code).toBe(4001);

    const noCookie = new WebSocket(`${at.replace('http:', 'ws:')}/socket`, { headers: { origin: base } });
    expect(await new Promise<number>((ok) => noCookie.once('unexpected-response', (_q, r) => ok(r.statusCode ?? 0)))).toBe(403);
  });
});
