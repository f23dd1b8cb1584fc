import { describe, expect, it } from 'vitest';
import type { CoreV1Event } from '@kubernetes/client-node';
import { REDACTED, redact, redactText } from './bundle-writer.ts';
import { EVENTS_KEPT, eventTime, recentEvents } from './support-bundle.ts';

describe('support bundle redaction', () => {
  it('removes Secret data and sensitive env values, keeps the rest', () => {
    const secret = { kind: 'Secret', metadata: { name: 's' }, data: { key: 'c2VjcmV0' } };
    expect(redact(secret)).toMatchObject({ data: { key: REDACTED } });
    const pod = { spec: { containers: [{ env: [{ name: 'LLM_API_KEY', value: 'sk-live' }, { name: 'LLM_MODEL', value: 'gpt' }] }] } };
    expect(JSON.stringify(redact(pod))).not.toContain('sk-live');
    expect(JSON.stringify(redact(pod))).toContain('gpt');
  });

  it('masks key-like strings in logs', () => {
    const text = redactText('key ay_abcdefghijk1234 and sk-ABCDEFGH12345 "session_api_key":"xyz12345" ok');
    expect(text).not.toMatch(/ay_abcdefghijk1234|sk-ABCDEFGH12345|xyz12345/);
    expect(text).toContain('ok');
  });
});

describe('support bundle redaction of applied copies', () => {
  it('drops managedFields and the last-applied copy of an object', () => {
    const dep = { metadata: { managedFields: [{ manager: 'helm' }], annotations: { 'kubectl.kubernetes.io/last-applied-configuration': '{"env":[{"name":"X_TOKEN","value":"t0ps3cret"}]}' } } };
    const text = JSON.stringify(redact(dep));
    expect(text).not.toContain('t0ps3cret');
    expect(text).not.toContain('managedFields');
  });
});

describe('support bundle events', () => {
  const at = (iso: string) => new Date(iso);
  const event = (name: string, times: Partial<Pick<CoreV1Event, 'lastTimestamp' | 'eventTime' | 'series'>> & { created?: string }): CoreV1Event => ({
    involvedObject: {},
    metadata: { name, ...(times.created ? { creationTimestamp: at(times.created) } : {}) },
    ...(times.lastTimestamp ? { lastTimestamp: times.lastTimestamp } : {}),
    ...(times.eventTime ? { eventTime: times.eventTime } : {}),
    ...(times.series ? { series: times.series } : {}),
  });

  it('dates an event by its series, lastTimestamp, eventTime, then its creation', () => {
    expect(eventTime(event('a', { lastTimestamp: at('2026-01-01T10:00:00Z'), created: '2026-01-01T09:00:00Z' }))).toBe(Date.parse('2026-01-01T10:00:00Z'));
    expect(eventTime(event('b', { eventTime: at('2026-01-01T11:00:00.123Z') }))).toBe(Date.parse('2026-01-01T11:00:00.123Z'));
    expect(eventTime(event('c', { series: { count: 4, lastObservedTime: at('2026-01-01T12:00:00Z') }, eventTime: at('2026-01-01T08:00:00Z') }))).toBe(Date.parse('2026-01-01T12:00:00Z'));
    expect(eventTime(event('d', { created: '2026-01-01T07:00:00Z' }))).toBe(Date.parse('2026-01-01T07:00:00Z'));
    expect(eventTime(event('e', {}))).toBe(0);
  });

  it('keeps the most recent events, newest first, whichever field dates them', () => {
    // In name order, as the API server lists them: the newest are not at the start.
    const listed = [
      event('a-old', { lastTimestamp: at('2026-01-01T08:00:00Z') }),
      event('b-newest', { eventTime: at('2026-01-01T12:30:00Z') }),
      event('c-undated', {}),
      event('d-mid', { created: '2026-01-01T10:00:00Z' }),
      event('e-new', { series: { count: 2, lastObservedTime: at('2026-01-01T12:00:00Z') } }),
    ];
    expect(recentEvents(listed).map((e) => e.metadata.name)).toEqual(['b-newest', 'e-new', 'd-mid', 'a-old', 'c-undated']);
    expect(recentEvents(listed, 2).map((e) => e.metadata.name)).toEqual(['b-newest', 'e-new']);
    expect(listed[0]!.metadata.name).toBe('a-old'); // the input is left as it was
  });

  it('is bounded', () => {
    const many = Array.from({ length: EVENTS_KEPT + 250 }, (_, i) => event(`e${i}`, { lastTimestamp: new Date(Date.UTC(2026, 0, 1) + i * 1000) }));
    const kept = recentEvents(many);
    expect(kept).toHaveLength(EVENTS_KEPT);
    expect(kept[0]!.metadata.name).toBe(`e${EVENTS_KEPT + 249}`);
    expect(kept.at(-1)!.metadata.name).toBe('e250');
  });
});
