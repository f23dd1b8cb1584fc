// /goal loops (OpenHands 1.58 POST /goal, /goal/stop, /goal/resume) through the real agent server
// with the scripted model: the objective runs, the judge (a tool-less call of the same model) audits
// each run, a followup names what is missing, until complete or capped; `goal` state updates say
// where it is; stop ends the loop (not the run) and resume continues it.
import { describe, expect, it } from 'vitest';
import { createAgent } from '../agent/agent.ts';
import { followupPrompt, RESUME_PROMPT } from './conversation/goal.ts';
import { GOAL_BUSY } from './conversation/runtime.ts';
import { eventually, userText, useRealAgentServer } from './test-support.ts';

const ctx = useRealAgentServer({ createAgent });
const finish = (message: string) => ({ toolCalls: [{ name: 'finish', arguments: { message } }] });
const verdict = (v: object) => ({ content: JSON.stringify(v) });

async function conversation(): Promise<string> {
  const body = { workspace: { kind: 'LocalWorkspace', working_dir: ctx.dir.path }, agent: { llm: { model: 'openai/scripted' }, tools: [] } };
  return (await ctx.s.api('/api/conversations', { method: 'POST', body })).body.id;
}
const events = async (id: string) => (await ctx.s.api(`/api/conversations/${id}/events/search?limit=100`)).body.items as any[];
const goals = async (id: string) => (await events(id)).filter((e) => e.kind === 'ConversationStateUpdateEvent' && e.key === 'goal').map((e) => e.value);
const userTexts = async (id: string) => (await events(id)).filter((e) => e.kind === 'MessageEvent' && e.source === 'user').map((e) => e.llm_message.content[0].text);
const settled = (id: string, status: string) => eventually(async () => (await goals(id)).at(-1)?.status === status, 15_000);

describe('/goal loops', () => {
  it('runs the objective, audits each run with the judge, follows up on what is missing, and stops when complete', async () => {
    const id = await conversation();
    ctx.llm.push(
      finish('first try'),
      (req) => {
        // The judge: the same model, no tools, the objective and the transcript without the system prompt.
        expect(req.tools ?? []).toEqual([]);
        expect(req.messages.map((m) => m.role)).toEqual(['system', 'user']);
        const payload = String(req.messages[1]!.content);
        expect(payload).toContain('<objective>\nmake the tests pass\n</objective>');
        expect(payload).toContain('user: make the tests pass');
        expect(payload).not.toContain('You are OpenHands agent');
        return verdict({ score: 0.4, complete: false, missing: 'the tests were not run' });
      },
      finish('ran them'),
      verdict({ score: 1, complete: true, missing: '' }),
    );
    const started = await ctx.s.api(`/api/conversations/${id}/goal`, { method: 'POST', body: { objective: 'make the tests pass', max_iterations: 3 } });
    expect(started).toMatchObject({ status: 200, body: { success: true } });
    await settled(id, 'complete');
    const base = { objective: 'make the tests pass', max_iterations: 3 };
    expect(await goals(id)).toEqual([
      { ...base, active: true, status: 'running', iteration: 0, verdict: null },
      { ...base, active: true, status: 'running', iteration: 1, verdict: { score: 0.4, complete: false, missing: 'the tests were not run' } },
      { ...base, active: false, status: 'complete', iteration: 2, verdict: { score: 1, complete: true, missing: '' } },
    ]);
    expect(await userTexts(id)).toEqual(['make the tests pass', followupPrompt(1, 'the tests were not run')]);
    await eventually(async () => (await ctx.s.api(`/api/conversations/${id}`)).body.execution_status === 'finished');
    // Nothing left to resume.
    expect(await ctx.s.api(`/api/conversations/${id}/goal/resume`, { method: 'POST', body: {} })).toMatchObject({ status: 400, body: { detail: 'no_resumable_goal' } });
  }, 30_000);

  it('refuses while a run goes on (409), an empty objective (400), a bad max_iterations (422), an unknown conversation (404)', async () => {
    const id = await conversation();
    expect(await ctx.s.api(`/api/conversations/${id}/goal/resume`, { method: 'POST', body: {} })).toMatchObject({ status: 400, body: { detail: 'no_resumable_goal' } });
    expect(await ctx.s.api(`/api/conversations/${id}/goal`, { method: 'POST', body: { objective: '  ' } })).toMatchObject({ status: 400, body: { detail: 'Goal objective must not be empty.' } });
    const bad = await ctx.s.api(`/api/conversations/${id}/goal`, { method: 'POST', body: { objective: 'x', max_iterations: 0 } });
    expect(bad.status).toBe(422);
    expect(JSON.stringify(bad.body)).toContain('max_iterations');
    expect((await ctx.s.api('/api/conversations/00000000-0000-4000-8000-000000000000/goal', { method: 'POST', body: { objective: 'x' } })).status).toBe(404);

    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    ctx.llm.push(async () => {
      await gate;
      return finish('slow');
    });
    await ctx.s.api(`/api/conversations/${id}/events`, { method: 'POST', body: userText('busy work', true) });
    await eventually(() => ctx.llm.requests.length === 1);
    expect(await ctx.s.api(`/api/conversations/${id}/goal`, { method: 'POST', body: { objective: 'x' } })).toMatchObject({ status: 409, body: { detail: GOAL_BUSY } });
    release();
    await eventually(async () => (await ctx.s.api(`/api/conversations/${id}`)).body.execution_status === 'finished');
    expect(await goals(id)).toEqual([]);
  }, 30_000);

  it('stop ends the loop, not the run; resume continues from the round reached, up to the cap', async () => {
    const id = await conversation();
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    ctx.llm.push(async () => {
      await gate;
      return finish('long run');
    });
    await ctx.s.api(`/api/conversations/${id}/goal`, { method: 'POST', body: { objective: 'ship it', max_iterations: 1 } });
    await eventually(() => ctx.llm.requests.length === 1);
    // A second loop is refused while this one goes on.
    expect((await ctx.s.api(`/api/conversations/${id}/goal`, { method: 'POST', body: { objective: 'other' } })).status).toBe(409);
    expect(await ctx.s.api(`/api/conversations/${id}/goal/stop`, { method: 'POST', body: {} })).toMatchObject({ status: 200, body: { success: true } });
    expect((await goals(id)).at(-1)).toMatchObject({ active: false, status: 'interrupted', iteration: 0 });
    // The run itself goes on and finishes; no judge is called for it.
    expect((await ctx.s.api(`/api/conversations/${id}`)).body.execution_status).toBe('running');
    release();
    await eventually(async () => (await ctx.s.api(`/api/conversations/${id}`)).body.execution_status === 'finished');
    expect(ctx.llm.requests.length).toBe(1);

    ctx.llm.push(finish('resumed'), verdict({ score: 0.5, complete: false, missing: 'docs' }));
    expect((await ctx.s.api(`/api/conversations/${id}/goal/resume`, { method: 'POST', body: {} })).status).toBe(200);
    await settled(id, 'capped');
    expect((await goals(id)).at(-1)).toEqual({ active: false, status: 'capped', iteration: 1, max_iterations: 1, objective: 'ship it', verdict: { score: 0.5, complete: false, missing: 'docs' } });
    expect((await userTexts(id)).at(-1)).toBe(RESUME_PROMPT);
  }, 30_000);

  it("a user's own message supersedes the loop (interrupted), even while the judge is out; an unreadable verdict counts as not done", async () => {
    const id = await conversation();
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    ctx.llm.push(finish('a'), { content: 'looks good to me' }, finish('b'), async () => {
      await gate;
      return verdict({ score: 1, complete: true, missing: '' });
    }, finish('c'));
    await ctx.s.api(`/api/conversations/${id}/goal`, { method: 'POST', body: { objective: 'tidy up', max_iterations: 5 } });
    await eventually(() => ctx.llm.requests.length === 4, 15_000);
    expect((await goals(id))[1]).toMatchObject({ status: 'running', iteration: 1, verdict: { score: 0, complete: false, missing: 'Judge verdict could not be parsed.' } });
    await ctx.s.api(`/api/conversations/${id}/events`, { method: 'POST', body: userText('never mind', true) });
    expect((await goals(id)).at(-1)).toMatchObject({ active: false, status: 'interrupted', iteration: 1 });
    release();
    await eventually(async () => ctx.llm.remaining() === 0 && (await ctx.s.api(`/api/conversations/${id}`)).body.execution_status === 'finished', 15_000);
    // The judge's late verdict changed nothing.
    expect((await goals(id)).map((g) => g.status)).toEqual(['running', 'running', 'interrupted']);
  }, 30_000);
});
