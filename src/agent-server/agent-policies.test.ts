// Confirmation, stuck detection, condensation, budget and streaming through the agent server's HTTP
// and WebSocket API, with the real agent against the scripted model server.
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { join } from 'node:path';
import { createAgent } from '../agent/agent.ts';
import { startScriptedLlm, type ScriptedLlm } from '../testing/scripted-llm/server.ts';
import { eventually, FrameCollector, startTestServer, tempDir, TEST_KEY, userText, type TestServer } from './test-support.ts';

let llm: ScriptedLlm;
let dir: ReturnType<typeof tempDir>;
let s: TestServer;

const start = () => startTestServer(dir.path, { createAgent, llmDefaults: { model: 'openai/scripted', baseUrl: llm.url, apiKey: 'sk-default' } });
beforeAll(async () => (llm = await startScriptedLlm()));
afterAll(() => llm.close());
beforeEach(async () => {
  dir = tempDir();
  s = await start();
});
afterEach(async () => {
  await s.close();
  dir.remove();
  llm.requests.length = 0;
  expect(llm.failures).toEqual([]);
  expect(llm.remaining()).toBe(0);
});

const think = (thought: string) => ({ toolCalls: [{ name: 'think', arguments: { thought } }] });
const terminal = (command: string) => ({ toolCalls: [{ name: 'terminal', arguments: { command } }] });

async function create(extra: Record<string, unknown> = {}, agent: Record<string, unknown> = {}): Promise<string> {
  const body = { workspace: { kind: 'LocalWorkspace', working_dir: join(dir.path, 'wd') }, agent: { llm: { model: 'openai/scripted' }, ...agent }, ...extra };
  const r = await s.api('/api/conversations', { method: 'POST', body });
  expect(r.status).toBe(201);
  return r.body.id;
}
const info = async (id: string) => (await s.api(`/api/conversations/${id}`)).body;
const status = async (id: string) => (await info(id)).execution_status;
const until = (id: string, want: string) => eventually(async () => (await status(id)) === want, 15_000);
const events = async (id: string) => (await s.api(`/api/conversations/${id}/events/search?limit=100`)).body.items as any[];
const say = (id: string, text: string) => s.api(`/api/conversations/${id}/events`, { method: 'POST', body: userText(text, true) });

describe('confirmation over HTTP', () => {
  it('waits; accept runs the action; reject answers with UserRejectObservation and goes idle; the policy changes and persists', async () => {
    const id = await create({ confirmation_policy: { kind: 'AlwaysConfirm' } });
    expect((await info(id)).confirmation_policy).toEqual({ kind: 'AlwaysConfirm' });
    // Nothing waits yet: accepting starts no run (the script is empty; a model call would fail).
    expect((await s.api(`/api/conversations/${id}/events/respond_to_confirmation`, { method: 'POST', body: { accept: true } })).body).toEqual({ success: true });
    expect(await status(id)).toBe('idle');
    llm.push(terminal('echo accepted-run'), { content: 'ran it' });
    await say(id, 'run something');
    await until(id, 'waiting_for_confirmation');
    expect((await events(id)).filter((e) => e.kind === 'ObservationEvent')).toHaveLength(0);
    expect((await s.api(`/api/conversations/${id}/events/respond_to_confirmation`, { method: 'POST', body: { accept: true } })).body).toEqual({ success: true });
    await until(id, 'finished');
    expect(JSON.stringify((await events(id)).find((e) => e.kind === 'ObservationEvent'))).toContain('accepted-run');

    // A new message sent with run:true while waiting is an implicit confirmation (OpenHands).
    llm.push(terminal('echo implicit-run'), { content: 'ran it too' });
    await say(id, 'one more');
    await until(id, 'waiting_for_confirmation');
    await s.api(`/api/conversations/${id}/events`, { method: 'POST', body: userText('go ahead and also say hi', false) });
    expect(await status(id)).toBe('waiting_for_confirmation');
    await say(id, 'really, go ahead');
    await until(id, 'finished');
    expect(JSON.stringify((await events(id)).filter((e) => e.kind === 'ObservationEvent'))).toContain('implicit-run');

    llm.push(terminal('echo never'));
    await say(id, 'again');
    await until(id, 'waiting_for_confirmation');
    await s.api(`/api/conversations/${id}/events/respond_to_confirmation`, { method: 'POST', body: { accept: false, reason: 'not today' } });
    await until(id, 'idle');
    const rejected = (await events(id)).filter((e) => e.kind === 'UserRejectObservation');
    expect(rejected).toMatchObject([{ rejection_reason: 'not today', rejection_source: 'user', tool_name: 'terminal' }]);

    const bad = await s.api(`/api/conversations/${id}/confirmation_policy`, { method: 'POST', body: { policy: { kind: 'ConfirmRisky', threshold: 'UNKNOWN' } } });
    expect(bad.status).toBe(422);
    expect(bad.body.detail[0].loc.slice(0, 2)).toEqual(['body', 'policy']);
    expect((await s.api(`/api/conversations/${id}/confirmation_policy`, { method: 'POST', body: {} })).status).toBe(422);
    const noAccept = await s.api(`/api/conversations/${id}/events/respond_to_confirmation`, { method: 'POST', body: { reason: 'x' } });
    expect(noAccept.status).toBe(422);
    expect(noAccept.body.detail[0].loc).toEqual(['body', 'accept']);

    const set = await s.api(`/api/conversations/${id}/confirmation_policy`, { method: 'POST', body: { policy: { kind: 'ConfirmRisky', threshold: 'MEDIUM' } } });
    expect(set.body).toEqual({ success: true });
    expect((await info(id)).confirmation_policy).toEqual({ kind: 'ConfirmRisky', threshold: 'MEDIUM', confirm_unknown: true });
    expect((await events(id)).at(-1)).toMatchObject({ kind: 'ConversationStateUpdateEvent', key: 'confirmation_policy', value: { kind: 'ConfirmRisky', threshold: 'MEDIUM' } });
    // The model reads the rejection; with the LLM analyzer, a LOW-risk call now runs without asking.
    await s.api(`/api/conversations/${id}/security_analyzer`, { method: 'POST', body: { security_analyzer: { kind: 'LLMSecurityAnalyzer' } } });
    llm.push((req) => {
      expect(JSON.stringify(req.messages)).toContain('not today');
      return { toolCalls: [{ name: 'terminal', arguments: { command: 'echo low', security_risk: 'LOW' } }] };
    }, { content: 'ok' });
    await say(id, 'fine, something safe');
    await until(id, 'finished');

    await s.close();
    s = await start();
    expect((await info(id)).confirmation_policy).toMatchObject({ kind: 'ConfirmRisky', threshold: 'MEDIUM' });
    expect((await s.api('/api/conversations/00000000-0000-0000-0000-000000000000/confirmation_policy', { method: 'POST', body: { policy: { kind: 'NeverConfirm' } } })).status).toBe(404);
  });

  it('refuses a rejection while the agent runs (409): its actions execute, they do not wait', async () => {
    const id = await create({ confirmation_policy: { kind: 'AlwaysConfirm' } });
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    llm.push(async () => {
      await held;
      return { content: 'released' };
    });
    await say(id, 'think slowly');
    await until(id, 'running');
    const r = await s.api(`/api/conversations/${id}/events/respond_to_confirmation`, { method: 'POST', body: { accept: false } });
    expect(r.status).toBe(409);
    release();
    await until(id, 'finished');
  });
});

describe('stuck, budget, condensation and streaming over HTTP', () => {
  it('a repeating agent ends as stuck; a new message makes it idle and runnable again', async () => {
    const id = await create();
    llm.push(think('same'), think('same'), think('same'), think('same'));
    await say(id, 'loop');
    await until(id, 'stuck');
    llm.push({ content: 'unstuck' });
    await say(id, 'try something else');
    await until(id, 'finished');
  });

  it('max_budget_per_run ends the run with a ConversationErrorEvent MaxBudgetReached', async () => {
    const id = await create({ max_budget_per_run: 0.1 });
    llm.push({ ...think('costly'), usage: { cost: 0.2 } });
    await say(id, 'spend');
    await until(id, 'error');
    expect((await events(id)).filter((e) => e.kind === 'ConversationErrorEvent')).toMatchObject([{ code: 'MaxBudgetReached' }]);
    expect((await info(id)).stats.usage_to_metrics.default).toMatchObject({ accumulated_cost: 0.2, max_budget_per_task: 0.1 });
  });

  it('persists a Condensation; the next model request shows the summary, not the forgotten events; POST /condense forces one', async () => {
    const condenser = { kind: 'LLMSummarizingCondenser', max_size: 6, keep_first: 1, llm: { model: 'openai/other', api_key: 'sk-condenser-secret' } };
    const id = await create({}, { condenser });
    expect(JSON.stringify(await info(id))).not.toContain('sk-condenser-secret');
    llm.push(think('old-1'), think('old-2'), think('old-3'), { content: 'SUMMARY-ONE' }, (req) => {
      const text = JSON.stringify(req.messages);
      expect(text).toContain('SUMMARY-ONE');
      expect(text).not.toContain('old-1');
      return { content: 'continuing' };
    });
    await say(id, 'long task');
    await until(id, 'finished');
    const [c] = (await events(id)).filter((e) => e.kind === 'Condensation');
    expect(c).toMatchObject({ summary: 'SUMMARY-ONE', summary_offset: 1 });
    expect(c.forgotten_event_ids.length).toBeGreaterThanOrEqual(6);

    llm.push({ content: 'SUMMARY-TWO' });
    expect((await s.api(`/api/conversations/${id}/condense`, { method: 'POST' })).body).toEqual({ success: true });
    const all = await events(id);
    expect(all.filter((e) => e.kind === 'CondensationRequest')).toHaveLength(1);
    expect(all.filter((e) => e.kind === 'Condensation').map((e) => e.summary)).toEqual(['SUMMARY-ONE', 'SUMMARY-TWO']);
    expect(await status(id)).toBe('finished');
  });

  it('POST /condense while the agent runs is handled at its next step, with the default condenser', async () => {
    const id = await create();
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    llm.push(
      async () => {
        await held;
        return { toolCalls: [{ name: 'think', arguments: { thought: 'forget me' } }] };
      },
      (req) => {
        expect(req.tools).toBeUndefined();
        return { content: 'SUMMARY-RUNNING' };
      },
      (req) => {
        expect(JSON.stringify(req.messages)).toContain('SUMMARY-RUNNING');
        expect(JSON.stringify(req.messages)).not.toContain('forget me');
        return { content: 'after' };
      },
    );
    await say(id, 'work');
    await until(id, 'running');
    expect((await s.api(`/api/conversations/${id}/condense`, { method: 'POST' })).body).toEqual({ success: true });
    release();
    await until(id, 'finished');
    const kinds = (await events(id)).map((e) => e.kind);
    expect(kinds.indexOf('CondensationRequest')).toBeLessThan(kinds.indexOf('Condensation'));
  });

  it('streams StreamingDeltaEvents on the socket (never persisted) when llm.stream is set', async () => {
    const id = await create({}, { llm: { model: 'openai/scripted', stream: true } });
    const ws = new FrameCollector(`${s.url.replace('http', 'ws')}/sockets/events/${id}`, { 'x-session-api-key': TEST_KEY });
    await ws.until(1);
    llm.push({ content: 'a streamed answer in several pieces', usage: { prompt_tokens: 3, completion_tokens: 5 } });
    await say(id, 'stream please');
    await until(id, 'finished');
    await ws.until((f) => f.some((e) => e.kind === 'MessageEvent' && e.source === 'agent'));
    const deltas = ws.frames.filter((e) => e.kind === 'StreamingDeltaEvent');
    expect(deltas.map((d) => d.content).join('')).toBe('a streamed answer in several pieces');
    await ws.close();
    expect((await events(id)).some((e) => e.kind === 'StreamingDeltaEvent')).toBe(false);
    expect((await info(id)).stats.usage_to_metrics.default.accumulated_token_usage).toMatchObject({ prompt_tokens: 3, completion_tokens: 5 });
  });
});
