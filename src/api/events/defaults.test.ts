import Type from 'typebox';
import { Value } from 'typebox/value';
import { describe, expect, it } from 'vitest';
import { Action } from './actions.ts';
import { applyDefaults, validatorFor } from './defaults.ts';
import { EVENT_SCHEMAS } from './events.ts';
import { EXAMPLE_EVENTS } from './examples.ts';
import { Nullable } from './common.ts';

describe('applyDefaults', () => {
  it('picks union branches by kind, including inside a nullable union', () => {
    const S = Type.Object({ action: Nullable(Action) });
    expect(applyDefaults(S, { action: { kind: 'BrowserScrollAction' } })).toEqual({
      action: { kind: 'BrowserScrollAction', direction: 'down' },
    });
    expect(applyDefaults(S, { action: null })).toEqual({ action: null });
    expect(applyDefaults(S, { action: { kind: 'Unknown' } })).toEqual({ action: { kind: 'Unknown' } });
  });

  it('walks record values and tuple items', () => {
    const S = Type.Object({
      r: Type.Record(Type.String(), Type.Object({ a: Type.Optional(Type.String({ default: 'x' })) })),
      t: Type.Tuple([Type.Object({ b: Type.Optional(Type.Integer({ default: 1 })) })]),
    });
    expect(applyDefaults(S, { r: { k: {} }, t: [{}] })).toEqual({ r: { k: { a: 'x' } }, t: [{ b: 1 }] });
  });

  it('picks among untagged unions by JSON type, then by validity', () => {
    const S = Type.Object({
      u: Type.Union([
        Type.String(),
        Type.Object({ value: Type.String(), d: Type.Optional(Type.String({ default: 'v' })) }),
        Type.Object({ url: Type.String(), d: Type.Optional(Type.String({ default: 'u' })) }),
      ]),
    });
    expect(applyDefaults(S, { u: 'plain' })).toEqual({ u: 'plain' });
    expect(applyDefaults(S, { u: { url: 'x' } })).toEqual({ u: { url: 'x', d: 'u' } });
  });

  it('does not share default objects between results', () => {
    const a = applyDefaults(EVENT_SCHEMAS.Condensation, { kind: "Condensation" } as Record<string, unknown>) as unknown as { forgotten_event_ids: string[] };
    a.forgotten_event_ids.push('x');
    const b = applyDefaults(EVENT_SCHEMAS.Condensation, { kind: "Condensation" } as Record<string, unknown>) as unknown as { forgotten_event_ids: string[] };
    expect(b.forgotten_event_ids).toEqual([]);
  });

  it('agrees with TypeBox Value.Default on every example event stripped of optional fields', () => {
    for (const [kind, example] of Object.entries(EXAMPLE_EVENTS)) {
      const schema = EVENT_SCHEMAS[kind as keyof typeof EVENT_SCHEMAS];
      const required = (schema as unknown as { required?: string[] }).required ?? [];
      const bare = Object.fromEntries(Object.entries(example).filter(([k]) => required.includes(k)));
      expect(applyDefaults(schema, structuredClone(bare)), kind).toEqual(Value.Default(schema, structuredClone(bare)));
      expect(validatorFor(schema).Check(applyDefaults(schema, structuredClone(bare))), kind).toBe(true);
    }
  });
});
