import { Type } from 'typebox';
import { Settings } from 'typebox/system';
import { Value } from 'typebox/value';
import { describe, expect, it } from 'vitest';
import { parseValue } from './validate.ts';

describe('parseValue with clean', () => {
  // Two branches that both accept the value: which one cleans it depends on TypeBox's union
  // priority sort (the narrower, literal branch first), which parseValue applies once per schema.
  const Either = Type.Union([Type.Object({ x: Type.String() }), Type.Object({ x: Type.Literal('a'), y: Type.Number() })]);

  it('cleans as Value.Clean does, unions in priority order, on every call', () => {
    for (let i = 0; i < 3; i++) {
      const value = { x: 'a', y: 1, z: 2 };
      expect(parseValue(Either, value, { clean: true })).toEqual(Value.Clean(Either, structuredClone(value)));
      expect(parseValue(Either, value, { clean: true })).toEqual({ x: 'a', y: 1 });
      expect(value).toEqual({ x: 'a', y: 1, z: 2 }); // not mutated
    }
    expect(Settings.Get().unionPrioritySort).toBe(true); // restored for everyone else
  });

  it('follows the setting when unions are not to be sorted', () => {
    Settings.Set({ unionPrioritySort: false });
    try {
      expect(parseValue(Either, { x: 'a', y: 1, z: 2 }, { clean: true })).toEqual({ x: 'a' });
    } finally {
      Settings.Set({ unionPrioritySort: true });
    }
  });
});
