import { describe, expect, it } from 'vitest';
import { EVENT_KIND_FQCN, EVENT_KINDS, eventKindMatches, isEventKind, namespacedKind, normalizeEventKind } from './kinds.ts';
import { newEventBase } from './make.ts';

describe('event kinds', () => {
  it('lists the spec kinds plus InterruptEvent, HookExecutionEvent and ACPToolCallEvent', () => {
    expect(EVENT_KINDS).toEqual([
      'Condensation',
      'CondensationRequest',
      'CondensationSummaryEvent',
      'ConversationErrorEvent',
      'ConversationStateUpdateEvent',
      'LLMCompletionLogEvent',
      'ActionEvent',
      'MessageEvent',
      'AgentErrorEvent',
      'ObservationEvent',
      'UserRejectObservation',
      'SystemPromptEvent',
      'TokenEvent',
      'SecurityAnalysisEvent',
      'PauseEvent',
      'InterruptEvent',
      'HookExecutionEvent',
      'ACPToolCallEvent',
    ]);
    expect(isEventKind('MessageEvent')).toBe(true);
    expect(isEventKind('StreamingDeltaEvent')).toBe(false);
    expect(isEventKind(3)).toBe(false);
  });

  it('matches the three spellings of a kind filter', () => {
    for (const f of [
      'MessageEvent',
      'openhands.sdk.event.llm_convertible.message.MessageEvent',
      'openhands__sdk__event__llm_convertible__message__MessageEvent-Output__1',
      'openhands__sdk__event__llm_convertible__message__MessageEvent-Input__1',
    ]) {
      expect(eventKindMatches(f, 'MessageEvent')).toBe(true);
      expect(eventKindMatches(f, 'ActionEvent')).toBe(false);
      expect(normalizeEventKind(f)).toBe('MessageEvent');
    }
  });

  it('matches every kind by its namespaced key and path', () => {
    for (const kind of EVENT_KINDS) {
      expect(eventKindMatches(namespacedKind(kind), kind)).toBe(true);
      expect(eventKindMatches(EVENT_KIND_FQCN[kind], kind)).toBe(true);
    }
    expect(namespacedKind('PauseEvent')).toBe('openhands__sdk__event__user_action__PauseEvent-Output__1');
  });

  it('names nothing for a wrong module path or unknown kind', () => {
    expect(normalizeEventKind('openhands.sdk.event.wrong.MessageEvent')).toBeUndefined();
    expect(normalizeEventKind('Nope')).toBeUndefined();
    expect(normalizeEventKind('')).toBeUndefined();
    expect(eventKindMatches('messageevent', 'MessageEvent')).toBe(false);
  });
});

describe('newEventBase', () => {
  it('stamps a UUID, a UTC ISO timestamp with Z, and the source', () => {
    const base = newEventBase('agent', () => new Date(Date.UTC(2026, 7, 22, 10, 15, 30, 123)));
    expect(base).toEqual({ id: expect.stringMatching(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/), timestamp: '2026-08-22T10:15:30.123Z', source: 'agent' });
    expect(newEventBase('user').id).not.toBe(base.id);
    expect(newEventBase('user').timestamp).toMatch(/Z$/);
  });
});

describe('the Event union', () => {
  it('holds exactly the kinds of EVENT_SCHEMAS, in the same order (the two lists are written out twice)', async () => {
    const { Event, EVENT_SCHEMAS } = await import('./events.ts');
    const unionKinds = (Event as unknown as { anyOf: { properties: { kind: { const: string } } }[] }).anyOf.map((s) => s.properties.kind.const);
    expect(unionKinds).toEqual(Object.keys(EVENT_SCHEMAS));
    expect(unionKinds).toEqual([...EVENT_KINDS]);
  });
});
