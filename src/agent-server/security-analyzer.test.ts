// POST /api/conversations/{id}/security_analyzer over HTTP with the real agent and the scripted
// model: what the analyzer changes for a ConfirmRisky policy (no analyzer: every risk UNKNOWN, as in
// OpenHands; LLMSecurityAnalyzer: the risk the model predicted), persistence, forks and bad input.
import { describe, expect, it } from 'vitest';
import { join } from 'node:path';
import { createAgent } from '../agent/agent.ts';
import { eventually, startTestServer, useRealAgentServer, userText } from './test-support.ts';

const t = useRealAgentServer({ createAgent });

const terminal = (command: string, security_risk: string) => ({ toolCalls: [{ name: 'terminal', arguments: { command, security_risk } }] });
const LLM_ANALYZER = { kind: 'LLMSecurityAnalyzer' };

async function create(extra: Record<string, unknown> = {}): Promise<{ status: number; body: any }> {
  const body = { workspace: { kind: 'LocalWorkspace', working_dir: join(t.dir.path, 'wd') }, agent: { llm: { model: 'openai/scripted' }, tools: [{ name: 'terminal' }] }, ...extra };
  return t.s.api('/api/conversations', { method: 'POST', body });
}
const info = async (id: string) => (await t.s.api(`/api/conversations/${id}`)).body;
const until = (id: string, want: string) => eventually(async () => (await info(id)).execution_status === want, 15_000);
const events = async (id: string) => (await t.s.api(`/api/conversations/${id}/events/search?limit=100`)).body.items as any[];
const say = (id: string, text: string) => t.s.api(`/api/conversations/${id}/events`, { method: 'POST', body: userText(text, true) });
const setAnalyzer = (id: string, security_analyzer: unknown) => t.s.api(`/api/conversations/${id}/security_analyzer`, { method: 'POST', body: { security_analyzer } });
const lastAction = async (id: string) => (await events(id)).filter((e) => e.kind === 'ActionEvent').at(-1);

describe('the security analyzer of a conversation', () => {
  it('none: ConfirmRisky sees UNKNOWN whatever the model predicts; LLMSecurityAnalyzer: the prediction counts; null clears it; kept across a restart', async () => {
    const id = (await create({ confirmation_policy: { kind: 'ConfirmRisky', threshold: 'HIGH' } })).body.id;
    expect((await info(id)).security_analyzer).toBeNull();

    t.llm.push(terminal('echo first', 'LOW'));
    await say(id, 'something safe');
    await until(id, 'waiting_for_confirmation');
    expect(await lastAction(id)).toMatchObject({ security_risk: 'UNKNOWN' });
    await t.s.api(`/api/conversations/${id}/events/respond_to_confirmation`, { method: 'POST', body: { accept: false, reason: 'no analyzer yet' } });
    await until(id, 'idle');

    expect((await setAnalyzer(id, LLM_ANALYZER)).body).toEqual({ success: true });
    expect((await info(id)).security_analyzer).toEqual(LLM_ANALYZER);
    expect((await events(id)).at(-1)).toMatchObject({ kind: 'ConversationStateUpdateEvent', key: 'security_analyzer', value: LLM_ANALYZER });
    t.llm.push(terminal('echo low-ran', 'LOW'), terminal('echo high', 'HIGH'));
    await say(id, 'now with the analyzer');
    await until(id, 'waiting_for_confirmation');
    const actions = (await events(id)).filter((e) => e.kind === 'ActionEvent');
    expect(actions.slice(-2).map((a) => a.security_risk)).toEqual(['LOW', 'HIGH']);
    expect(JSON.stringify((await events(id)).filter((e) => e.kind === 'ObservationEvent'))).toContain('low-ran');
    await t.s.api(`/api/conversations/${id}/events/respond_to_confirmation`, { method: 'POST', body: { accept: false } });
    await until(id, 'idle');

    // Kept with the conversation, and by a fork.
    await t.s.close();
    t.s = await startTestServer(t.dir.path, { createAgent, llmDefaults: { model: 'openai/scripted', baseUrl: t.llm.url, apiKey: 'sk-default' } });
    expect((await info(id)).security_analyzer).toEqual(LLM_ANALYZER);
    const fork = (await t.s.api(`/api/conversations/${id}/fork`, { method: 'POST', body: {} })).body;
    expect(fork.security_analyzer).toEqual(LLM_ANALYZER);

    expect((await setAnalyzer(id, null)).body).toEqual({ success: true });
    expect((await info(id)).security_analyzer).toBeNull();
    // Search leaves nulls out (OpenHands' exclude_none); the event itself has the null.
    const cleared = (await events(id)).at(-1);
    expect(cleared).toMatchObject({ kind: 'ConversationStateUpdateEvent', key: 'security_analyzer' });
    expect((await t.s.api(`/api/conversations/${id}/events/${cleared.id}`)).body).toMatchObject({ value: null });
    expect((await info(fork.id)).security_analyzer).toEqual(LLM_ANALYZER);
    t.llm.push(terminal('echo waits-again', 'LOW'));
    await say(id, 'and without it again');
    await until(id, 'waiting_for_confirmation');
    expect(await lastAction(id)).toMatchObject({ security_risk: 'UNKNOWN' });
    await t.s.api(`/api/conversations/${id}/events/respond_to_confirmation`, { method: 'POST', body: { accept: false } });
  });

  it('is taken from the start request too; an unknown kind or bad settings are a 422, an unknown conversation a 404', async () => {
    const created = await create({ security_analyzer: LLM_ANALYZER });
    expect(created.status).toBe(201);
    expect(created.body.security_analyzer).toEqual(LLM_ANALYZER);
    const id = created.body.id;

    const unknown = await setAnalyzer(id, { kind: 'MagicAnalyzer' });
    expect(unknown.status).toBe(422);
    expect(unknown.body.detail[0]).toMatchObject({ loc: ['body', 'security_analyzer', 'kind'] });
    expect(unknown.body.detail[0].msg).toContain('LLMSecurityAnalyzer');
    const missing = await t.s.api(`/api/conversations/${id}/security_analyzer`, { method: 'POST', body: {} });
    expect(missing.status).toBe(422);
    expect(missing.body.detail[0]).toMatchObject({ loc: ['body', 'security_analyzer'], type: 'missing' });

    // The other 1.58 kinds are built (security-analyzers.test.ts); settings they refuse are a 422.
    const bad = await setAnalyzer(id, { kind: 'GraySwanAnalyzer', low_threshold: 0.9 });
    expect(bad.status).toBe(422);
    expect((await info(id)).security_analyzer).toEqual(LLM_ANALYZER);
    expect((await create({ security_analyzer: { kind: 'GraySwanAnalyzer', low_threshold: 0.9 }, conversation_id: '5a1d2c3b-4e5f-4a6b-8c7d-9e0f1a2b3c4d' })).status).toBe(422);
    expect((await info('5a1d2c3b-4e5f-4a6b-8c7d-9e0f1a2b3c4d')).detail).toBeDefined();

    expect((await t.s.api('/api/conversations/00000000-0000-0000-0000-000000000000/security_analyzer', { method: 'POST', body: { security_analyzer: null } })).status).toBe(404);
  });
});
