// The agent loop's policies against the scripted model over real HTTP: confirmation, stuck
// detection, condensation (by size, forced, after a context-window error), budget and streaming.
import { afterEach, describe, expect, it } from 'vitest';
import type { RecordedRequest } from '../testing/scripted-llm/server.ts';
import { setupHost, type HostSetup } from './test-host.ts';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});
const setup = (opts: HostSetup = {}) => setupHost(opts, (fn) => cleanups.push(fn));
const think = (thought: string) => ({ toolCalls: [{ name: 'think', arguments: { thought } }] });
const text = (req: RecordedRequest) => JSON.stringify(req.messages);

describe('confirmation policies', () => {
  it('AlwaysConfirm holds a batch (a lone think does not wait); the next run executes it', async () => {
    const t = await setup({ request: { confirmation_policy: { kind: 'AlwaysConfirm' }, security_analyzer: { kind: 'LLMSecurityAnalyzer' } } });
    t.say('x');
    t.llm.push(think('free'), { toolCalls: [{ name: 'terminal', arguments: { command: 'echo hi', security_risk: 'LOW' } }] });
    await t.run();
    expect(t.status()).toBe('waiting_for_confirmation');
    expect(t.of('ObservationEvent').map((o) => o.observation.kind)).toEqual(['ThinkObservation']);
    expect(t.of('ActionEvent').at(-1)).toMatchObject({ security_risk: 'LOW', action: { command: 'echo hi' } });
    expect(t.of('ActionEvent').at(-1)!.action).not.toHaveProperty('security_risk');
    t.llm.push({ content: 'done' });
    await t.run();
    expect(t.of('ObservationEvent').map((o) => o.observation.kind)).toEqual(['ThinkObservation', 'TerminalObservation']);
    expect(t.status()).toBe('finished');
  });

  it('ConfirmRisky waits at or above the threshold, and for UNKNOWN only with confirm_unknown', async () => {
    const t = await setup({ request: { confirmation_policy: { kind: 'ConfirmRisky', threshold: 'MEDIUM', confirm_unknown: false }, security_analyzer: { kind: 'LLMSecurityAnalyzer' } } });
    t.say('x');
    t.llm.push(
      (req) => {
        const props = (tool: string) => Object.keys((req.tools!.find((x) => x.function.name === tool)!.function.parameters as { properties: object }).properties);
        expect(props('terminal')).toContain('security_risk');
        expect(props('think')).not.toContain('security_risk');
        return { toolCalls: [{ name: 'terminal', arguments: { command: 'echo low', security_risk: 'LOW' } }] };
      },
      { toolCalls: [{ name: 'terminal', arguments: { command: 'echo unknown' } }] },
      { toolCalls: [{ name: 'terminal', arguments: { command: 'echo high', security_risk: 'high' } }] },
    );
    await t.run();
    expect(t.status()).toBe('waiting_for_confirmation');
    expect(t.of('ObservationEvent')).toHaveLength(2);
    expect(t.of('ActionEvent').map((a) => a.security_risk)).toEqual(['LOW', 'UNKNOWN', 'HIGH']);
    // A policy changed meanwhile applies from the next batch on.
    t.host.request.confirmation_policy = { kind: 'ConfirmRisky', threshold: 'LOW', confirm_unknown: true };
    t.llm.push(think('checked'));
    await t.run();
    expect(t.of('ObservationEvent')).toHaveLength(4);
    expect(t.status()).toBe('error'); // script exhausted after the free think: the gate let it through
  });

  it('without a security analyzer every risk is UNKNOWN (OpenHands): ConfirmRisky follows confirm_unknown; a read-only tool never takes a prediction', async () => {
    const t = await setup({ request: { confirmation_policy: { kind: 'ConfirmRisky', threshold: 'HIGH', confirm_unknown: false } } });
    t.say('x');
    t.llm.push({ toolCalls: [{ name: 'terminal', arguments: { command: 'echo predicted-high', security_risk: 'HIGH' } }] }, { content: 'done' });
    await t.run();
    expect(t.status()).toBe('finished');
    expect(t.of('ActionEvent').map((a) => a.security_risk)).toEqual(['UNKNOWN']);
    t.host.request.confirmation_policy = { kind: 'ConfirmRisky', threshold: 'HIGH', confirm_unknown: true };
    t.host.request.security_analyzer = { kind: 'LLMSecurityAnalyzer' };
    t.say('y');
    t.llm.push({ toolCalls: [{ name: 'think', arguments: { thought: 'a', security_risk: 'LOW' } }, { name: 'terminal', arguments: { command: 'echo low', security_risk: 'LOW' } }] });
    await t.run();
    // The think is read-only: UNKNOWN whatever it claims, and UNKNOWN is confirmed now.
    expect(t.of('ActionEvent').slice(1).map((a) => a.security_risk)).toEqual(['UNKNOWN', 'LOW']);
    expect(t.status()).toBe('waiting_for_confirmation');
  });
});

describe('stuck detection', () => {
  it('the same action with the same observation four times ends the run as stuck', async () => {
    const t = await setup();
    t.say('x');
    t.llm.push(think('same'), think('same'), think('same'), think('same'));
    await t.run();
    expect(t.status()).toBe('stuck');
    expect(t.llm.requests).toHaveLength(4);
    expect(t.of('ConversationErrorEvent')).toHaveLength(0);
  });

  it('the same failing call gets one nudge at three, and is stuck at four; off with stuck_detection false', async () => {
    const t = await setup();
    t.say('x');
    const bad = { toolCalls: [{ name: 'teleport', arguments: {} }] };
    t.llm.push(bad, bad, bad, (req) => {
      expect(text(req)).toContain("You've called `teleport` with the same arguments 3 times in a row");
      return bad;
    });
    await t.run();
    expect(t.status()).toBe('stuck');
    expect(t.of('MessageEvent').filter((m) => m.source === 'environment')).toHaveLength(1);

    const u = await setup({ request: { stuck_detection: false }, maxIterations: 5 });
    u.say('x');
    u.llm.push(think('same'), think('same'), think('same'), think('same'), think('same'));
    await u.run();
    expect(u.of('ConversationErrorEvent').at(-1)).toMatchObject({ code: 'MaxIterationsReached' });
  });
});

describe('condensation', () => {
  it('summarizes when the view outgrows max_size; the next request shows the summary, not the forgotten events', async () => {
    const t = await setup({ request: { agent: { llm: { model: 'openai/scripted' }, condenser: { kind: 'LLMSummarizingCondenser', max_size: 6, keep_first: 1 } } } });
    t.say('start the task');
    t.llm.push(think('thought-1'), think('thought-2'), think('thought-3'), (req) => {
      expect(req.tools).toBeUndefined();
      expect(req.messages).toHaveLength(1);
      expect(String(req.messages[0]!.content)).toContain('thought-1');
      return { content: 'SUMMARY: thought about three things', usage: { prompt_tokens: 3, completion_tokens: 2 } };
    }, (req) => {
      expect(text(req)).toContain('SUMMARY: thought about three things');
      expect(text(req)).not.toContain('thought-1');
      expect(text(req)).toContain('start the task');
      return { content: 'done' };
    });
    await t.run();
    expect(t.status()).toBe('finished');
    const [c] = t.of('Condensation');
    expect(c).toMatchObject({ summary: 'SUMMARY: thought about three things', summary_offset: 1, source: 'environment' });
    const actions = t.of('ActionEvent').map((a) => a.id);
    expect(c!.forgotten_event_ids).toEqual(expect.arrayContaining(actions));
    expect(c!.forgotten_event_ids).not.toContain(t.of('SystemPromptEvent')[0]!.id);
    // The summary's usage goes to the `condenser` usage id, as in OpenHands.
    const stats = t.of('ConversationStateUpdateEvent').filter((e) => e.key === 'stats');
    expect(stats.at(-1)!.value).toMatchObject({ usage_to_metrics: { condenser: { accumulated_token_usage: { prompt_tokens: 3, completion_tokens: 2 } }, default: {} } });
    // Both LLMs are listed from the first stats update on, the condenser's at zero (OpenHands registers them as the agent starts).
    expect(Object.keys((stats[0]!.value as { usage_to_metrics: object }).usage_to_metrics)).toEqual(['default', 'condenser']);
  });

  it('a context-window error records a CondensationRequest, condenses and retries; POST-style condense() forces one', async () => {
    const t = await setup({ request: { agent: { llm: { model: 'openai/scripted' }, condenser: { kind: 'LLMSummarizingCondenser', max_size: 100, keep_first: 1 } } } });
    t.say('go');
    t.llm.push(think('a'), think('b'), { status: 400, errorCode: 'context_length_exceeded', errorMessage: 'too long' }, { content: 'S1' }, (req) => {
      expect(text(req)).toContain('S1');
      return { content: 'fits now' };
    });
    await t.run();
    expect(t.events.map((e) => e.kind)).toEqual(expect.arrayContaining(['CondensationRequest', 'Condensation']));
    expect(t.status()).toBe('finished');
    t.say('more');
    t.llm.push(think('c'), think('d'), { content: 'fine' });
    await t.run();
    t.llm.push({ content: 'S2' });
    await t.agent.condense!(new AbortController().signal);
    expect(t.of('Condensation').map((c) => c.summary)).toEqual(['S1', 'S2']);
  });

  it('a summary request that does not fit is retried with shorter event texts', async () => {
    const t = await setup({ request: { agent: { llm: { model: 'openai/scripted' }, condenser: { kind: 'LLMSummarizingCondenser', max_size: 6, keep_first: 1 } } } });
    t.say('start');
    const long = (i: number) => ({ toolCalls: [{ name: 'think', arguments: { thought: `${i} ${'long '.repeat(400)}` } }] });
    const sizes: number[] = [];
    t.llm.push(long(1), long(2), long(3), (req) => {
      sizes.push(String(req.messages[0]!.content).length);
      return { status: 400, errorCode: 'context_length_exceeded' };
    }, (req) => {
      sizes.push(String(req.messages[0]!.content).length);
      expect(String(req.messages[0]!.content)).toContain('[truncated]');
      return { content: 'short summary' };
    }, { content: 'done' });
    await t.run();
    expect(t.of('Condensation').map((c) => c.summary)).toEqual(['short summary']);
    expect(sizes[1]).toBeLessThan(sizes[0]!);
    expect(t.status()).toBe('finished');
  });

  it('condenses when the last call reported more prompt tokens than max_tokens', async () => {
    const t = await setup({ request: { agent: { llm: { model: 'openai/scripted' }, condenser: { kind: 'LLMSummarizingCondenser', max_size: 100, keep_first: 1, max_tokens: 1000 } } } });
    t.say('start');
    t.llm.push({ ...think('small'), usage: { prompt_tokens: 900 } }, { ...think('big'), usage: { prompt_tokens: 5000 } }, (req) => {
      expect(req.tools).toBeUndefined();
      return { content: 'TOKENS-SUMMARY' };
    }, (req) => {
      expect(JSON.stringify(req.messages)).toContain('TOKENS-SUMMARY');
      return { content: 'done', usage: { prompt_tokens: 300 } };
    });
    await t.run();
    expect(t.of('Condensation')).toHaveLength(1);
    expect(t.status()).toBe('finished');
  });

  it('without a condenser a context-window error ends the run', async () => {
    const t = await setup();
    t.say('go');
    t.llm.push({ status: 400, errorCode: 'context_length_exceeded' });
    await t.run();
    expect(t.of('ConversationErrorEvent').at(-1)).toMatchObject({ code: 'LLMContextWindowExceedError' });
  });
});

describe('limits and streaming', () => {
  it('max_budget_per_run ends the run with MaxBudgetReached once the run spent it', async () => {
    const t = await setup({ request: { max_budget_per_run: 0.5 } });
    t.say('x');
    t.llm.push({ ...think('a'), usage: { cost: 0.3 } }, { ...think('b'), usage: { cost: 0.3 } });
    await t.run();
    expect(t.of('ConversationErrorEvent').at(-1)).toMatchObject({ code: 'MaxBudgetReached' });
    expect(t.status()).toBe('error');
    expect(t.llm.requests).toHaveLength(2);
    const stats = t.of('ConversationStateUpdateEvent').filter((e) => e.key === 'stats').at(-1)!;
    expect(stats.value).toMatchObject({ usage_to_metrics: { default: { max_budget_per_task: 0.5, accumulated_cost: 0.6 } } });
  });

  it('streams answers with tool calls and usage when llm.stream is set, handing text deltas to the host', async () => {
    const t = await setup({ request: { agent: { llm: { model: 'openai/scripted', stream: true } } } });
    t.say('x');
    t.llm.push(
      { content: 'Let me write a longer thought here.', toolCalls: [{ name: 'terminal', arguments: { command: 'echo streamed-output', summary: 'print a word' } }], usage: { prompt_tokens: 9, completion_tokens: 4 } },
      { content: 'All done now, nothing more.', reasoning: 'reason in pieces', usage: { prompt_tokens: 1, completion_tokens: 1 } },
    );
    await t.run();
    expect(t.llm.requests.every((r) => r.stream === true && (r.body['stream_options'] as { include_usage?: boolean }).include_usage === true)).toBe(true);
    expect(t.of('ActionEvent')[0]).toMatchObject({ summary: 'print a word', action: { command: 'echo streamed-output' }, thought: [{ text: 'Let me write a longer thought here.' }] });
    expect(JSON.stringify(t.of('ObservationEvent')[0]!.observation)).toContain('streamed-output');
    expect(t.events.at(-1)).toMatchObject({ kind: 'MessageEvent', llm_message: { content: [{ text: 'All done now, nothing more.' }], reasoning_content: 'reason in pieces' } });
    expect(t.deltas.length).toBeGreaterThan(4);
    expect(t.deltas.map((d) => d.content ?? '').join('')).toBe('Let me write a longer thought here.All done now, nothing more.');
    const stats = t.of('ConversationStateUpdateEvent').filter((e) => e.key === 'stats').at(-1)!;
    expect(stats.value).toMatchObject({ usage_to_metrics: { default: { accumulated_token_usage: { prompt_tokens: 10, completion_tokens: 5 } } } });
  });
});
