import { describe, expect, it } from 'vitest';
import { newEventBase, parseEvent, type Event } from '../api/events/index.ts';
import { buildView } from './condenser/view.ts';
import { buildMessages } from './messages.ts';
import { ModelView } from './model-view.ts';

const user = (text: string): Event => parseEvent({ ...newEventBase('user'), kind: 'MessageEvent', llm_message: { role: 'user', content: [{ type: 'text', text }] } });
const assistant = (text: string): Event => parseEvent({ ...newEventBase('agent'), kind: 'MessageEvent', llm_message: { role: 'assistant', content: [{ type: 'text', text }] } });
const system = (): Event => parseEvent({ ...newEventBase('agent'), kind: 'SystemPromptEvent', system_prompt: { type: 'text', text: 'SYS' }, tools: [] });
const action = (id: string, response: string): Event =>
  parseEvent({ ...newEventBase('agent'), kind: 'ActionEvent', thought: [{ type: 'text', text: `thinking ${id}` }], action: { kind: 'ThinkAction', thought: id }, tool_name: 'think', tool_call_id: id, tool_call: { id, name: 'think', arguments: '{}', origin: 'completion' }, llm_response_id: response });
const observed = (a: Event, text: string): Event =>
  a.kind === 'ActionEvent' ? parseEvent({ ...newEventBase('environment'), kind: 'ObservationEvent', tool_name: a.tool_name, tool_call_id: a.tool_call_id, action_id: a.id, observation: { kind: 'ThinkObservation', content: [{ type: 'text', text }] } }) : a;
const failed = (a: Event): Event => (a.kind === 'ActionEvent' ? parseEvent({ ...newEventBase('agent'), kind: 'AgentErrorEvent', tool_name: a.tool_name, tool_call_id: a.tool_call_id, error: 'bad args' }) : a);
const rejected = (a: Event): Event =>
  a.kind === 'ActionEvent' ? parseEvent({ ...newEventBase('environment'), kind: 'UserRejectObservation', tool_name: a.tool_name, tool_call_id: a.tool_call_id, action_id: a.id, rejection_reason: 'no' }) : a;
const request = (): Event => parseEvent({ ...newEventBase('environment'), kind: 'CondensationRequest' });
const condensation = (forgotten: Event[], offset: number): Event =>
  parseEvent({ ...newEventBase('environment'), forgotten_event_ids: forgotten.map((e) => e.id), summary: 'S', summary_offset: offset, llm_response_id: 'x', kind: 'Condensation' });

/** A conversation with every shape the messages have: late, missing and duplicate answers, parallel calls, merges, a condensation. */
function history(): Event[] {
  const [a1, a2, a3, a4, a5, a6] = [action('c1', 'r1'), action('c2', 'r1'), action('c3', 'r2'), action('c4', 'r3'), action('c5', 'r4'), action('c6', 'r5')];
  return [
    user('first'),
    system(),
    user('second'),
    a1,
    a2,
    user('in between'),
    observed(a2, 'two'),
    observed(a1, 'one'),
    observed(a1, 'one again'),
    a3,
    failed(a3),
    assistant('said'),
    a4,
    request(),
    user('later'),
    rejected(a4),
    condensation([a3, a4], 3),
    a5,
    observed(a5, 'five'),
    user('u1'),
    user('u2'),
    a6,
  ];
}

describe('ModelView', () => {
  it('gives, after every appended event, the view and messages a rebuild from the whole list gives', () => {
    const all = history();
    const followed: Event[] = [];
    const mv = new ModelView();
    for (const e of all) {
      followed.push(e); // the host appends to the same list
      const view = mv.update(followed);
      const fresh = buildView(followed);
      expect(view).toEqual(fresh);
      expect(mv.messages()).toEqual(buildMessages(fresh.events));
    }
  });

  it('keeps messages it handed out as they were when later answers and merges come', () => {
    const a = action('c1', 'r1');
    const list: Event[] = [user('hi'), a];
    const mv = new ModelView();
    mv.update(list);
    const before = mv.messages();
    const snapshot = structuredClone(before);
    list.push(observed(a, 'done'), user('more'), user('and more'));
    mv.update(list);
    expect(before).toEqual(snapshot);
    expect(mv.messages().map((m) => m.content)).toEqual(['hi', 'thinking c1', 'done', 'more\n\nand more']);
  });

  it('starts over from a list other than the one it followed (a restarted or forked conversation)', () => {
    const mv = new ModelView();
    mv.update([user('old')]);
    const other = [user('new'), assistant('reply')];
    expect(mv.update(other)).toEqual(buildView(other));
    expect(mv.messages()).toEqual(buildMessages(other));
  });
});
