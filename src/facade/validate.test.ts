// convertDeclared must convert exactly as Value.Convert of the whole object does (validate.ts).
import Type from 'typebox';
import { Value } from 'typebox/value';
import { describe, expect, it } from 'vitest';
import { APP_ROUTES } from '../api/app/routes.ts';
import { convertDeclared } from './validate.ts';

/** Query-string shaped inputs, some convertible and some not, for each property and a stray key. */
const SAMPLES: unknown[] = ['5', '-1', '1.5', 'true', 'false', '', 'x', '/workspace/x', ['2', 'y'], ['true'], [], 'null'];

describe('convertDeclared', () => {
  it('converts every route query schema as Value.Convert of the whole object does', () => {
    const schemas = APP_ROUTES.map((r) => r.query).filter((s) => s !== undefined);
    expect(schemas.length).toBeGreaterThan(10);
    let compared = 0;
    for (const schema of schemas) {
      const names = Object.keys((schema as { properties?: object }).properties ?? {});
      for (const sample of SAMPLES) {
        // Each declared name and an undeclared one, all with the same sample value.
        const input = Object.fromEntries([...names, 'not_declared'].map((n) => [n, structuredClone(sample)]));
        expect(convertDeclared(schema, structuredClone(input)), `${JSON.stringify(sample)} into ${JSON.stringify(schema)}`).toEqual(Value.Convert(schema, structuredClone(input)));
        compared++;
      }
    }
    expect(compared).toBeGreaterThan(100);
  });

  it('falls back to Value.Convert where other keys are converted too, and leaves undefined optionals', () => {
    const extra = Type.Object({ a: Type.Integer() }, { additionalProperties: Type.Integer() });
    expect(convertDeclared(extra, { a: '1', b: '2' })).toEqual({ a: 1, b: 2 });
    const optional = Type.Object({ a: Type.Optional(Type.Integer()), b: Type.Integer() });
    const got = convertDeclared(optional, { a: undefined, b: '3' }) as Record<string, unknown>;
    expect(got).toEqual(Value.Convert(optional, { a: undefined, b: '3' }));
    expect('a' in got && got['a'] === undefined).toBe(true);
  });
});
