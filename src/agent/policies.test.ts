// Pure parts of the loop's policies: gate chaining, the confirmation table, stuck patterns that the
// scripted runs do not reach (monologue, alternation), and the condensed view.
import { describe, expect, it } from 'vitest';
import { newEventBase, parseEvent, type ActionEvent, type Event } from '../api/events/index.ts';
import { buildView } from './condenser/view.ts';
import { condensationNeed, condenserConfig, planCondensation } from './condenser/summarizing.ts';
import { batchNeedsConfirmation, riskNeedsConfirmation } from './confirmation/policy.ts';
import { runGates, type ActionGate } from './gate.ts';
import { detectStuck } from './stuck/detector.ts';
import { priced } from './usage.ts';

let n = 0;
function action(tool: string, args: Record<string, unknown>, risk: ActionEvent['security_risk'] = 'UNKNOWN', response = `r${n}`): ActionEvent {
  const id = `call-${++n}`;
  const kind = tool === 'think' ? { kind: 'ThinkAction', thought: String(args['thought']) } : tool === 'finish' ? { kind: 'FinishAction', message: 'm' } : { kind: 'TerminalAction', command: String(args['command']) };
  return parseEvent({ ...newEventBase('agent'), thought: [], action: kind, tool_name: tool, tool_call_id: id, tool_call: { id, name: tool, arguments: JSON.stringify(args), origin: 'completion' }, llm_response_id: response, security_risk: risk, kind: 'ActionEvent' }) as ActionEvent;
}
function observe(a: ActionEvent, out: string): Event {
  return parseEvent({ ...newEventBase('environment'), tool_name: a.tool_name, tool_call_id: a.tool_call_id, action_id: a.id, observation: { kind: 'ThinkObservation', content: [{ type: 'text', text: out }] }, kind: 'ObservationEvent' });
}
const message = (source: 'user' | 'agent', text: string): Event =>
  parseEvent({ ...newEventBase(source), llm_message: { role: source === 'user' ? 'user' : 'assistant', content: [{ type: 'text', text }] }, kind: 'MessageEvent' });

describe('confirmation table', () => {
  it('follows OpenHands: ConfirmRisky compares against the threshold; UNKNOWN follows confirm_unknown', () => {
    const risky = (threshold: 'LOW' | 'MEDIUM' | 'HIGH', confirm_unknown = true) => ({ kind: 'ConfirmRisky' as const, threshold, confirm_unknown });
    expect(riskNeedsConfirmation({ kind: 'NeverConfirm' }, 'HIGH')).toBe(false);
    expect(riskNeedsConfirmation({ kind: 'AlwaysConfirm' }, 'LOW')).toBe(true);
    expect(riskNeedsConfirmation(risky('HIGH'), 'MEDIUM')).toBe(false);
    expect(riskNeedsConfirmation(risky('HIGH'), 'HIGH')).toBe(true);
    expect(riskNeedsConfirmation(risky('LOW'), 'LOW')).toBe(true);
    expect(riskNeedsConfirmation(risky('MEDIUM', false), 'UNKNOWN')).toBe(false);
    expect(riskNeedsConfirmation(risky('MEDIUM'), 'UNKNOWN')).toBe(true);
    expect(riskNeedsConfirmation({ kind: 'ConfirmRisky' }, 'MEDIUM')).toBe(false); // default threshold HIGH
    expect(batchNeedsConfirmation({ kind: 'AlwaysConfirm' }, [action('finish', {})])).toBe(false);
    expect(batchNeedsConfirmation({ kind: 'AlwaysConfirm' }, [action('think', { thought: 'x' }), action('think', { thought: 'y' })])).toBe(true);
    expect(batchNeedsConfirmation(risky('HIGH'), [action('terminal', { command: 'a' }, 'LOW'), action('terminal', { command: 'b' }, 'HIGH')])).toBe(true);
  });
});

describe('gate chain', () => {
  const batch = [action('terminal', { command: 'a' }), action('terminal', { command: 'b' })];
  const rejectFirst: ActionGate = async (b) => ({ kind: 'reject', rejected: new Map([[b[0]!.id, { reason: 'hook says no', source: 'hook' as const }]]) });
  const signal = new AbortController().signal;

  it('the first rejection wins, later gates see only what stands, and a wait holds the rest', async () => {
    const seen: number[] = [];
    const wait: ActionGate = async (b) => (seen.push(b.length), { kind: 'wait_for_confirmation' });
    const v = await runGates([rejectFirst, wait, rejectFirst], batch, signal);
    expect([...v.rejected.keys()]).toEqual([batch[0]!.id]);
    expect(v.rejected.get(batch[0]!.id)).toEqual({ reason: 'hook says no', source: 'hook' });
    expect(seen).toEqual([1]);
    expect(v.wait).toBe(true);
  });

  it('a batch rejected whole does not wait, and a chain of executes runs everything', async () => {
    const all: ActionGate = async (b) => ({ kind: 'reject', rejected: new Map(b.map((a) => [a.id, { reason: 'no', source: 'user' as const }])) });
    const wait: ActionGate = async () => ({ kind: 'wait_for_confirmation' });
    expect((await runGates([all, wait], batch, signal)).wait).toBe(false);
    const ok: ActionGate = async () => ({ kind: 'execute' });
    expect(await runGates([ok, ok], batch, signal)).toEqual({ rejected: new Map(), wait: false });
  });
});

describe('stuck patterns', () => {
  it('monologue: three agent messages in a row after the last user message', () => {
    expect(detectStuck([message('user', 'hi'), message('agent', 'a'), message('agent', 'b')]).kind).toBe('ok');
    expect(detectStuck([message('user', 'hi'), message('agent', 'a'), message('agent', 'b'), message('agent', 'c')])).toMatchObject({ kind: 'stuck', pattern: 'monologue' });
    expect(detectStuck([message('agent', 'a'), message('agent', 'b'), message('user', 'go on'), message('agent', 'c')]).kind).toBe('ok');
  });

  it('alternation: A/B/A/B/A/B actions with alternating observations', () => {
    const events: Event[] = [message('user', 'go')];
    for (let i = 0; i < 6; i++) {
      const a = action('think', { thought: i % 2 ? 'B' : 'A' });
      events.push(a, observe(a, i % 2 ? 'obs B' : 'obs A'));
      if (i === 4) expect(detectStuck(events).kind).toBe('ok');
    }
    expect(detectStuck(events)).toMatchObject({ kind: 'stuck', pattern: 'alternating_action_observation' });
  });

  it('only counts the events after the last user message', () => {
    const events: Event[] = [];
    for (let i = 0; i < 4; i++) {
      const a = action('think', { thought: 'same' });
      events.push(a, observe(a, 'same'));
    }
    expect(detectStuck(events).kind).toBe('stuck');
    expect(detectStuck([...events, message('user', 'try again')]).kind).toBe('ok');
  });
});

describe('cost', () => {
  it('uses the reported cost, else the per-token prices of the LLM settings', () => {
    const u = { promptTokens: 1000, completionTokens: 100, cacheReadTokens: 0, reasoningTokens: 0, cost: 0 };
    expect(priced(u, { input_cost_per_token: 0.000001, output_cost_per_token: 0.00001 }).cost).toBeCloseTo(0.002);
    expect(priced({ ...u, cost: 0.5 }, { input_cost_per_token: 1 }).cost).toBe(0.5);
    expect(priced(u, undefined).cost).toBe(0);
  });
});

describe('condensed view', () => {
  it('applies condensations in order, inserts the summary at its offset, and keeps tool calls atomic', () => {
    const user = message('user', 'task');
    const a1 = action('think', { thought: '1' }, 'UNKNOWN', 'resp-A');
    const a2 = action('think', { thought: '2' }, 'UNKNOWN', 'resp-A');
    const o1 = observe(a1, 'o1');
    const o2 = observe(a2, 'o2');
    const a3 = action('think', { thought: '3' });
    const o3 = observe(a3, 'o3');
    const a4 = action('think', { thought: '4' });
    const o4 = observe(a4, 'o4');
    const a5 = action('think', { thought: '5' });
    const o5 = observe(a5, 'o5');
    const events = [user, a1, a2, o1, o2, a3, o3, a4, o4, a5, o5];
    const view = buildView(events);
    // A request keeps half the view: the range ends at a4, and a4's answer goes with it.
    const plan = planCondensation({ events: view.events, unhandledRequest: true }, { maxSize: 100, keepFirst: 1, minimumProgress: 0.1 }, { request: true, events: false })!;
    expect(plan.forgotten.map((e) => e.id)).toEqual([a1, a2, o1, o2, a3, o3, a4, o4].map((e) => e.id));
    const condensation = parseEvent({ ...newEventBase('environment'), forgotten_event_ids: plan.forgotten.map((e) => e.id), summary: 'S', summary_offset: plan.offset, llm_response_id: 'x', kind: 'Condensation' });
    const after = buildView([...events, parseEvent({ ...newEventBase('environment'), kind: 'CondensationRequest' }), condensation]);
    expect(after.unhandledRequest).toBe(false);
    expect(after.events.map((e) => (e.kind === 'CondensationSummaryEvent' ? `summary:${e.summary}` : e.id))).toEqual([user.id, 'summary:S', a5.id, o5.id]);
    // Starting inside a parallel batch pulls in its sibling call and both answers.
    const split = planCondensation({ events: view.events, unhandledRequest: true }, { maxSize: 100, keepFirst: 2, minimumProgress: 0.1 }, { request: true, events: false });
    expect(split?.forgotten.map((e) => e.id)).toEqual([a1, a2, o1, o2, a3, o3, a4, o4].map((e) => e.id));
    expect(planCondensation({ events: view.events.slice(0, 2), unhandledRequest: true }, { maxSize: 100, keepFirst: 2, minimumProgress: 0.1 }, { request: true, events: false })).toBeUndefined();
  });

  it('never forgets an action still waiting for its answer, nor its batch', () => {
    const user = message('user', 'task');
    const events: Event[] = [user];
    for (let i = 0; i < 4; i++) {
      const a = action('think', { thought: `t${i}` });
      events.push(a, observe(a, `o${i}`));
    }
    const w1 = action('terminal', { command: 'rm -rf x' }, 'HIGH', 'waiting');
    const w2 = action('terminal', { command: 'ls' }, 'LOW', 'waiting');
    events.push(w1, w2);
    const plan = planCondensation({ events, unhandledRequest: true }, { maxSize: 100, keepFirst: 1, minimumProgress: 0.1 }, { request: true, events: false })!;
    expect(plan.forgotten.length).toBeGreaterThan(0);
    expect(plan.forgotten.map((e) => e.id)).not.toContain(w1.id);
    expect(plan.forgotten.map((e) => e.id)).not.toContain(w2.id);
  });

  it('tokens over the limit keep the share of the view that halves them; the strictest reason wins', () => {
    const user = message('user', 'task');
    const events: Event[] = [user];
    for (let i = 0; i < 10; i++) {
      const a = action('think', { thought: `t${i}` });
      events.push(a, observe(a, `o${i}`));
    }
    const view = { events, unhandledRequest: false };
    const cfg = { maxSize: 100, keepFirst: 1, minimumProgress: 0.1, maxTokens: 1000 };
    expect(condensationNeed(view, cfg, { promptTokens: 900 })).toBeUndefined();
    expect(condensationNeed(view, cfg, { promptTokens: 900, maxInputTokens: 800 })).toEqual({ request: false, events: false, tokens: { prompt: 900, limit: 800 } });
    const need = condensationNeed(view, cfg, { promptTokens: 4000 })!;
    // 20 events after the first; tokens 4x the limit: keep 20 * 500 / 4000 = 2 (one call and its answer).
    const plan = planCondensation(view, cfg, need)!;
    expect(events.length - 1 - plan.forgotten.length).toBe(2);
    expect(planCondensation(view, cfg, { ...need, request: true })!.forgotten).toEqual(plan.forgotten);
    expect(condensationNeed(view, undefined, { promptTokens: 4000, maxInputTokens: 10 })).toBeUndefined();
  });

  it('reads the condenser from the start request, refusing what it cannot use', () => {
    expect(condenserConfig(null)).toBeUndefined();
    expect(condenserConfig({ kind: 'NoOpCondenser' })).toBeUndefined();
    expect(condenserConfig({ kind: 'LLMSummarizingCondenser', max_size: 80, keep_first: 4 })).toEqual({ maxSize: 80, keepFirst: 4, minimumProgress: 0.1 });
    expect(condenserConfig({ kind: 'LLMSummarizingCondenser' })).toEqual({ maxSize: 240, keepFirst: 2, minimumProgress: 0.1 });
    expect(condenserConfig({ kind: 'LLMSummarizingCondenser', minimum_progress: 0.5 })?.minimumProgress).toBe(0.5);
    expect(condenserConfig({ kind: 'LLMSummarizingCondenser', max_tokens: 5000 })?.maxTokens).toBe(5000);
    expect(() => condenserConfig({ kind: 'LLMSummarizingCondenser', minimum_progress: 2 })).toThrow(/minimum_progress/);
    expect(() => condenserConfig({ kind: 'LLMSummarizingCondenser', max_size: 4, keep_first: 1 })).toThrow(/max_size/);
    expect(() => condenserConfig({ kind: 'PipelineCondenser' })).toThrow(/not supported/);
  });
});
