import { describe, expect, it } from 'vitest';
import { newEventBase, parseEvent, type Event } from '../api/events/index.ts';
import { buildMessages, INTERRUPTED_CALL, pendingActions } from './messages.ts';

const user = (text: string): Event => parseEvent({ ...newEventBase('user'), kind: 'MessageEvent', llm_message: { role: 'user', content: [{ type: 'text', text }] } });
const system = (): Event => parseEvent({ ...newEventBase('agent'), kind: 'SystemPromptEvent', system_prompt: { type: 'text', text: 'SYS' }, tools: [], dynamic_context: { type: 'text', text: 'CTX' } });
const action = (id: string, response: string, args = '{}'): Event =>
  parseEvent({
    ...newEventBase('agent'),
    kind: 'ActionEvent',
    thought: [],
    action: { kind: 'ThinkAction', thought: 't' },
    tool_name: 'think',
    tool_call_id: id,
    tool_call: { id, name: 'think', arguments: args, origin: 'completion' },
    llm_response_id: response,
  });
const observed = (a: Event, text: string): Event =>
  a.kind === 'ActionEvent'
    ? parseEvent({ ...newEventBase('environment'), kind: 'ObservationEvent', tool_name: a.tool_name, tool_call_id: a.tool_call_id, action_id: a.id, observation: { kind: 'ThinkObservation', content: [{ type: 'text', text }] } })
    : a;

describe('buildMessages', () => {
  it('puts the system prompt first, merges adjacent user messages, groups parallel calls and answers each right after', () => {
    const a1 = action('c1', 'r1');
    const a2 = action('c2', 'r1');
    const a3 = action('c3', 'r2');
    const events = [user('first'), system(), user('second'), a1, a2, user('in between'), observed(a2, 'two'), observed(a1, 'one'), a3];
    expect(buildMessages(events)).toEqual([
      { role: 'system', content: 'SYS\n\nCTX' },
      { role: 'user', content: 'first\n\nsecond' },
      { role: 'assistant', content: null, tool_calls: [expect.objectContaining({ id: 'c1' }), expect.objectContaining({ id: 'c2' })] },
      { role: 'tool', tool_call_id: 'c1', content: 'one' },
      { role: 'tool', tool_call_id: 'c2', content: 'two' },
      { role: 'user', content: 'in between' },
      { role: 'assistant', content: null, tool_calls: [expect.objectContaining({ id: 'c3' })] },
      { role: 'tool', tool_call_id: 'c3', content: INTERRUPTED_CALL },
    ]);
    expect(pendingActions(events).map((e) => e.kind === 'ActionEvent' && e.tool_call_id)).toEqual(['c3']);
  });
});
