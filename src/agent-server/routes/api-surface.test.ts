// The whole OpenHands agent-server surface, as the 1.44 client schema lists it: every route is
// either built or answers 501 with a message (never the router's 404), and every conversation
// route checks its id (422 at ['path','conversation_id'] for a non-UUID, before any lookup).
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { startRequest, useTestServer } from '../test-support.ts';

/** [method, path] of every operation in the client's generated schema. */
function schemaRoutes(): [string, string][] {
  const pkg = createRequire(import.meta.url).resolve('@openhands/typescript-client/clients');
  const text = readFileSync(join(dirname(pkg), 'generated', 'agent-server-schema.d.ts'), 'utf8');
  const routes = new Map<string, [string, string]>();
  let method: string | undefined;
  for (const line of text.split('\n')) {
    const data = /^export type \w+?(Get|Post|Patch|Delete|Put)Data = \{/.exec(line);
    if (data) method = data[1]!.toUpperCase();
    const url = /^ {4}url: '([^']+)';/.exec(line);
    if (url && method) {
      routes.set(`${method} ${url[1]}`, [method, url[1]!]);
      method = undefined;
    }
  }
  return [...routes.values()];
}

const ROUTES = schemaRoutes();
const BUILT_LATER = ['POST /api/conversations/{conversation_id}/switch_acp_model', 'POST /api/conversations/{conversation_id}/security_analyzer', 'POST /api/conversations/{conversation_id}/switch_llm', 'POST /api/conversations/{conversation_id}/ask_agent', 'GET /api/file/download-trajectory/{conversation_id}', 'GET /api/git/commits', 'GET /api/git/commits/{sha}/changes', 'POST /api/sub-agents', 'GET /api/vscode/status', 'GET /api/vscode/url', 'GET /api/desktop/url', 'GET /api/file/archive', 'GET /api/conversations/{conversation_id}/workspace'];
const UNKNOWN = '0f8e1c2a-9b7d-4c55-a90e-2b1f7e6d5c4a';
const ROUTER_404 = { detail: 'Not Found' };

const t = useTestServer();

const call = (method: string, path: string) => t.s.api(path, { method, ...(method === 'GET' || method === 'DELETE' ? {} : { body: {} }) });

describe('the agent-server API surface of the OpenHands client schema', () => {
  it('reads the schema (a sanity check on the parser)', () => {
    expect(ROUTES.length).toBeGreaterThan(100);
    expect(ROUTES).toContainEqual(['POST', '/api/conversations/{conversation_id}/fork']);
    expect(ROUTES).toContainEqual(['GET', '/api/tools/']);
  });

  it('routes every operation: built, or 501 with a message; none falls through to 404', async () => {
    const id = (await t.s.api('/api/conversations', { method: 'POST', body: startRequest(join(t.dir.path, 'w')) })).body.id;
    const unrouted: string[] = [];
    const notBuilt: string[] = [];
    // Deleting the conversation last keeps it alive for every other route.
    const ordered = [...ROUTES].sort(([m]) => (m === 'DELETE' ? 1 : -1));
    for (const [method, path] of ordered) {
      const r = await call(method, path.replace('{conversation_id}', id).replace(/\{\w+\}/g, 'x'));
      if (r.status === 404 && JSON.stringify(r.body) === JSON.stringify(ROUTER_404)) unrouted.push(`${method} ${path}`);
      if (r.status === 501) {
        expect(r.body.detail, `${method} ${path}`).toMatch(/^\S.{15,}/);
        notBuilt.push(`${method} ${path}`);
      }
    }
    expect(unrouted).toEqual([]);
    // Built since the first surface: no longer 501 (a 501 from the route itself, for a kind not built, needs a body naming it).
    for (const p of BUILT_LATER) expect(notBuilt).not.toContain(p);
  });

  it('answers 422 at path.conversation_id for a non-UUID on every conversation route; an unknown UUID keeps its answer', async () => {
    const routes = ROUTES.filter(([, p]) => p.includes('{conversation_id}'));
    expect(routes.length).toBeGreaterThan(25);
    for (const [method, path] of routes) {
      const r = await call(method, path.replace('{conversation_id}', 'not-a-uuid').replace(/\{\w+\}/g, 'x'));
      expect({ route: `${method} ${path}`, status: r.status, detail: r.body.detail }).toEqual({
        route: `${method} ${path}`,
        status: 422,
        detail: [{ loc: ['path', 'conversation_id'], msg: 'Input should be a valid UUID', type: 'uuid_parsing' }],
      });
    }
    // The batch event read (a GET with a JSON body) checks the id before the body.
    expect((await t.s.api('/api/conversations/nope/events', { body: ['a'] })).status).toBe(422);
    // A well-formed but unknown id: 404 as before (PATCH keeps OpenHands' 200 success:false).
    for (const [method, path] of [['GET', ''], ['POST', '/run'], ['POST', '/pause'], ['POST', '/interrupt'], ['POST', '/fork'], ['GET', '/events/search'], ['GET', '/events/count'], ['DELETE', '']] as const) {
      expect((await call(method, `/api/conversations/${UNKNOWN}${path}`)).status, `${method} ${path}`).toBe(404);
    }
    expect((await t.s.api(`/api/conversations/${UNKNOWN}/events`, { body: ['a'] })).status).toBe(404);
    expect((await t.s.api(`/api/conversations/${UNKNOWN}`, { method: 'PATCH', body: { title: 't' } })).body).toEqual({ success: false });
    // Both UUID spellings name the same conversation.
    const id: string = (await t.s.api('/api/conversations', { method: 'POST', body: startRequest(join(t.dir.path, 'w')) })).body.id;
    expect((await t.s.api(`/api/conversations/${id.replaceAll('-', '')}`)).body.id).toBe(id);
  });

  it('answers 422 at query.path when a file or git route gets no path', async () => {
    for (const path of ['/api/file/download', '/api/git/changes', '/api/git/diff', '/api/git/diff?ref=HEAD', '/api/file/search_subdirs', '/api/git/commits', '/api/git/commits/abcd/changes']) {
      expect(await t.s.api(path), path).toEqual({ status: 422, body: { detail: [{ loc: ['query', 'path'], msg: 'Field required', type: 'missing' }] } });
    }
    expect((await t.s.api('/api/file/create_directory', { method: 'POST' })).body.detail[0].loc).toEqual(['query', 'path']);
    expect((await t.s.api('/api/file/download?path=')).body.detail[0].loc).toEqual(['query', 'path']);
    // A relative path is a 400, as in OpenHands.
    expect((await t.s.api('/api/git/changes?path=relative')).status).toBe(400);
    expect((await t.s.api('/api/git/commits?path=relative')).status).toBe(400);
  });
});
