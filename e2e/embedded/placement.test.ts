// Placement end to end, over HTTP against `agentyard up` (real controller, real sandbox processes):
// a shared sandbox and what pause, resume, a message and delete do to every conversation on it;
// the five Sandbox Grouping Strategy values; an explicit sandbox_id and the starts it refuses.
// One `up` for the file; each part runs as its own user, so their sandboxes do not mix.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ScriptedLlm } from '../../src/testing/scripted-llm/server.ts';
import { createUser, noSecondUser, conversationRecords, conversationsRead, events, finished, sandboxReads, startReady, userMessage } from './flows.ts';
import { eventually, startServiceWithModel, type RunningService } from './harness.ts';

describe('agentyard up: placement of conversations on sandboxes', () => {
  let llm: ScriptedLlm;
  let svc: RunningService;
  let stop: (() => Promise<void>) | undefined;

  beforeAll(async () => {
    ({ llm, svc, stop } = await startServiceWithModel());
  });

  afterAll(async () => {
    await stop?.();
  });

  it.skipIf(noSecondUser)('a shared sandbox: pause, resume, a message while paused, and delete reach both conversations', async () => {
    const key = await createUser(svc, 'sharer');
    const saved = await svc.api('POST', '/api/v1/settings', { sandbox_grouping_strategy: 'ADD_TO_ANY' }, key);
    expect(saved).toMatchObject({ status: 200, body: { sandbox_grouping_strategy: 'ADD_TO_ANY' } });
    const a = await startReady(svc, { title: 'first' }, key);
    const b = await startReady(svc, { title: 'second' }, key);
    expect(b.sandbox_id).toBe(a.sandbox_id);
    const ids = [a.app_conversation_id, b.app_conversation_id];
    const sandbox = a.sandbox_id;

    expect((await svc.api('POST', `/api/v1/sandboxes/${sandbox}/pause`, undefined, key)).status).toBe(200);
    await conversationsRead(svc, ids, 'PAUSED', key);
    expect((await svc.api('POST', `/api/v1/sandboxes/${sandbox}/pause`, undefined, key)).status).toBe(200); // idempotent
    expect((await svc.api('POST', `/api/v1/sandboxes/${sandbox}/resume`, undefined, key)).status).toBe(200);
    await conversationsRead(svc, ids, 'RUNNING', key);

    // A message to one conversation of the paused sandbox is accepted, resumes it, and is delivered.
    expect((await svc.api('POST', `/api/v1/sandboxes/${sandbox}/pause`, undefined, key)).status).toBe(200);
    await sandboxReads(svc, sandbox, 'PAUSED', key);
    llm.push({ toolCalls: [{ name: 'finish', arguments: { message: 'answered after the resume' } }] });
    const sent = await svc.api<{ success: boolean; message: string | null }>('POST', `/api/v1/app-conversations/${b.app_conversation_id}/send-message`, userMessage('are you there?'), key);
    expect(sent.status).toBe(200);
    expect(sent.body.success).toBe(true);
    const transcript = await finished(svc, b.app_conversation_id, key);
    expect(JSON.stringify(transcript.filter((e) => e.kind === 'MessageEvent' && e.source === 'user'))).toContain('are you there?');
    expect(JSON.stringify(llm.requests.at(-1)!.messages)).toContain('are you there?');
    await conversationsRead(svc, ids, 'RUNNING', key);

    // Delete: both conversations read MISSING, stay readable, and refuse messages.
    const before = await events(svc, b.app_conversation_id, key);
    expect((await svc.api('DELETE', `/api/v1/sandboxes/${sandbox}`, undefined, key)).status).toBe(200);
    await conversationsRead(svc, ids, 'MISSING', key);
    expect(await events(svc, b.app_conversation_id, key)).toHaveLength(before.length);
    expect((await svc.api('GET', `/api/v1/conversation/${a.app_conversation_id}/events/search`, undefined, key)).status).toBe(200);
    for (const id of ids) {
      const refused = await svc.api<{ detail: string }>('POST', `/api/v1/app-conversations/${id}/send-message`, userMessage('still there?'), key);
      expect(refused.status).toBe(410);
      expect(refused.body.detail).toMatch(/MISSING/);
    }
  });

  it.skipIf(noSecondUser)('the five Sandbox Grouping Strategy values decide the sandbox of each new conversation', async () => {
    const key = await createUser(svc, 'grouper');
    const strategy = async (value: string) => expect((await svc.api('POST', '/api/v1/settings', { sandbox_grouping_strategy: value }, key)).status).toBe(200);
    const start = async () => (await startReady(svc, { initial_message: userMessage('not yet', false) }, key)).sandbox_id;
    const cycle = async (sandbox: string) => {
      expect((await svc.api('POST', `/api/v1/sandboxes/${sandbox}/pause`, undefined, key)).status).toBe(200);
      await sandboxReads(svc, sandbox, 'PAUSED', key);
      expect((await svc.api('POST', `/api/v1/sandboxes/${sandbox}/resume`, undefined, key)).status).toBe(200);
      await sandboxReads(svc, sandbox, 'RUNNING', key);
    };

    expect((await svc.api('GET', '/api/v1/settings', undefined, key)).body).toMatchObject({ sandbox_grouping_strategy: 'NO_GROUPING' });
    const s1 = await start();
    const s2 = await start();
    expect(s2).not.toBe(s1); // no grouping: a new sandbox each time
    await strategy('GROUP_BY_NEWEST');
    expect(await start()).toBe(s2); // conversations: s1 1, s2 2
    await strategy('FEWEST_CONVERSATIONS');
    expect(await start()).toBe(s1); // s1 2, s2 2
    await strategy('ADD_TO_ANY');
    expect(await start()).toBe(s1); // the first (oldest) available one; s1 3, s2 2
    await strategy('LEAST_RECENTLY_USED');
    await cycle(s1); // a resume opens a new session: s1 is now the more recently used
    expect(await start()).toBe(s2);
    await cycle(s2);
    expect(await start()).toBe(s1); // not the newest (s2), the least recently used
    const { body: all } = await svc.api<{ items: { id: string }[] }>('GET', '/api/v1/sandboxes/search', undefined, key);
    expect(all.items.map((s) => s.id).sort()).toEqual([s1, s2].sort());
  });

  it.skipIf(noSecondUser)('an explicit sandbox_id: a RUNNING sandbox takes the conversation; paused, unknown and foreign ones are refused', async () => {
    const key = await createUser(svc, 'explicit');
    const created = await svc.api<{ id: string; status: string }>('POST', '/api/v1/sandboxes', undefined, key);
    expect(created.status).toBe(200);
    const sandbox = created.body.id;
    const early = await svc.api<{ detail: string }>('POST', '/api/v1/app-conversations', { sandbox_id: sandbox }, key);
    if (early.status === 409) expect(early.body.detail).toMatch(/RUNNING/); // may already run on a fast machine
    await sandboxReads(svc, sandbox, 'RUNNING', key);
    const task = await startReady(svc, { sandbox_id: sandbox }, key);
    expect(task.sandbox_id).toBe(sandbox);
    expect((await conversationRecords(svc, [task.app_conversation_id], key))[0]).toMatchObject({ sandbox_id: sandbox, sandbox_status: 'RUNNING' });

    expect((await svc.api('POST', `/api/v1/sandboxes/${sandbox}/pause`, undefined, key)).status).toBe(200);
    const paused = await svc.api<{ detail: string }>('POST', '/api/v1/app-conversations', { sandbox_id: sandbox }, key);
    expect(paused.status).toBe(409);
    expect(paused.body.detail).toContain('RUNNING');

    const unknown = await svc.api<{ detail: string }>('POST', '/api/v1/app-conversations', { sandbox_id: 'f'.repeat(32) }, key);
    expect(unknown.status).toBe(404);
    expect(unknown.body.detail).toContain('not found');

    // Another user's sandbox is as unknown as a missing one (no existence leak), and stays untouched.
    const other = await svc.api<{ id: string }>('POST', '/api/v1/sandboxes');
    const foreign = await svc.api<{ detail: string }>('POST', '/api/v1/app-conversations', { sandbox_id: other.body.id }, key);
    expect(foreign.status).toBe(404);
    expect(foreign.body.detail).toBe(`Sandbox ${other.body.id} not found`);
    const { body: mine } = await svc.api<{ items: { id: string }[] }>('GET', '/api/v1/app-conversations/search', undefined, key);
    expect(mine.items).toHaveLength(1);
    await eventually(async () => ((await svc.api<{ status: string }[]>('GET', `/api/v1/sandboxes?id=${other.body.id}`)).body[0]?.status === 'RUNNING' ? true : undefined), 'the admin sandbox to run');
    expect((await svc.api('DELETE', `/api/v1/sandboxes/${other.body.id}`)).status).toBe(200);
  });
});
