// POST /api/conversations/{id}/navigate (OpenHands 1.58 navigate_to): HEAD moves to an event, the
// next events form a sibling branch, and the model reads only the active branch; HEAD survives a
// restart; an unknown event is 404; event_id null empties HEAD (the next event is a new root).
import { describe, expect, it } from 'vitest';
import { createAgent } from '../agent/agent.ts';
import type { RecordedRequest } from '../testing/scripted-llm/server.ts';
import { eventually, FrameCollector, TEST_KEY, userText, useRealAgentServer } from './test-support.ts';

const t = useRealAgentServer({ createAgent });

const texts = (r: RecordedRequest) => r.messages.filter((m) => m.role === 'user').map((m) => JSON.stringify(m.content));
const events = async (id: string) => (await t.s.api(`/api/conversations/${id}/events/search?limit=100`)).body.items as any[];
const finished = (id: string) => eventually(async () => (await t.s.api(`/api/conversations/${id}`)).body.execution_status === 'finished', 15_000);

async function say(id: string, text: string, answer: string) {
  t.llm.push({ content: answer });
  await t.s.api(`/api/conversations/${id}/events`, { method: 'POST', body: userText(text, true) });
  await eventually(async () => (await events(id)).some((e) => e.kind === 'MessageEvent' && e.source === 'agent' && JSON.stringify(e.llm_message.content).includes(answer)), 15_000);
  await finished(id);
}

describe('navigate', () => {
  it('moves HEAD; the next message branches there and the model reads that branch only; kept across a restart', async () => {
    const body = { workspace: { kind: 'LocalWorkspace', working_dir: t.dir.path }, agent: { llm: { model: 'openai/scripted' }, tools: [] } };
    const id = (await t.s.api('/api/conversations', { method: 'POST', body })).body.id;
    await say(id, 'first question', 'first answer');
    const firstAnswer = (await events(id)).find((e) => e.kind === 'MessageEvent' && e.source === 'agent');
    await say(id, 'second question', 'second answer');

    const moved = await t.s.api(`/api/conversations/${id}/navigate`, { method: 'POST', body: { event_id: firstAnswer.id } });
    expect(moved.status).toBe(200);
    expect(moved.body.leaf_event_id).toBe(firstAnswer.id);
    // A record like the others: skills trimmed unless include_skills=true.
    expect(moved.body.agent.agent_context?.skills ?? []).toEqual([]);

    // Across a restart, HEAD stays where navigate put it.
    await t.restart();
    expect((await t.s.api(`/api/conversations/${id}`)).body.leaf_event_id).toBe(firstAnswer.id);

    const before = t.llm.requests.length;
    await say(id, 'another second question', 'another answer');
    const all = await events(id);
    const branched = all.find((e) => e.kind === 'MessageEvent' && JSON.stringify(e.llm_message.content).includes('another second question'));
    expect(branched.parent_id).toBe(firstAnswer.id);
    // The abandoned branch stays in the log, but the model was not sent it.
    expect(all.some((e) => JSON.stringify(e).includes('second answer'))).toBe(true);
    const sent = texts(t.llm.requests[before]!);
    expect(sent.some((t) => t.includes('first question'))).toBe(true);
    expect(sent.some((t) => t.includes('another second question'))).toBe(true);
    expect(sent.some((t) => t.includes('"second question'))).toBe(false);
    expect(JSON.stringify(t.llm.requests[before]!.messages)).not.toContain('second answer');
    // The final response is the active branch's.
    expect((await t.s.api(`/api/conversations/${id}/agent_final_response`)).body.response).toBe('another answer');
  }, 40_000);

  it('404 for an unknown event or conversation, 422 for a bad body; event_id null empties HEAD and the next event is a new root', async () => {
    const body = { workspace: { kind: 'LocalWorkspace', working_dir: t.dir.path }, agent: { llm: { model: 'openai/scripted' }, tools: [] } };
    const id = (await t.s.api('/api/conversations', { method: 'POST', body })).body.id;
    await say(id, 'hello', 'hi');
    const unknown = await t.s.api(`/api/conversations/${id}/navigate`, { method: 'POST', body: { event_id: 'not-an-event' } });
    expect(unknown.status).toBe(404);
    expect(JSON.stringify(unknown.body)).toContain('not-an-event');
    expect((await t.s.api(`/api/conversations/00000000-0000-4000-8000-000000000000/navigate`, { method: 'POST', body: {} })).status).toBe(404);
    const bad = await t.s.api(`/api/conversations/${id}/navigate`, { method: 'POST', body: { event_id: 7 } });
    expect(bad.status).toBe(422);
    expect(JSON.stringify(bad.body)).toContain('event_id');

    const emptied = await t.s.api(`/api/conversations/${id}/navigate`, { method: 'POST', body: { event_id: null } });
    expect(emptied.body.leaf_event_id).toBeNull();
    const ws = new FrameCollector(`${t.s.url.replace('http', 'ws')}/sockets/events/${id}`, { 'x-session-api-key': TEST_KEY });
    const frames = await ws.until((f) => f.some((e) => e.key === 'full_state'));
    expect(frames.find((e) => e.key === 'full_state').value).toMatchObject({ head_is_empty: true, leaf_event_id: null });
    await ws.close();

    const before = t.llm.requests.length;
    await say(id, 'fresh start', 'fresh answer');
    const all = await events(id);
    const roots = all.filter((e) => e.kind !== 'ConversationStateUpdateEvent' && (e.parent_id == null || e.parent_id === '__root__'));
    expect(roots.length).toBe(2);
    expect(roots[1].parent_id).toBe('__root__');
    expect(JSON.stringify(t.llm.requests[before]!.messages)).not.toContain('hello');
  }, 40_000);
});
