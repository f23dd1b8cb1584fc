import { describe, expect, it } from 'vitest';
import { Invalid, type ValidationIssue } from '../errors.ts';
import { EXAMPLE_EVENTS } from './examples.ts';
import { EVENT_KINDS, parseEvent } from './index.ts';

function issuesOf(value: unknown): ValidationIssue[] {
  try {
    parseEvent(value);
  } catch (err) {
    expect(err).toBeInstanceOf(Invalid);
    return (err as Invalid).detail;
  }
  throw new Error('expected parseEvent to throw');
}

describe('parseEvent', () => {
  it('has an example for every kind', () => {
    expect(Object.keys(EXAMPLE_EVENTS).sort()).toEqual([...EVENT_KINDS].sort());
  });

  it.each(EVENT_KINDS)('round-trips %s unchanged', (kind) => {
    const example = EXAMPLE_EVENTS[kind];
    const wire = JSON.parse(JSON.stringify(example));
    expect(parseEvent(wire)).toEqual(example);
    expect(wire).toEqual(example); // input not mutated
  });

  it.each(EVENT_KINDS)('rejects an unknown top-level property on %s', (kind) => {
    const issues = issuesOf({ ...EXAMPLE_EVENTS[kind], surprise: 1 });
    expect(issues).toEqual([{ loc: ['surprise'], msg: 'Extra inputs are not permitted', type: 'extra_forbidden' }]);
  });

  it('rejects an unknown property deep inside a nested union with the precise loc', () => {
    const ev = structuredClone(EXAMPLE_EVENTS.ObservationEvent) as Record<string, any>;
    ev['observation']['metadata']['extra'] = true;
    expect(issuesOf(ev)).toEqual([
      { loc: ['observation', 'metadata', 'extra'], msg: 'Extra inputs are not permitted', type: 'extra_forbidden' },
    ]);
    const act = structuredClone(EXAMPLE_EVENTS.ActionEvent) as Record<string, any>;
    act['action']['zz'] = 1;
    expect(issuesOf(act)).toEqual([
      { loc: ['action', 'zz'], msg: 'Extra inputs are not permitted', type: 'extra_forbidden' },
    ]);
  });

  it('reports missing required fields by name', () => {
    const { tool_call_id: _drop, ...rest } = EXAMPLE_EVENTS.AgentErrorEvent;
    expect(issuesOf(rest)).toEqual([{ loc: ['tool_call_id'], msg: 'Field required', type: 'missing' }]);
  });

  it('reports an unknown or missing kind', () => {
    expect(issuesOf({ id: 'x', timestamp: 't', source: 'user', kind: 'Nope' })[0]).toMatchObject({
      loc: ['kind'],
      type: 'union_tag_invalid',
    });
    expect(issuesOf({ id: 'x' })).toEqual([{ loc: ['kind'], msg: 'Field required', type: 'missing' }]);
    expect(issuesOf([])[0]).toMatchObject({ loc: [], type: 'model_type' });
    const act = structuredClone(EXAMPLE_EVENTS.ActionEvent) as Record<string, any>;
    act['action'] = { kind: 'LaunchMissilesAction' };
    expect(issuesOf(act)).toEqual([expect.objectContaining({ loc: ['action', 'kind'], type: 'union_tag_invalid' })]);
  });

  it('applies per-kind defaults', () => {
    const base = { id: 'x', timestamp: '2026-01-01T00:00:00Z' };
    expect(parseEvent({ ...base, kind: 'PauseEvent' })).toEqual({ ...base, source: 'user', kind: 'PauseEvent' });
    expect(parseEvent({ ...base, kind: 'CondensationRequest' })).toMatchObject({ source: 'environment' });
    expect(parseEvent({ ...base, kind: 'HookExecutionEvent', hook_event_type: 'Stop', hook_command: 'x', success: true, exit_code: 0 })).toMatchObject({
      source: 'hook',
      blocked: false,
      stdout: '',
      stderr: '',
    });
    expect(parseEvent({ ...base, kind: 'LLMCompletionLogEvent', filename: 'f', log_data: '{}' })).toMatchObject({
      source: 'environment',
      model_name: 'unknown',
      usage_id: 'default',
    });
    expect(parseEvent({ ...base, kind: 'UserRejectObservation', tool_name: 't', tool_call_id: 'c', action_id: 'a' })).toMatchObject({
      rejection_reason: 'User rejected the action',
      rejection_source: 'user',
    });
    expect(parseEvent({ ...base, kind: 'Condensation', llm_response_id: 'r' })).toMatchObject({ forgotten_event_ids: [] });
    const msg = parseEvent({ ...base, kind: 'MessageEvent', source: 'user', llm_message: { role: 'user', content: [{ text: 'hi' }] } });
    expect(msg).toMatchObject({
      activated_skills: [],
      extended_content: [],
      llm_message: { content: [{ type: 'text', text: 'hi', cache_prompt: false }], thinking_blocks: [] },
    });
  });

  it('requires source where the kind has no default', () => {
    const base = { id: 'x', timestamp: 't' };
    for (const ev of [
      { ...base, kind: 'ConversationErrorEvent', code: 'E', detail: 'd' },
      { ...base, kind: 'MessageEvent', llm_message: { role: 'user' } },
      { ...base, kind: 'TokenEvent', prompt_token_ids: [], response_token_ids: [] },
    ]) {
      expect(issuesOf(ev)).toEqual([{ loc: ['source'], msg: 'Field required', type: 'missing' }]);
    }
  });

  it('nests loc under a prefix', () => {
    try {
      parseEvent({ ...EXAMPLE_EVENTS.PauseEvent, x: 1 }, ['body', 0]);
      expect.unreachable();
    } catch (err) {
      expect((err as Invalid).detail[0]?.loc).toEqual(['body', 0, 'x']);
    }
  });

  it('names the allowed values of a literal or enum field once, whatever the union', () => {
    const issues = issuesOf({ ...EXAMPLE_EVENTS.PauseEvent, source: 'robot' });
    expect(issues).toEqual([{ loc: ['source'], msg: 'Input should be "agent", "user", "environment" or "hook"', type: 'literal_error' }]);
  });
});
