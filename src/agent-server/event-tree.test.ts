// OpenHands 1.58's conversation tree, as a client reads it: every event names its parent (the HEAD
// when it was appended; state updates are no nodes and do not move HEAD), ConversationInfo carries
// leaf_event_id (HEAD) and head_is_empty, and activated_path_rules lists the path rules fired —
// kept across a restart of the agent server and copied by a fork.
import { describe, expect, it } from 'vitest';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createAgent } from '../agent/agent.ts';
import { eventually, FrameCollector, TEST_KEY, userText, useRealAgentServer } from './test-support.ts';

const t = useRealAgentServer({ createAgent });

const isUpdate = (e: any) => e.kind === 'ConversationStateUpdateEvent';

/** The full_state snapshot a new events-socket client gets first. */
async function fullState(id: string): Promise<any> {
  const ws = new FrameCollector(`${t.s.url.replace('http', 'ws')}/sockets/events/${id}`, { 'x-session-api-key': TEST_KEY });
  const frames = await ws.until((f) => f.some((e) => isUpdate(e) && e.key === 'full_state'));
  await ws.close();
  return frames.find((e) => isUpdate(e) && e.key === 'full_state').value;
}

describe('the event tree of a conversation', () => {
  it('parent_id of each event is the last non-update event before it; leaf_event_id is the HEAD; path rules fired are listed, across a restart and in a fork', async () => {
    const wd = join(t.dir.path, 'project');
    mkdirSync(join(wd, 'server'), { recursive: true });
    writeFileSync(join(wd, 'server', 'AGENTS.md'), 'Server rules: run the linter.');
    writeFileSync(join(wd, 'server', 'app.txt'), 'hello');
    t.llm.push(
      { toolCalls: [{ name: 'file_editor', arguments: { command: 'view', path: join(wd, 'server', 'app.txt') } }] },
      { toolCalls: [{ name: 'finish', arguments: { message: 'viewed' } }] },
    );
    const body = { workspace: { kind: 'LocalWorkspace', working_dir: wd }, agent: { llm: { model: 'openai/scripted' }, tools: [{ name: 'file_editor' }], agent_context: { load_project_skills: true } } };
    const id = (await t.s.api('/api/conversations', { method: 'POST', body })).body.id;
    const ws = new FrameCollector(`${t.s.url.replace('http', 'ws')}/sockets/events/${id}`, { 'x-session-api-key': TEST_KEY });
    await ws.until(1);
    await t.s.api(`/api/conversations/${id}/events`, { method: 'POST', body: userText('look at the server app', true) });
    await eventually(async () => (await t.s.api(`/api/conversations/${id}`)).body.execution_status === 'finished', 15_000);
    const items = (await t.s.api(`/api/conversations/${id}/events/search?limit=100`)).body.items as any[];

    // The first event is the root; every other event's parent is the last non-update event before it.
    expect(items[0].parent_id).toBeUndefined();
    let head: string | undefined = items[0].kind === 'ConversationStateUpdateEvent' ? undefined : items[0].id;
    for (const e of items.slice(1)) {
      expect(e.parent_id, `${e.kind} ${e.key ?? ''}`).toBe(head);
      if (!isUpdate(e)) head = e.id;
    }
    expect(items.filter((e) => !isUpdate(e)).map((e) => e.kind)).toEqual(['SystemPromptEvent', 'MessageEvent', 'ActionEvent', 'ObservationEvent', 'ActionEvent', 'ObservationEvent']);
    // The WebSocket frames carry the same parents.
    await ws.until((f) => f.filter((e) => e.kind === 'ObservationEvent').length === 2);
    const framed = new Map(ws.frames.filter((e) => e.id).map((e) => [e.id, e.parent_id]));
    for (const e of items) expect(framed.get(e.id)).toBe(e.parent_id);
    await ws.close();

    const observation = items.find((e) => e.kind === 'ObservationEvent');
    expect(JSON.stringify(observation.extended_content)).toContain('Server rules: run the linter.');
    const info = (await t.s.api(`/api/conversations/${id}`)).body;
    expect(info.leaf_event_id).toBe(head);
    // As 1.58: activated_path_rules and head_is_empty are in the full_state snapshot, not in REST answers.
    expect(info).not.toHaveProperty('activated_path_rules');
    expect(await fullState(id)).toMatchObject({ leaf_event_id: head, head_is_empty: false, activated_path_rules: ['agents:server'] });
    expect(items.filter((e) => isUpdate(e) && e.key === 'activated_path_rules').map((e) => e.value)).toEqual([['agents:server']]);

    // A restart of the agent server: HEAD and the fired rules are read back from the events.
    await t.restart();
    expect((await t.s.api(`/api/conversations/${id}`)).body.leaf_event_id).toBe(head);
    expect(await fullState(id)).toMatchObject({ leaf_event_id: head, activated_path_rules: ['agents:server'] });

    // A fork keeps the tree (ids and parents) and the rules; its own next event hangs below the copied HEAD.
    const fork = (await t.s.api(`/api/conversations/${id}/fork`, { method: 'POST', body: {} })).body;
    expect(fork.leaf_event_id).toBe(head);
    expect(await fullState(fork.id)).toMatchObject({ activated_path_rules: ['agents:server'] });
    await t.s.api(`/api/conversations/${fork.id}/events`, { method: 'POST', body: userText('and now?', false) });
    const forked = (await t.s.api(`/api/conversations/${fork.id}/events/search?limit=100`)).body.items as any[];
    const message = forked.findLast((e) => e.kind === 'MessageEvent');
    expect(message.parent_id).toBe(head);
    expect((await t.s.api(`/api/conversations/${fork.id}`)).body.leaf_event_id).toBe(message.id);
    // The source did not move.
    expect((await t.s.api(`/api/conversations/${id}`)).body.leaf_event_id).toBe(head);
  }, 30_000);
});
