// GET /api/conversations/{id}/workspace[/{file_path}]: the conversation's workspace as static files,
// and nothing outside it (.., encoded .., absolute paths, links the agent planted).
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { startRequest, TEST_KEY, useTestServer } from '../test-support.ts';

const t = useTestServer();

const get = (path: string, key: string | null = TEST_KEY) => fetch(t.s.url + path, { headers: key ? { 'x-session-api-key': key } : {} });

/** A GET with the path sent as written (fetch would resolve `..` itself, so the server would never see it). */
const raw = (path: string) =>
  new Promise<{ status: number; text: string }>((resolve, reject) => {
    const req = request(t.s.url + '/', { path, headers: { 'x-session-api-key': TEST_KEY } }, (res) => {
      let text = '';
      res.on('data', (d: Buffer) => (text += d.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
    });
    req.on('error', reject);
    req.end();
  });

describe('workspace static files', () => {
  it('serves files with their type, a directory as its index.html, and refuses everything outside', async () => {
    const ws = join(t.dir.path, 'site');
    mkdirSync(join(ws, 'docs'), { recursive: true });
    mkdirSync(join(ws, 'empty'));
    mkdirSync(join(t.dir.path, 'outside'));
    writeFileSync(join(ws, 'index.html'), '<h1>root</h1>');
    writeFileSync(join(ws, 'docs', 'index.html'), '<h1>docs</h1>');
    writeFileSync(join(ws, 'app.js'), 'console.log(1)');
    writeFileSync(join(ws, 'data.json'), '{"a":1}');
    writeFileSync(join(t.dir.path, 'outside', 'secret.txt'), 'secret');
    symlinkSync(join(t.dir.path, 'outside'), join(ws, 'out'));
    symlinkSync(join(t.dir.path, 'outside', 'secret.txt'), join(ws, 'secret.txt'));
    symlinkSync(join(ws, 'app.js'), join(ws, 'inner-link.js'));
    symlinkSync(join(ws, 'loop'), join(ws, 'loop'));
    const id = (await t.s.api('/api/conversations', { method: 'POST', body: startRequest(ws) })).body.id;
    const base = `/api/conversations/${id}/workspace`;

    const root = await get(base);
    expect([root.status, root.headers.get('content-type'), await root.text()]).toEqual([200, 'text/html; charset=utf-8', '<h1>root</h1>']);
    expect(await (await get(`${base}/`)).text()).toBe('<h1>root</h1>');
    expect(await (await get(`${base}/docs`)).text()).toBe('<h1>docs</h1>');
    const js = await get(`${base}/app.js`);
    expect([js.status, js.headers.get('content-type')]).toEqual([200, 'text/javascript; charset=utf-8']);
    expect((await get(`${base}/data.json`)).headers.get('content-type')).toBe('application/json');
    writeFileSync(join(ws, 'README'), 'plain');
    expect((await get(`${base}/README`)).headers.get('content-type')).toBe('text/plain; charset=utf-8');
    // A link that stays inside is followed.
    expect(await (await get(`${base}/inner-link.js`)).text()).toBe('console.log(1)');
    expect((await get(`${base}/empty`)).status).toBe(404);
    expect((await get(`${base}/missing.txt`)).status).toBe(404);

    for (const path of ['/../outside/secret.txt', '/%2e%2e/outside/secret.txt', '/docs/..%2f..%2foutside/secret.txt', '/out/secret.txt', '/secret.txt', '/loop', '/%00']) {
      const r = await raw(base + path);
      expect({ path, status: r.status }).toEqual({ path, status: 400 });
      expect(r.text).toContain('outside the workspace');
    }
    expect((await get(base, null)).status).toBe(401);
    // The workspace session cookie (an <iframe src> cannot send the header) opens these routes, and only these.
    const session = await fetch(`${t.s.url}/api/auth/workspace-session`, { method: 'POST', headers: { 'x-session-api-key': TEST_KEY } });
    const cookie = session.headers.get('set-cookie')!.split(';')[0]!;
    expect((await fetch(`${t.s.url}${base}/app.js`, { headers: { cookie } })).status).toBe(200);
    expect((await fetch(`${t.s.url}/api/conversations/${id}`, { headers: { cookie } })).status).toBe(401);
    expect((await get('/api/conversations/0f8e1c2a-9b7d-4c55-a90e-2b1f7e6d5c4a/workspace/index.html')).status).toBe(404);
    expect((await get('/api/conversations/nope/workspace/index.html')).status).toBe(422);
  });
});
