import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { join } from 'node:path';
import { createAgent } from '../../agent/agent.ts';
import { eventually, startRequest, startTestServer, tempDir, useRealAgentServer, userText, type TestServer } from '../test-support.ts';

describe('fork', () => {
  let dir: ReturnType<typeof tempDir>;
  let s: TestServer;
  let src: string;

  beforeEach(async () => {
    dir = tempDir();
    s = await startTestServer(dir.path);
    const body = startRequest(join(dir.path, 'w'), { initial_message: userText('first'), tags: { team: 'a' }, secrets: { TOKEN: { kind: 'StaticSecret', value: 'tok_secret' } } });
    src = (await s.api('/api/conversations', { method: 'POST', body })).body.id;
    await eventually(async () => (await s.api(`/api/conversations/${src}`)).body.execution_status === 'finished');
  });
  afterEach(async () => {
    await s.close();
    dir.remove();
  });

  const ids = async (id: string) => (await s.api(`/api/conversations/${id}/events/search`)).body.items.map((e: any) => e.id) as string[];

  it('refuses a fork request naming an agent (422 at body.agent): a fork keeps the source agent', async () => {
    const res = await s.api(`/api/conversations/${src}/fork`, { method: 'POST', body: { agent: { kind: 'Agent', llm: { model: 'other/model' } } } });
    expect(res.status).toBe(422);
    expect(res.body.detail.map((d: any) => d.loc)).toEqual([['body', 'agent']]);
    const list = (await s.api('/api/conversations/search')).body.items;
    expect(list).toHaveLength(1);
  });

  it('copies the events with their ids, starts idle, takes tags only from the request, leaves the source alone', async () => {
    const before = await ids(src);
    const res = await s.api(`/api/conversations/${src}/fork`, { method: 'POST', body: { title: 'Branch', tags: { exp: '1' } } });
    expect(res.status).toBe(201);
    const fork = res.body;
    expect(fork).toMatchObject({ execution_status: 'idle', title: 'Branch', tags: { exp: '1', title: 'Branch' }, forked_from_conversation_id: src });
    expect(fork.id).not.toBe(src);
    expect(await ids(fork.id)).toEqual(before);
    expect(fork.workspace.working_dir).toBe(join(dir.path, 'w'));

    await s.api(`/api/conversations/${fork.id}/events`, { method: 'POST', body: userText('on the fork', true) });
    await eventually(async () => (await s.api(`/api/conversations/${fork.id}`)).body.execution_status === 'finished');
    expect(await ids(src)).toEqual(before);
    // The fork's agent has the source's memory, its secrets and its model.
    const forkHost = s.agents.hosts.find((h) => h.conversationId === fork.id)!;
    expect(forkHost.events().slice(0, before.length).map((e) => e.id)).toEqual(before);
    expect(forkHost.secrets).toEqual({ TOKEN: 'tok_secret' });
    expect(forkHost.llm?.model).toBe('test/model');
  });

  it('forks at an event, with a chosen id; 409 on a taken id, 404 on unknown source or event', async () => {
    const all = await ids(src);
    const id = '11111111-2222-4333-8444-555555555555';
    const res = await s.api(`/api/conversations/${src}/fork`, { method: 'POST', body: { id, from_event_id: all[0] } });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ id, forked_from_event_id: all[0] });
    expect(await ids(id)).toEqual([all[0]]);
    expect((await s.api(`/api/conversations/${src}/fork`, { method: 'POST', body: { id } })).status).toBe(409);
    expect((await s.api(`/api/conversations/${src}/fork`, { method: 'POST', body: { from_event_id: 'nope' } })).status).toBe(404);
    expect((await s.api(`/api/conversations/${id.replace('1', '9')}/fork`, { method: 'POST' })).status).toBe(404);
  });
});

describe('fork metrics with the real agent', () => {
  const t = useRealAgentServer({ createAgent });

  const info = async (id: string) => (await t.s.api(`/api/conversations/${id}`)).body;
  const agentMetrics = async (id: string) => (await info(id)).stats.usage_to_metrics.default;
  const finished = (id: string) => eventually(async () => (await info(id)).execution_status === 'finished', 15_000);
  const say = async (id: string, text: string) => {
    await t.s.api(`/api/conversations/${id}/events`, { method: 'POST', body: userText(text, true) });
    await finished(id);
  };
  const lastStatsEvent = async (id: string) => (await t.s.api(`/api/conversations/${id}/events/search?kind=ConversationStateUpdateEvent&sort_order=TIMESTAMP_DESC`)).body.items.find((e: any) => e.key === 'stats');

  async function source(): Promise<{ id: string; before: unknown }> {
    const body = startRequest(join(t.dir.path, 'w'), { agent: { llm: { model: 'openai/scripted' } } });
    const id = (await t.s.api('/api/conversations', { method: 'POST', body })).body.id;
    t.llm.push({ content: 'first answer', usage: { prompt_tokens: 100, completion_tokens: 40, cost: 0.5 } });
    await say(id, 'first');
    t.llm.push({ content: 'second answer', usage: { prompt_tokens: 200, completion_tokens: 60, cost: 0.25 } });
    await say(id, 'second');
    const before = (await info(id)).stats;
    expect(before.usage_to_metrics.default).toMatchObject({ accumulated_cost: 0.75, accumulated_token_usage: { prompt_tokens: 300, completion_tokens: 100 } });
    return { id, before };
  }

  it('copies the agent state and the activated skills: a skill that fired before the fork point does not fire again on the fork; one after it can', async () => {
    const skill = { name: 'banana', content: 'Bananas are berries.', trigger: { type: 'keyword', keywords: ['banana'] } };
    const body = startRequest(join(t.dir.path, 'w'), { agent: { llm: { model: 'openai/scripted' }, agent_context: { skills: [skill] } } });
    const id = (await t.s.api('/api/conversations', { method: 'POST', body })).body.id;
    t.llm.push({ content: 'noted' });
    await say(id, 'hello');
    t.llm.push({ content: 'yes' });
    await say(id, 'tell me about banana');
    const src = await info(id);
    expect(src.activated_knowledge_skills).toEqual(['banana']);
    const userMessages = (await t.s.api(`/api/conversations/${id}/events/search?kind=MessageEvent&source=user`)).body.items;

    const fork = (await t.s.api(`/api/conversations/${id}/fork`, { method: 'POST', body: {} })).body;
    expect([fork.activated_knowledge_skills, fork.agent_state]).toEqual([['banana'], src.agent_state]);
    t.llm.push({ content: 'again' });
    await say(fork.id, 'banana once more');
    const forkUser = (await t.s.api(`/api/conversations/${fork.id}/events/search?kind=MessageEvent&source=user`)).body.items.at(-1);
    expect(forkUser.activated_skills).toEqual([]);
    expect(JSON.stringify(t.llm.requests.at(-1)?.messages.at(-1))).not.toContain('Bananas are berries.');

    // Forked before the skill fired: nothing activated, and the fork's own mention activates it.
    const early = (await t.s.api(`/api/conversations/${id}/fork`, { method: 'POST', body: { from_event_id: userMessages[0].id } })).body;
    expect(early.activated_knowledge_skills).toEqual([]);
    t.llm.push({ content: 'first time here' });
    await say(early.id, 'banana please');
    expect((await info(early.id)).activated_knowledge_skills).toEqual(['banana']);
    expect(JSON.stringify(t.llm.requests.at(-1)?.messages)).toContain('Bananas are berries.');
  });

  it('reset_metrics (the default): the fork starts from zero and counts only its own calls; the source keeps its totals', async () => {
    const src = await source();
    const fork = (await t.s.api(`/api/conversations/${src.id}/fork`, { method: 'POST', body: {} })).body;
    expect(fork.stats).toEqual({ usage_to_metrics: {} });
    t.llm.push({ content: 'fork answer', usage: { prompt_tokens: 7, completion_tokens: 3, cost: 0.01 } });
    await say(fork.id, 'on the fork');
    expect(await agentMetrics(fork.id)).toMatchObject({ accumulated_cost: 0.01, accumulated_token_usage: { prompt_tokens: 7, completion_tokens: 3, per_turn_token: 10 } });
    // The fork's latest stats update (what a client replaying events sees) says the same.
    expect((await lastStatsEvent(fork.id)).value.usage_to_metrics.default).toMatchObject({ accumulated_cost: 0.01, accumulated_token_usage: { prompt_tokens: 7 } });
    expect((await info(src.id)).stats).toEqual(src.before);
  });

  it('reset_metrics false: the fork carries the source totals on (also when forked at an earlier event)', async () => {
    const src = await source();
    const firstReply = (await t.s.api(`/api/conversations/${src.id}/events/search?kind=MessageEvent&source=agent`)).body.items[0];
    const fork = (await t.s.api(`/api/conversations/${src.id}/fork`, { method: 'POST', body: { reset_metrics: false, from_event_id: firstReply.id } })).body;
    expect(fork.stats).toEqual(src.before);
    t.llm.push({ content: 'fork answer', usage: { prompt_tokens: 7, completion_tokens: 3, cost: 0.01 } });
    await say(fork.id, 'on the fork');
    const m = await agentMetrics(fork.id);
    expect(m.accumulated_cost).toBeCloseTo(0.76, 10);
    expect(m.accumulated_token_usage).toMatchObject({ prompt_tokens: 307, completion_tokens: 103 });
    expect((await info(src.id)).stats).toEqual(src.before);
  });
});
