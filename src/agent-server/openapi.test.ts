// The agent server's route table (and so its OpenAPI document) lists exactly the routes it serves:
// every route of the Koa routers, except those answering 501 (not built) and the description itself.
import { describe, expect, it } from 'vitest';
import { AGENT_SERVER_ROUTES } from '../api/agent-server/routes.ts';
import { createApp } from './app.ts';
import { startTestServer, tempDir } from './test-support.ts';
import { NOT_BUILT, NOT_BUILT_OUTSIDE_API } from './routes/not-implemented.ts';

/** `METHOD /path/{param}` of every route the app's routers serve. */
function served(): string[] {
  const stub = {} as never;
  const app = createApp({ service: { workspaceDir: '/nonexistent' } as never, events: stub, keys: stub, log: stub, health: { usableTools: [] } as never, bash: { service: stub, store: stub, forConversation: stub }, profiles: stub, agentProfiles: stub, subscription: stub, db: { exec: () => undefined } as never, onActivity: () => undefined, settings: { secrets: stub, workspaces: stub, providerConnections: stub, document: stub, initKeys: stub } });
  const out: string[] = [];
  for (const mw of app.middleware as { router?: { stack: { methods: string[]; path: string | RegExp }[] } }[]) {
    for (const layer of mw.router?.stack ?? []) {
      if (typeof layer.path !== 'string' || layer.methods.length === 0 || layer.methods.length > 10) continue;
      for (const m of layer.methods) if (m !== 'HEAD') out.push(`${m} ${layer.path.replace(/:(\w+)/g, '{$1}')}`);
    }
  }
  return out;
}

describe('agent server OpenAPI document', () => {
  it('the route table lists exactly the routes served, apart from the 501 ones and path-style aliases', () => {
    const notBuilt = new Set([...NOT_BUILT.map(([m, p]) => `${m.toUpperCase()} /api${p.replace(/:(\w+)/g, '{$1}')}`), ...NOT_BUILT_OUTSIDE_API.map(([m, p]) => `${m.toUpperCase()} ${p.replace(/:(\w+)/g, '{$1}')}`)]);
    // Path-style forms (/api/file/download/<abs>, ...): the same operations as their query forms.
    const routes = served().filter((r) => !notBuilt.has(r) && !r.includes('*path') && !['GET /openapi.json', 'GET /docs', 'GET /redoc'].includes(r)).map((r) => r.replace(/\*(\w+)/g, '{$1}'));
    const table = AGENT_SERVER_ROUTES.map((r) => `${r.method.toUpperCase()} ${r.path}`);
    expect([...new Set(routes)].sort()).toEqual([...table].sort());
  });

  it('is served at /openapi.json without a key, with /docs and /redoc pages', async () => {
    const dir = tempDir();
    const s = await startTestServer(dir.path);
    try {
      const doc = await s.api('/openapi.json', { key: null });
      expect(doc.status).toBe(200);
      expect(doc.body).toMatchObject({ openapi: '3.1.0', info: { version: '1.58.2' } });
      expect(doc.body.paths['/api/conversations'].post.requestBody.content['application/json'].schema.properties).toHaveProperty('agent');
      expect(doc.body.paths['/api/git/diff'].get.parameters).toContainEqual(expect.objectContaining({ name: 'path', in: 'query', required: true }));
      expect(doc.body.paths['/v1/chat/completions'].post.security).toEqual([{ sessionKey: [] }]);
      expect(doc.body.paths['/v1/chat/completions'].post.parameters).toContainEqual(expect.objectContaining({ name: 'X-OpenHands-ServerConversation-ID', in: 'header' }));
      expect(doc.body.paths['/api/canvas-extensions/install'].post.requestBody.content['application/json'].schema.required).toContain('source');
      expect(doc.body.paths['/app-backends/{extension_name}/session'].post.security).toEqual([{ sessionKey: [] }]);
      // Canvas App sessions want the session key; without an ingress origin configured they answer 503, as OpenHands does.
      for (const method of ['POST', 'DELETE'] as const) {
        expect((await s.api('/app-backends/canvas/session', { method, key: 'wrong' })).status).toBe(401);
        const r = await s.api('/app-backends/canvas/session', { method });
        expect(r.status, method).toBe(503);
        expect(r.body.detail).toMatch(/ingress is not configured/);
      }
      for (const page of ['/docs', '/redoc']) {
        const res = await fetch(s.url + page);
        expect(res.status).toBe(200);
        expect(await res.text()).toContain('/openapi.json');
      }
    } finally {
      await s.close();
      dir.remove();
    }
  });
});
