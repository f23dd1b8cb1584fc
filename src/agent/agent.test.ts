import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { ExecutionStatus } from '../api/conversation.ts';
import { newEventBase, parseEvent, type Event } from '../api/events/index.ts';
import { startScriptedLlm, type ScriptedLlm } from '../testing/scripted-llm/server.ts';
import { createAgent, LLM_NOT_CONFIGURED } from './agent.ts';
import type { AgentHost, ConversationAgent } from './types.ts';

let llm: ScriptedLlm;
beforeAll(async () => (llm = await startScriptedLlm()));
afterAll(() => llm.close());

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0)) await c();
});

/** An in-memory host that validates every event against the strict schema, as the agent server's store does. */
function host(opts: { secrets?: Record<string, string>; maxIterations?: number; noLlm?: boolean } = {}) {
  const dir = mkdtempSync(join(tmpdir(), 'agent-'));
  const events: Event[] = [];
  const statuses: ExecutionStatus[] = [];
  let status: ExecutionStatus = 'idle';
  const h: AgentHost = {
    conversationId: 'c1',
    workspaceDir: dir,
    llm: opts.noLlm ? undefined : { model: 'openai/scripted', baseUrl: llm.url, apiKey: 'sk-test' },
    secrets: opts.secrets ?? {},
    maxIterations: opts.maxIterations ?? 50,
    events: () => events,
    emit: (e) => events.push(parseEvent(e)),
    executionStatus: () => status,
    setExecutionStatus: (s) => {
      status = s;
      statuses.push(s);
    },
  };
  const agent: ConversationAgent = createAgent(h);
  cleanups.push(async () => {
    await agent.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const say = (text: string) => events.push(parseEvent({ ...newEventBase('user'), kind: 'MessageEvent', llm_message: { role: 'user', content: [{ type: 'text', text }] } }));
  return { h, agent, events, statuses, dir, say, status: () => status };
}

describe('agent loop', () => {
  it('runs tools, links observations to actions, shares llm_response_id across parallel calls, and finishes', async () => {
    const t = host();
    t.say('make a file');
    llm.push(
      { content: 'Two things at once.', toolCalls: [{ name: 'terminal', arguments: { command: 'echo one > one.txt' } }, { name: 'think', arguments: { thought: 'ok' } }], usage: { prompt_tokens: 10, completion_tokens: 5 } },
      (req) => {
        expect(req.messages.filter((m) => m.role === 'tool')).toHaveLength(2);
        return { toolCalls: [{ name: 'file_editor', arguments: { command: 'create', path: join(t.dir, 'two.txt'), file_text: 'two' } }] };
      },
      { toolCalls: [{ name: 'finish', arguments: { message: 'done' } }], usage: { prompt_tokens: 1, completion_tokens: 1 } },
    );
    await t.agent.run(new AbortController().signal);
    expect(t.status()).toBe('finished');
    expect(t.statuses).toEqual(['running', 'finished']);
    expect(readFileSync(join(t.dir, 'one.txt'), 'utf8')).toBe('one\n');
    expect(readFileSync(join(t.dir, 'two.txt'), 'utf8')).toBe('two');
    const actions = t.events.filter((e) => e.kind === 'ActionEvent');
    expect(actions[0]!.llm_response_id).toBe(actions[1]!.llm_response_id);
    expect(actions[0]!.thought[0]?.text).toBe('Two things at once.');
    for (const obs of t.events.filter((e) => e.kind === 'ObservationEvent')) {
      const action = actions.find((a) => a.id === obs.action_id)!;
      expect(obs.tool_call_id).toBe(action.tool_call_id);
    }
    const stats = t.events.filter((e) => e.kind === 'ConversationStateUpdateEvent' && e.key === 'stats').at(-1) as { value: { usage_to_metrics: { agent: { accumulated_token_usage: { prompt_tokens: number } } } } };
    expect(stats.value.usage_to_metrics.agent.accumulated_token_usage.prompt_tokens).toBe(11);
  });

  it('ends a text-only reply as finished with an agent MessageEvent', async () => {
    const t = host();
    t.say('hi');
    llm.push({ content: 'Hello!' });
    await t.agent.run(new AbortController().signal);
    expect(t.events.at(-1)).toMatchObject({ kind: 'MessageEvent', source: 'agent', llm_message: { role: 'assistant', content: [{ text: 'Hello!' }] } });
    expect(t.status()).toBe('finished');
  });

  it('turns an unknown tool or bad arguments into AgentErrorEvents and carries on', async () => {
    const t = host();
    t.say('go');
    llm.push({ toolCalls: [{ name: 'teleport', arguments: {} }, { name: 'terminal', arguments: '{not json' }] }, { toolCalls: [{ name: 'finish', arguments: { message: 'ok' } }] });
    await t.agent.run(new AbortController().signal);
    const errors = t.events.filter((e) => e.kind === 'AgentErrorEvent');
    expect(errors.map((e) => e.tool_name)).toEqual(['teleport', 'terminal']);
    expect(errors[0]!.error).toMatch(/does not exist/);
    expect(t.status()).toBe('finished');
  });

  it('without a model, ends at once with a ConversationErrorEvent naming the variables', async () => {
    const t = host({ noLlm: true });
    await t.agent.run(new AbortController().signal);
    expect(t.events.at(-1)).toMatchObject({ kind: 'ConversationErrorEvent', code: 'LLMNotConfigured', detail: LLM_NOT_CONFIGURED });
    expect(t.status()).toBe('error');
  });

  it('stops at max iterations with MaxIterationsReached', async () => {
    const t = host({ maxIterations: 2 });
    t.say('loop');
    llm.push({ toolCalls: [{ name: 'think', arguments: { thought: 'a' } }] }, { toolCalls: [{ name: 'think', arguments: { thought: 'b' } }] });
    await t.agent.run(new AbortController().signal);
    expect(t.events.at(-1)).toMatchObject({ kind: 'ConversationErrorEvent', code: 'MaxIterationsReached' });
    expect(t.status()).toBe('error');
  });

  it('reports a failing model as a ConversationErrorEvent after retries', async () => {
    const t = host();
    t.say('x');
    llm.push({ status: 400 });
    await t.agent.run(new AbortController().signal);
    expect(t.events.at(-1)).toMatchObject({ kind: 'ConversationErrorEvent' });
    expect(t.status()).toBe('error');
  });

  it('stops between steps when aborted', async () => {
    const t = host();
    t.say('x');
    const abort = new AbortController();
    llm.push(() => {
      abort.abort();
      return { toolCalls: [{ name: 'think', arguments: { thought: 'late' } }] };
    });
    await t.agent.run(abort.signal);
    expect(t.events.some((e) => e.kind === 'ObservationEvent')).toBe(false);
    expect(llm.remaining()).toBe(0);
  });

  it('masks secrets in actions and observations', async () => {
    const t = host({ secrets: { DEPLOY_KEY: 'dk-0123456789' } });
    t.say('use the key');
    llm.push({ toolCalls: [{ name: 'terminal', arguments: { command: 'echo dk-0123456789 $DEPLOY_KEY' } }] }, { toolCalls: [{ name: 'finish', arguments: { message: 'ok' } }] });
    await t.agent.run(new AbortController().signal);
    const all = JSON.stringify(t.events);
    expect(all).not.toContain('dk-0123456789');
    expect(all).toContain('<secret-hidden> <secret-hidden>');
    expect(all).toContain('DEPLOY_KEY'); // the name is fine, the value is not
  });
});
