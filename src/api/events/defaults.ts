// Fast default filling and checking for wire schemas.
// TypeBox's Value.Default resolves every union by trying its branches (≈0.2–1 ms per event with a
// 35-branch action union) and skips Record values. Here a union picks its branch by the `kind`
// discriminator (or by JSON type) and records are walked too, so defaults cost microseconds.
import type { TSchema } from 'typebox';
import { Compile } from 'typebox/compile';
import type { Validator } from 'typebox/compile';

type Schemaish = Record<string, unknown>;

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

const compiled = new WeakMap<TSchema, Validator>();

/** A compiled validator for `schema`, built once per schema object. */
export function validatorFor(schema: TSchema): Validator {
  let v = compiled.get(schema);
  if (!v) {
    v = Compile(schema) as unknown as Validator;
    compiled.set(schema, v);
  }
  return v;
}

function kindAccepts(branch: unknown, kind: string): boolean | undefined {
  if (!isObject(branch) || !isObject(branch['properties'])) return undefined;
  const k = branch['properties']['kind'];
  if (!isObject(k)) return undefined;
  if ('const' in k) return k['const'] === kind;
  if (Array.isArray(k['anyOf'])) return k['anyOf'].some((b) => isObject(b) && b['const'] === kind);
  return undefined;
}

function jsonTypeMatches(branch: Schemaish, value: unknown): boolean {
  const t = branch['type'];
  if (typeof t !== 'string') return true; // a nested union or untyped schema: can't tell by type
  if (value === null) return t === 'null';
  if (Array.isArray(value)) return t === 'array';
  if (typeof value === 'number') return t === 'number' || (t === 'integer' && Number.isInteger(value));
  return t === typeof value;
}

function pickBranch(branches: unknown[], value: unknown): Schemaish | undefined {
  if (isObject(value) && typeof value['kind'] === 'string') {
    let discriminated = false;
    for (const b of branches) {
      const accepts = kindAccepts(b, value['kind']);
      if (accepts) return b as Schemaish;
      if (accepts === false) discriminated = true;
    }
    if (discriminated) {
      // No direct match; a nested union branch (e.g. Nullable(Action)) may still hold it.
      const nested = branches.find((b) => isObject(b) && Array.isArray(b['anyOf']));
      return nested as Schemaish | undefined;
    }
  }
  const candidates = branches.filter((b): b is Schemaish => isObject(b) && jsonTypeMatches(b, value));
  if (candidates.length <= 1) return candidates[0];
  return candidates.find((b) => validatorFor(b as TSchema).Check(value)) ?? candidates[0];
}

function walk(schema: Schemaish, value: unknown): void {
  if (Array.isArray(schema['anyOf'])) {
    const branch = pickBranch(schema['anyOf'], value);
    if (branch) walk(branch, value);
    return;
  }
  if (isObject(value)) {
    const props = isObject(schema['properties']) ? schema['properties'] : {};
    for (const [key, ps] of Object.entries(props)) {
      if (!isObject(ps)) continue;
      if (value[key] === undefined) {
        if ('default' in ps) value[key] = structuredClone(ps['default']);
      } else {
        walk(ps, value[key]);
      }
    }
    if (isObject(schema['patternProperties'])) {
      const patterns = Object.entries(schema['patternProperties']).map(([p, s]) => [new RegExp(p), s] as const);
      for (const [key, v] of Object.entries(value)) {
        if (key in props) continue;
        const match = patterns.find(([re]) => re.test(key));
        if (match && isObject(match[1])) walk(match[1], v);
      }
    }
  } else if (Array.isArray(value)) {
    // Tuples come as positional `items: [...]` (TypeBox) or `prefixItems` (2020-12).
    const items = schema['items'];
    const prefix = Array.isArray(items) ? items : schema['prefixItems'];
    value.forEach((item, i) => {
      const s = Array.isArray(prefix) ? prefix[i] : items;
      if (isObject(s)) walk(s, item);
    });
  }
}

/** Fills schema defaults into `value` in place (missing object properties only) and returns it. */
export function applyDefaults<T>(schema: TSchema, value: T): T {
  walk(schema as unknown as Schemaish, value);
  return value;
}
