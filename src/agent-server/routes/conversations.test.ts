import { describe, expect, it } from 'vitest';
import { join } from 'node:path';
import { startRequest, startTestServer, useTestServer } from '../test-support.ts';

const t = useTestServer();

const ID = '0f8e1c2a-9b7d-4c55-a90e-2b1f7e6d5c4a';

describe('health and auth', () => {
  it('serves health routes without a key', async () => {
    expect(await t.s.api('/alive', { key: null })).toEqual({ status: 200, body: { status: 'ok' } });
    // Disk figures are of this machine; the storage status is the server's own.
    expect(await t.s.api('/health', { key: null })).toMatchObject({ status: 200, body: { storage: { status: 'ok' }, disk: { free_bytes: expect.any(Number), low: expect.any(Boolean) } } });
    expect(await t.s.api('/ready', { key: null })).toEqual({ status: 200, body: { status: 'ready' } });
    const info = await t.s.api('/server_info', { key: null });
    expect(info.body).toMatchObject({ version: '1.58.2' });
    expect(info.body.uptime).toBeGreaterThanOrEqual(0);
    expect(info.body.idle_time).toBeGreaterThanOrEqual(0);
  });

  it('requires the session key on /api when keys are configured', async () => {
    expect(await t.s.api('/api/conversations/count', { key: null })).toEqual({ status: 401, body: { detail: 'Unauthorized' } });
    expect(await t.s.api('/api/conversations/count', { key: 'wrong' })).toEqual({ status: 401, body: { detail: 'Unauthorized' } });
    expect(await t.s.api('/api/conversations/count')).toEqual({ status: 200, body: 0 });
  });

  it('runs without authentication when no keys are configured', async () => {
    const open = await startTestServer(join(t.dir.path, 'open'), { sessionKeys: [] });
    try {
      expect((await open.api('/api/conversations/count', { key: null })).status).toBe(200);
    } finally {
      await open.close();
    }
  });
});

describe('conversations', () => {
  it('creates idempotently by conversation_id: 201 then 200 with the same conversation', async () => {
    const wd = join(t.dir.path, 'ws1');
    const first = await t.s.api('/api/conversations', { method: 'POST', body: startRequest(wd, { conversation_id: ID }) });
    expect(first.status).toBe(201);
    expect(first.body).toMatchObject({ id: ID, execution_status: 'idle', workspace: { working_dir: wd }, agent: { kind: 'Agent', llm: { model: 'test/model' } } });
    // The conversation's own directory (its files: recordings, the trajectory), as OpenHands reports it.
    expect(first.body.persistence_dir).toBe(join(t.dir.path, 'data', 'conversations', ID));
    const again = await t.s.api('/api/conversations', { method: 'POST', body: startRequest(wd, { conversation_id: ID.replaceAll('-', '') }) });
    expect(again.status).toBe(200);
    expect(again.body.id).toBe(ID);
    expect(again.body.created_at).toBe(first.body.created_at);
    expect((await t.s.api('/api/conversations/count')).body).toBe(1);
  });

  it('masks the LLM key and secrets in every response', async () => {
    const res = await t.s.api('/api/conversations', {
      method: 'POST',
      body: startRequest(join(t.dir.path, 'w'), { agent: { llm: { model: 'm', api_key: 'sk-live-123' } }, secrets: { GITHUB_TOKEN: { kind: 'StaticSecret', value: 'ghp_abcdef' } } }),
    });
    expect(res.status).toBe(201);
    const text = JSON.stringify(res.body) + JSON.stringify((await t.s.api(`/api/conversations/${res.body.id}`)).body);
    expect(text).not.toContain('sk-live-123');
    expect(text).not.toContain('ghp_abcdef');
    expect(res.body.agent.llm.api_key).toBe('**********');
    expect(res.body.secret_registry.secret_sources.GITHUB_TOKEN.value).toBe('**********');
  });

  it('gets by id (404), batch-gets aligned with null for unknown ids', async () => {
    const a = (await t.s.api('/api/conversations', { method: 'POST', body: startRequest(join(t.dir.path, 'a')) })).body;
    expect((await t.s.api(`/api/conversations/${a.id}`)).body.id).toBe(a.id);
    expect(await t.s.api(`/api/conversations/${ID}`)).toEqual({ status: 404, body: { detail: `Conversation not found: ${ID}` } });
    const batch = await t.s.api(`/api/conversations?ids=${ID}&ids=${a.id}&ids=${a.id.replaceAll('-', '')}`);
    expect(batch.status).toBe(200);
    expect(batch.body.map((c: any) => c?.id ?? null)).toEqual([null, a.id, a.id]);
    // Ids are UUIDs (dashed or 32 hex digits), as OpenHands types them: anything else is a 422 naming the position.
    expect(await t.s.api(`/api/conversations?ids=${ID}&ids=not-a-uuid`)).toEqual({ status: 422, body: { detail: [{ loc: ['query', 'ids', 1], msg: 'Input should be a valid UUID', type: 'uuid_parsing' }] } });
    const one = await t.s.api(`/api/conversations?ids=${a.id}`);
    expect(one.body.map((c: any) => c.id)).toEqual([a.id]);
  });

  it('pages search results with a stable cursor, filters by status, counts', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push((await t.s.api('/api/conversations', { method: 'POST', body: startRequest(join(t.dir.path, `c${i}`)) })).body.id);
    const seen: string[] = [];
    let page = await t.s.api('/api/conversations/search?limit=2&sort_order=CREATED_AT');
    for (;;) {
      seen.push(...page.body.items.map((c: any) => c.id));
      if (!page.body.next_page_id) break;
      page = await t.s.api(`/api/conversations/search?limit=2&sort_order=CREATED_AT&page_id=${page.body.next_page_id}`);
    }
    expect(seen).toEqual(ids);
    const desc = await t.s.api('/api/conversations/search');
    expect(desc.body.items.map((c: any) => c.id)).toEqual([...ids].reverse());
    expect((await t.s.api('/api/conversations/count?status=idle')).body).toBe(5);
    expect((await t.s.api('/api/conversations/count?status=running')).body).toBe(0);
    expect((await t.s.api('/api/conversations/search?status=finished')).body).toEqual({ items: [], next_page_id: null });
  });

  it('patches title and tags; unknown id gives success:false', async () => {
    const c = (await t.s.api('/api/conversations', { method: 'POST', body: startRequest(join(t.dir.path, 'p'), { tags: { a: '1' } }) })).body;
    expect((await t.s.api(`/api/conversations/${c.id}`, { method: 'PATCH', body: { title: 'New', tags: { b: '2' } } })).body).toEqual({ success: true });
    expect((await t.s.api(`/api/conversations/${c.id}`)).body).toMatchObject({ title: 'New', tags: { b: '2' } });
    expect((await t.s.api(`/api/conversations/${ID}`, { method: 'PATCH', body: { title: 'x' } })).body).toEqual({ success: false });
  });

  it('deletes: gone from reads, repeat delete succeeds, unknown is 404', async () => {
    const c = (await t.s.api('/api/conversations', { method: 'POST', body: startRequest(join(t.dir.path, 'd')) })).body;
    expect((await t.s.api(`/api/conversations/${c.id}`, { method: 'DELETE' })).body).toEqual({ success: true });
    expect((await t.s.api(`/api/conversations/${c.id}`)).status).toBe(404);
    expect((await t.s.api(`/api/conversations/${c.id}`, { method: 'DELETE' })).status).toBe(200);
    expect((await t.s.api(`/api/conversations/${ID}`, { method: 'DELETE' })).status).toBe(404);
  });
});

describe('errors', () => {
  it('answers 422 in the HTTPValidationError shape', async () => {
    const missing = await t.s.api('/api/conversations', { method: 'POST', body: { agent: { llm: { model: 'm' } } } });
    expect(missing.status).toBe(422);
    expect(missing.body.detail).toContainEqual({ loc: ['body', 'workspace'], msg: 'Field required', type: 'missing' });
    const badJson = await t.s.api('/api/conversations', { method: 'POST', rawBody: '{"workspace":' });
    expect(badJson).toEqual({ status: 422, body: { detail: [{ loc: ['body'], msg: 'JSON decode error', type: 'json_invalid' }] } });
    const badLimit = await t.s.api('/api/conversations/search?limit=500');
    expect(badLimit.status).toBe(422);
    expect(badLimit.body.detail[0].loc).toEqual(['query', 'limit']);
    const badPage = await t.s.api('/api/conversations/search?page_id=nope');
    expect(badPage.body.detail[0].loc).toEqual(['query', 'page_id']);
  });

  it('answers 501 with a message for parts not built yet, 404 JSON for unknown paths', async () => {
    const c = (await t.s.api('/api/conversations', { method: 'POST', body: startRequest(join(t.dir.path, 'n')) })).body;
    // An agent without condense() or ask() (the fake one here) cannot honour POST /condense or /ask_agent: 501, nothing recorded.
    const condense = await t.s.api(`/api/conversations/${c.id}/condense`, { method: 'POST' });
    expect(condense.status).toBe(501);
    const ask = await t.s.api(`/api/conversations/${c.id}/ask_agent`, { method: 'POST', body: { question: 'q' } });
    expect(ask.status).toBe(501);
    expect(ask.body.detail).toMatch(/cannot answer side questions/);
    expect((await t.s.api(`/api/conversations/${c.id}/events/count`)).body).toBe(0);
    expect(await t.s.api('/api/nothing-here')).toEqual({ status: 404, body: { detail: 'Not Found' } });
  });

  it('agent_settings (1.58) is validated like 1.58: without its llm, a 422 located at the field', async () => {
    // agent_settings is built (conversation/agent-settings.ts); its routing fields, meta_profile_llms included, are tested in route-task.test.ts.
    const settings = await t.s.api('/api/conversations', { method: 'POST', body: { workspace: { working_dir: join(t.dir.path, 'x') }, agent_settings: {} } });
    expect(settings.status).toBe(422);
    expect(settings.body.detail[0].loc).toEqual(['body', 'agent_settings', 'llm']);
  });
});

describe('include_skills (1.58)', () => {
  it('records carry agent_context.skills as [] unless include_skills=true; the conversation keeps them; a bad value is a 422', async () => {
    const skill = { name: 'house', content: 'Use tabs.', trigger: null };
    const body = startRequest(join(t.dir.path, 'w'), { agent: { llm: { model: 'test/model' }, agent_context: { skills: [skill] } } });
    const created = await t.s.api('/api/conversations', { method: 'POST', body });
    expect(created.status).toBe(201);
    const id = created.body.id as string;
    const skillsOf = (rec: any) => rec.agent.agent_context.skills.map((k: any) => k.name);
    expect(skillsOf(created.body)).toEqual([]);
    expect(skillsOf((await t.s.api(`/api/conversations/${id}`)).body)).toEqual([]);
    expect(skillsOf((await t.s.api(`/api/conversations/${id}?include_skills=true`)).body)).toEqual(['house']);
    expect((await t.s.api(`/api/conversations/search`)).body.items.map(skillsOf)).toEqual([[]]);
    expect((await t.s.api(`/api/conversations/search?include_skills=1`)).body.items.map(skillsOf)).toEqual([['house']]);
    expect((await t.s.api(`/api/conversations?ids=${id}`)).body.map(skillsOf)).toEqual([[]]);
    expect((await t.s.api(`/api/conversations?ids=${id}&include_skills=true`)).body.map(skillsOf)).toEqual([['house']]);
    const fork = await t.s.api(`/api/conversations/${id}/fork?include_skills=true`, { method: 'POST', body: {} });
    expect(skillsOf(fork.body)).toEqual(['house']);
    const bad = await t.s.api(`/api/conversations/${id}?include_skills=maybe`);
    expect(bad.status).toBe(422);
    expect(bad.body.detail[0].loc).toEqual(['query', 'include_skills']);
  });
});
