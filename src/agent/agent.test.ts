import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { StartConversationRequest } from '../api/agent-server/index.ts';
import type { ExecutionStatus } from '../api/conversation.ts';
import { newEventBase, parseEvent, type ActionEvent, type Event } from '../api/events/index.ts';
import { startScriptedLlm, type RecordedRequest, type ScriptStep } from '../testing/scripted-llm/server.ts';
import { createAgentWith, LLM_NOT_CONFIGURED, type AgentOptions } from './agent.ts';
import type { AgentHost, LlmConfig } from './types.ts';
import { lastStats } from './usage.ts';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

type Of<K extends Event['kind']> = Extract<Event, { kind: K }>;

/** An in-memory host that validates every event against the strict schema, as the agent server's store does. */
async function setup(opts: { secrets?: Record<string, string>; maxIterations?: number; llm?: Partial<LlmConfig> | null; agent?: AgentOptions; script?: ScriptStep[]; request?: Partial<StartConversationRequest> } = {}) {
  const llm = await startScriptedLlm(opts.script ?? []);
  const dir = mkdtempSync(join(tmpdir(), 'agent-'));
  const events: Event[] = [];
  const statuses: ExecutionStatus[] = [];
  let status: ExecutionStatus = 'idle';
  const host: AgentHost = {
    conversationId: 'c1',
    workspaceDir: dir,
    llm: opts.llm === null ? undefined : { model: 'openai/scripted', baseUrl: llm.url, apiKey: 'sk-test', ...opts.llm },
    secrets: opts.secrets ?? {},
    maxIterations: opts.maxIterations ?? 50,
    request: { agent: { llm: { model: 'openai/scripted' } }, ...opts.request } as StartConversationRequest,
    stats: () => lastStats(events),
    events: () => events,
    emit: (e) => events.push(parseEvent(e)),
    executionStatus: () => status,
    setExecutionStatus: (s) => {
      status = s;
      statuses.push(s);
    },
  };
  const newAgent = () => {
    const agent = createAgentWith({ model: { maxRetries: 0 }, ...opts.agent })(host);
    cleanups.push(() => agent.close());
    return agent;
  };
  const agent = newAgent();
  cleanups.push(() => llm.close());
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  const say = (text: string) => events.push(parseEvent({ ...newEventBase('user'), kind: 'MessageEvent', llm_message: { role: 'user', content: [{ type: 'text', text }] } }));
  const of = <K extends Event['kind']>(kind: K) => events.filter((e): e is Of<K> => e.kind === kind);
  const run = async (signal = new AbortController().signal) => {
    await agent.run(signal);
    expect(llm.failures).toEqual([]);
  };
  return { llm, host, agent, newAgent, events, statuses, dir, say, of, run, status: () => status };
}

const toolMessages = (req: RecordedRequest) => req.messages.filter((m) => m.role === 'tool');

describe('agent loop', () => {
  it('runs a real command and a real edit, links observations to actions, shares llm_response_id across parallel calls, and finishes', async () => {
    const t = await setup();
    t.say('make two files');
    t.llm.push(
      (req) => {
        expect(req.messages.map((m) => m.role)).toEqual(['system', 'user']);
        expect(req.tools?.map((x) => x.function.name)).toEqual(['terminal', 'file_editor', 'finish', 'think']);
        expect(Object.keys((req.tools![0]!.function.parameters as { properties: object }).properties)[0]).toBe('summary');
        return { content: 'Two things at once.', toolCalls: [{ name: 'terminal', arguments: { command: 'echo one > one.txt && cat one.txt', summary: 'write one.txt' } }, { name: 'think', arguments: { thought: 'ok' } }], usage: { prompt_tokens: 10, completion_tokens: 5, cost: 0.25 } };
      },
      (req) => {
        const assistant = req.messages.filter((m) => m.role === 'assistant');
        expect(assistant).toHaveLength(1);
        expect(assistant[0]!.tool_calls).toHaveLength(2);
        const [terminal, think] = toolMessages(req);
        expect(terminal!.content).toBe(`one\n[Current working directory: ${t.dir}]\n[Command finished with exit code 0]`);
        expect(think!.content).toBe('Your thought has been logged.');
        return { toolCalls: [{ name: 'file_editor', arguments: { command: 'create', path: join(t.dir, 'two.txt'), file_text: 'two' } }] };
      },
      { toolCalls: [{ name: 'finish', arguments: { message: 'done' } }], usage: { prompt_tokens: 1, completion_tokens: 1 } },
    );
    await t.run();
    expect(t.statuses).toEqual(['running', 'finished']);
    expect(readFileSync(join(t.dir, 'one.txt'), 'utf8')).toBe('one\n');
    expect(readFileSync(join(t.dir, 'two.txt'), 'utf8')).toBe('two');
    expect(t.of('SystemPromptEvent')).toHaveLength(1);
    expect(t.of('SystemPromptEvent')[0]!.tools.map((x) => x.kind)).toEqual(['TerminalTool', 'FileEditorTool', 'FinishTool', 'ThinkTool']);
    const actions = t.of('ActionEvent');
    expect(actions.map((a) => a.action?.kind)).toEqual(['TerminalAction', 'ThinkAction', 'FileEditorAction', 'FinishAction']);
    expect(actions[0]!.llm_response_id).toBe(actions[1]!.llm_response_id);
    expect(actions[2]!.llm_response_id).not.toBe(actions[0]!.llm_response_id);
    expect(actions[0]).toMatchObject({ thought: [{ text: 'Two things at once.' }], summary: 'write one.txt', action: { command: 'echo one > one.txt && cat one.txt', is_input: false }, tool_call: { origin: 'completion', name: 'terminal' } });
    expect(actions[0]!.action).not.toHaveProperty('summary');
    expect(actions[1]!.thought).toEqual([]);
    const observations = t.of('ObservationEvent');
    expect(observations).toHaveLength(4);
    for (const obs of observations) {
      const action = actions.find((a) => a.id === obs.action_id)!;
      expect(obs.tool_call_id).toBe(action.tool_call_id);
      expect(obs.tool_name).toBe(action.tool_name);
    }
    expect(observations[3]!.observation).toMatchObject({ kind: 'FinishObservation', content: [{ text: 'done' }] });
    const stats = t.of('ConversationStateUpdateEvent').filter((e) => e.key === 'stats');
    expect(stats).toHaveLength(3);
    expect(stats.at(-1)!.value).toMatchObject({ usage_to_metrics: { default: { model_name: 'openai/scripted', accumulated_cost: 0.25, accumulated_token_usage: { prompt_tokens: 11, completion_tokens: 6, per_turn_token: 2 } } } });
  });

  it('ends a text-only reply as finished with an agent MessageEvent, and a later run continues the same conversation', async () => {
    const t = await setup();
    t.say('hi');
    t.llm.push({ content: 'Hello!', reasoning: 'greet back' });
    await t.run();
    expect(t.events.at(-1)).toMatchObject({ kind: 'MessageEvent', source: 'agent', llm_message: { role: 'assistant', content: [{ text: 'Hello!' }], reasoning_content: 'greet back' } });
    expect(t.status()).toBe('finished');
    t.say('again');
    t.llm.push((req) => {
      expect(req.messages.map((m) => `${m.role}:${typeof m.content === 'string' ? m.content.slice(0, 10) : ''}`).slice(1)).toEqual(['user:hi', 'assistant:Hello!', 'user:again']);
      return { content: 'Hello again.' };
    });
    await t.run();
    expect(t.of('SystemPromptEvent')).toHaveLength(1);
    expect(t.statuses).toEqual(['running', 'finished', 'running', 'finished']);
  });

  it('turns an unknown tool, bad JSON and refused arguments into AgentErrorEvents, and carries on', async () => {
    const t = await setup();
    t.say('go');
    t.llm.push(
      { toolCalls: [{ name: 'teleport', arguments: {} }, { name: 'terminal', arguments: '{not json' }, { name: 'file_editor', arguments: { command: 'view', path: 'relative' } }, { name: 'think', arguments: { thought: 'fine' } }] },
      (req) => {
        const answers = toolMessages(req).map((m) => String(m.content));
        expect(answers).toHaveLength(4);
        expect(answers[0]).toMatch(/^ERROR: Tool 'teleport' not found/);
        expect(answers[1]).toMatch(/^ERROR: Error parsing the arguments of tool 'terminal'/);
        expect(answers[2]).toMatch(/absolute path/);
        expect(answers[3]).toBe('Your thought has been logged.');
        return { toolCalls: [{ name: 'finish', arguments: { message: 'ok' } }] };
      },
    );
    await t.run();
    expect(t.of('ActionEvent').slice(0, 3).map((a) => a.action)).toEqual([null, null, null]);
    expect(t.of('AgentErrorEvent').map((e) => e.tool_name)).toEqual(['teleport', 'terminal', 'file_editor']);
    expect(t.status()).toBe('finished');
  });

  it('without a model, ends at once with a ConversationErrorEvent naming the variables', async () => {
    const t = await setup({ llm: null });
    await t.run();
    expect(t.events).toHaveLength(1);
    expect(t.events[0]).toMatchObject({ kind: 'ConversationErrorEvent', source: 'environment', code: 'LLMNotConfigured', detail: LLM_NOT_CONFIGURED, classification: { kind: 'config' } });
    for (const name of ['LLM_MODEL', 'LLM_BASE_URL', 'LLM_API_KEY']) expect(LLM_NOT_CONFIGURED).toContain(name);
    expect(t.statuses).toEqual(['error']);
    expect(t.llm.requests).toHaveLength(0);
  });

  it('a model configuration that cannot work is a ConversationErrorEvent too', async () => {
    const t = await setup({ llm: { model: 'litellm_proxy/x', baseUrl: '' } });
    await t.run();
    expect(t.events.at(-1)).toMatchObject({ kind: 'ConversationErrorEvent', code: 'LLMConfigError', detail: expect.stringContaining('LLM_BASE_URL') });
    expect(t.status()).toBe('error');
  });

  it('stops at max iterations with MaxIterationsReached', async () => {
    const t = await setup({ maxIterations: 2 });
    t.say('loop');
    t.llm.push({ toolCalls: [{ name: 'think', arguments: { thought: 'a' } }] }, { toolCalls: [{ name: 'think', arguments: { thought: 'b' } }] });
    await t.run();
    expect(t.events.at(-1)).toMatchObject({ kind: 'ConversationErrorEvent', code: 'MaxIterationsReached' });
    expect(t.llm.requests).toHaveLength(2);
    expect(t.status()).toBe('error');
  });

  it('reports a failing model as a ConversationErrorEvent with its code', async () => {
    const t = await setup();
    t.say('x');
    t.llm.push({ status: 401, errorMessage: 'bad key' });
    await t.run();
    expect(t.events.at(-1)).toMatchObject({ kind: 'ConversationErrorEvent', code: 'LLMAuthenticationError', detail: expect.stringContaining('bad key'), classification: { kind: 'auth', user_action: 'settings' } });
    expect(t.status()).toBe('error');
  });

  it('an abort cancels the in-flight model call and leaves the status to the host', async () => {
    const t = await setup();
    t.say('x');
    const abort = new AbortController();
    let hungUp = false;
    t.llm.push((req) => {
      abort.abort();
      return new Promise((resolve) =>
        req.signal.addEventListener('abort', () => {
          hungUp = true;
          resolve({ content: 'too late' });
        }),
      );
    });
    await t.run(abort.signal);
    expect(t.statuses).toEqual(['running']);
    expect(t.events.map((e) => e.kind)).toEqual(['MessageEvent', 'SystemPromptEvent']);
    await expect.poll(() => hungUp).toBe(true);
  });

  it('an abort during a command stops the batch; the next run executes what is left before asking the model', async () => {
    const t = await setup({ agent: { terminal: { noChangeTimeoutMs: 30_000 } } });
    t.say('x');
    const abort = new AbortController();
    t.llm.push({ toolCalls: [{ name: 'terminal', arguments: { command: 'echo started; sleep 30' } }, { name: 'think', arguments: { thought: 'after' } }] });
    const running = t.run(abort.signal);
    await expect.poll(() => t.of('ActionEvent').length).toBe(2);
    abort.abort();
    await running;
    const [obs] = t.of('ObservationEvent');
    expect(obs!.observation).toMatchObject({ kind: 'TerminalObservation', exit_code: -1 });
    expect(t.of('ObservationEvent')).toHaveLength(1);
    t.llm.push((req) => {
      expect(toolMessages(req).map((m) => String(m.content))).toEqual([expect.stringContaining('The run was stopped'), 'Your thought has been logged.']);
      return { content: 'resumed' };
    });
    await t.run();
    expect(t.of('ObservationEvent').map((o) => o.observation.kind)).toEqual(['TerminalObservation', 'ThinkObservation']);
    expect(t.status()).toBe('finished');
  });

  it('masks secrets in actions, observations and what the model reads', async () => {
    const t = await setup({ secrets: { DEPLOY_KEY: 'dk-0123456789' } });
    t.say('use the key');
    t.llm.push(
      { content: 'Using dk-0123456789 now, and the model key sk-test', toolCalls: [{ name: 'terminal', arguments: { command: 'echo dk-0123456789 $DEPLOY_KEY', summary: 'print dk-0123456789' } }] },
      (req) => {
        expect(JSON.stringify(req.messages)).not.toContain('dk-0123456789');
        return { toolCalls: [{ name: 'finish', arguments: { message: 'ok' } }] };
      },
    );
    await t.run();
    const all = JSON.stringify(t.events);
    expect(all).not.toContain('dk-0123456789');
    expect(all).not.toContain('sk-test');
    expect(all).toContain('<secret-hidden> <secret-hidden>');
    expect(all).toContain('DEPLOY_KEY'); // the name is fine, the value is not
  });

  it('a gate can hold a batch for confirmation (the next run executes it) or reject actions', async () => {
    const verdicts: Parameters<NonNullable<AgentOptions['beforeExecute']>>[0][] = [];
    const t = await setup({
      agent: {
        beforeExecute: async (batch) => {
          verdicts.push(batch);
          if (verdicts.length === 1) return { kind: 'wait_for_confirmation' };
          return { kind: 'reject', rejected: new Map([[batch[0]!.id, { reason: 'blocked by policy', source: 'hook' as const }]]) };
        },
      },
    });
    t.say('x');
    t.llm.push({ toolCalls: [{ name: 'terminal', arguments: { command: 'echo confirmed > c.txt' } }] });
    await t.run();
    expect(t.status()).toBe('waiting_for_confirmation');
    expect(t.of('ObservationEvent')).toHaveLength(0);
    t.llm.push({ toolCalls: [{ name: 'terminal', arguments: { command: 'echo rejected > r.txt' } }, { name: 'think', arguments: { thought: 't' } }] }, { content: 'done' });
    await t.run();
    expect(readFileSync(join(t.dir, 'c.txt'), 'utf8')).toBe('confirmed\n');
    expect(t.of('UserRejectObservation')).toMatchObject([{ rejection_reason: 'blocked by policy', rejection_source: 'hook', action_id: (verdicts[1]![0] as ActionEvent).id }]);
    expect(t.of('ObservationEvent').map((o) => o.observation.kind)).toEqual(['TerminalObservation', 'ThinkObservation']);
    expect(verdicts.map((b) => b.length)).toEqual([1, 2]);
    expect(t.status()).toBe('finished');
  });

  it('a re-created agent (after a restart) keeps accumulating usage from the recorded stats', async () => {
    const t = await setup();
    t.say('x');
    t.llm.push({ content: 'a', usage: { prompt_tokens: 5, completion_tokens: 1 } });
    await t.run();
    t.say('y');
    t.llm.push({ content: 'b', usage: { prompt_tokens: 7, completion_tokens: 2 } });
    await t.newAgent().run(new AbortController().signal);
    const last = t.of('ConversationStateUpdateEvent').filter((e) => e.key === 'stats').at(-1)!;
    expect(last.value).toMatchObject({ usage_to_metrics: { default: { accumulated_token_usage: { prompt_tokens: 12, completion_tokens: 3 } } } });
  });

  it('a conversation recorded with the old `agent` bucket continues it under the LLM\'s usage id; a named usage id keys the calls', async () => {
    const t = await setup();
    // Stats as this server recorded them before buckets were keyed by usage id.
    const old = { model_name: 'openai/scripted', accumulated_cost: 0.5, max_budget_per_task: null, accumulated_token_usage: { model: 'openai/scripted', prompt_tokens: 40, completion_tokens: 4, cache_read_tokens: 0, cache_write_tokens: 0, reasoning_tokens: 0, context_window: 0, per_turn_token: 0, response_id: '' } };
    t.events.push(parseEvent({ ...newEventBase('environment'), kind: 'ConversationStateUpdateEvent', key: 'stats', value: { usage_to_metrics: { agent: old, 'task:t1': old } } }));
    t.say('x');
    t.llm.push({ content: 'a', usage: { prompt_tokens: 5, completion_tokens: 1 } });
    await t.newAgent().run(new AbortController().signal);
    const last = t.of('ConversationStateUpdateEvent').filter((e) => e.key === 'stats').at(-1)!.value as { usage_to_metrics: Record<string, any> };
    expect(Object.keys(last.usage_to_metrics).sort()).toEqual(['default', 'task:t1']);
    expect(last.usage_to_metrics['default']).toMatchObject({ accumulated_cost: 0.5, accumulated_token_usage: { prompt_tokens: 45, completion_tokens: 5 } });

    const named = await setup({ request: { agent: { llm: { model: 'openai/scripted', usage_id: 'my-agent' }, condenser: { kind: 'LLMSummarizingCondenser', max_size: 40, llm: { model: 'openai/scripted', usage_id: 'summaries' } } } } });
    named.say('y');
    named.llm.push({ content: 'b', usage: { prompt_tokens: 2, completion_tokens: 1 } });
    await named.run();
    const stats = named.of('ConversationStateUpdateEvent').filter((e) => e.key === 'stats').at(-1)!.value as { usage_to_metrics: Record<string, any> };
    expect(Object.keys(stats.usage_to_metrics)).toEqual(['my-agent', 'summaries']);
    expect(stats.usage_to_metrics['my-agent'].accumulated_token_usage.prompt_tokens).toBe(2);
    expect(stats.usage_to_metrics['summaries'].accumulated_token_usage.prompt_tokens).toBe(0);
  });
});
