// The OpenAPI document over HTTP, and the route table it is generated from against the routes the
// Koa routers really register: an undocumented route, or a documented one nobody serves, fails here.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { APP_ROUTES } from '../api/app/routes.ts';
import { apiRouters, createFacade } from './app.ts';
import { NS, startHarness, type Harness } from './test-support.ts';

const root = join(import.meta.dirname, '..', '..');

/** `GET /api/v1/x/{id}` for each route a router serves (HEAD is implied by GET). */
function registered(router: ReturnType<typeof apiRouters>['api']): string[] {
  return router.stack.flatMap((layer) =>
    layer.methods.filter((m) => m !== 'HEAD').map((m) => `${m} ${String(layer.path).replace(/:(\w+)/g, '{$1}')}`),
  );
}

describe('OpenAPI document', () => {
  let h: Harness;
  beforeAll(async () => (h = await startHarness()));
  afterAll(() => h.close());

  it('is served at /api/v1/openapi.json without a key, as generated into openapi.json', async () => {
    const onDisk = JSON.parse(readFileSync(join(root, 'openapi.json'), 'utf8'));
    for (const key of [null, h.alice.key, 'ay_wrong']) {
      const r = await h.call('GET', '/api/v1/openapi.json', { key });
      expect(r.status).toBe(200);
      expect(r.headers.get('content-type')).toMatch(/^application\/json/);
      expect(r.body).toEqual(onDisk);
    }
    expect(onDisk.paths['/api/v1/users/me'].get.security).toEqual([{ bearer: [] }]);
    expect(onDisk.paths['/api/v1/openapi.json'].get.security).toEqual([]);
  });

  it('documents exactly the routes the routers register', () => {
    const { openApi, api } = apiRouters(createFacade({ store: h.store, db: h.db, clock: h.clock, namespace: NS, settings: { capacity: 1 } }));
    const served = [...registered(openApi), ...registered(api)].sort();
    const documented = APP_ROUTES.map((r) => `${r.method.toUpperCase()} ${r.path}`).sort();
    expect(new Set(served).size).toBe(served.length);
    expect(new Set(documented).size).toBe(documented.length);
    expect(served).toEqual(documented);
    // Sanity: the walk saw the nested routers, not just their mount points.
    expect(served).toContain('GET /api/v1/users/me');
    expect(served).toContain('POST /api/v1/webhooks/{sandbox_id}/events/{conversation_id}');
  });
});
