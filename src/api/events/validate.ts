// Validation with FastAPI-shaped issues: `loc` paths, `msg`, `type` (spec part 7, HTTPValidationError).
// TypeBox reports an error for every branch of a union; for discriminated unions (by `kind`) and
// nullable fields we keep only the branch the value actually selected, so `loc` points at the
// real problem, not at the 30 other action kinds it was never meant to be.
import type { Static, TSchema } from 'typebox';
import { Settings } from 'typebox/system';
import { UnionPrioritySort, Value } from 'typebox/value';
import { Invalid, type ValidationIssue } from '../errors.ts';
import { applyDefaults, validatorFor } from './defaults.ts';

type Loc = (string | number)[];
type Schemaish = Record<string, unknown>;

interface RawError {
  keyword: string;
  schemaPath: string;
  instancePath: string;
  params: Record<string, unknown>;
  message: string;
}

function decodePointer(seg: string): string {
  return seg.replace(/~1/g, '/').replace(/~0/g, '~');
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function jsonType(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  if (typeof v === 'number') return Number.isInteger(v) ? 'integer' : 'number';
  return typeof v;
}

function kindSchema(branch: unknown): TSchema | undefined {
  if (!isObject(branch) || !isObject(branch['properties'])) return undefined;
  const k = branch['properties']['kind'];
  return isObject(k) ? (k as TSchema) : undefined;
}

/** Whether branch `n` of a union is the one `value` is meant to match; 'unknown-kind' if none is. */
function branchApplies(branches: unknown[], n: number, value: unknown): boolean | 'unknown-kind' {
  const branch = branches[n];
  const isNullBranch = isObject(branch) && branch['type'] === 'null';
  if (value !== null && isNullBranch) return false;
  // Branches of another JSON type (string vs array, ...) are not what the caller meant.
  const type = jsonType(value);
  const typed = branches.map((b) => (isObject(b) && typeof b['type'] === 'string' ? b['type'] : undefined));
  if (typed.some((t) => t === type || (t === 'number' && type === 'integer'))) {
    const t = typed[n];
    if (t !== undefined && t !== type && !(t === 'number' && type === 'integer')) return false;
  }
  if (!isObject(value) || !('kind' in value)) return true;
  const kinded = branches.map(kindSchema);
  if (!kinded.some((k) => k !== undefined)) return true;
  const matching = kinded.flatMap((k, i) => (k !== undefined && Value.Check(k, value['kind']) ? [i] : []));
  if (matching.length === 0) return 'unknown-kind';
  return matching.includes(n);
}

interface Located {
  loc: Loc;
  relevant: boolean;
  unknownKind?: { loc: Loc; kinds: string[] };
}

/** Walks schemaPath and instancePath together, deciding relevance at each union on the way. */
function locate(root: TSchema, value: unknown, err: RawError): Located {
  const sp = err.schemaPath.replace(/^#\/?/, '').split('/').filter((s) => s !== '').map(decodePointer);
  const ip = err.instancePath.split('/').slice(1).map(decodePointer);
  let schema: Schemaish = root as unknown as Schemaish;
  let v: unknown = value;
  let ii = 0;
  const loc: Loc = [];
  const step = (): void => {
    const seg = ip[ii++];
    if (seg === undefined) return;
    if (Array.isArray(v)) {
      loc.push(Number(seg));
      v = v[Number(seg)];
    } else {
      loc.push(seg);
      v = isObject(v) ? v[seg] : undefined;
    }
  };
  for (let i = 0; i < sp.length; i++) {
    const s = sp[i] as string;
    if (s === 'properties' || s === 'patternProperties' || s === 'prefixItems') {
      const name = sp[++i] as string;
      schema = ((schema[s] as Schemaish | unknown[] | undefined) as Record<string, Schemaish>)?.[name] ?? {};
      step();
    } else if (s === 'items' || s === 'additionalProperties') {
      const next = schema[s];
      // Tuples: positional `items: [...]`, followed by the index in the schema path.
      if (Array.isArray(next)) schema = (next[Number(sp[++i])] as Schemaish | undefined) ?? {};
      else schema = isObject(next) ? next : {};
      if (ii < ip.length) step();
    } else if (s === 'anyOf' || s === 'oneOf') {
      const branches = (schema[s] as unknown[]) ?? [];
      const n = Number(sp[++i]);
      const applies = branchApplies(branches, n, v);
      if (applies === 'unknown-kind') {
        const kinds = branches.flatMap((b) => {
          const k = kindSchema(b);
          if (!k) return [];
          const ks = k as unknown as Schemaish;
          if (typeof ks['const'] === 'string') return [ks['const']];
          return Array.isArray(ks['anyOf']) ? ks['anyOf'].map((x) => String((x as Schemaish)['const'])) : [];
        });
        return { loc, relevant: false, unknownKind: { loc: [...loc, 'kind'], kinds } };
      }
      if (!applies) return { loc, relevant: false };
      schema = (branches[n] as Schemaish) ?? {};
    } else {
      break;
    }
  }
  while (ii < ip.length) step();
  return { loc, relevant: true };
}

/**
 * Every TypeBox error. TypeBox stops at `maxErrors` (8 by default), which in a 35-branch union
 * cuts off before the branch that matters; raise it for this one synchronous call.
 */
function allErrors(schema: TSchema, value: unknown): RawError[] {
  const previous = Settings.Get().maxErrors;
  Settings.Set({ maxErrors: 1_000_000 });
  try {
    return Value.Errors(schema, value) as unknown as RawError[];
  } finally {
    Settings.Set({ maxErrors: previous });
  }
}

/** Issues for `value` against `schema`, with `loc` paths prefixed by `prefix` (e.g. `['body']`). */
export function validationIssues(schema: TSchema, value: unknown, prefix: Loc = []): ValidationIssue[] {
  const out: ValidationIssue[] = [];
  const seen = new Set<string>();
  const unions: ValidationIssue[] = [];
  const literals = new Map<string, ValidationIssue & { values: unknown[] }>();
  const push = (issue: ValidationIssue): void => {
    const key = JSON.stringify(issue);
    if (seen.has(key)) return;
    seen.add(key);
    out.push(issue);
  };
  for (const err of allErrors(schema, value)) {
    // The per-property "schema is false" error duplicates the aggregate additionalProperties one.
    if (err.keyword === 'boolean' && err.schemaPath.endsWith('/additionalProperties')) continue;
    // Aggregate of the per-name `pattern` errors reported under propertyNames.
    if (err.keyword === 'propertyNames') continue;
    const where = locate(schema, value, err);
    if (where.unknownKind) {
      push({
        loc: [...prefix, ...where.unknownKind.loc],
        msg: `Unknown kind; expected one of: ${where.unknownKind.kinds.join(', ')}`,
        type: 'union_tag_invalid',
      });
      continue;
    }
    if (!where.relevant) continue;
    const loc = [...prefix, ...where.loc];
    if (err.keyword === 'required') {
      for (const p of (err.params['requiredProperties'] as string[] | undefined) ?? []) {
        push({ loc: [...loc, p], msg: 'Field required', type: 'missing' });
      }
    } else if (err.keyword === 'additionalProperties') {
      for (const p of (err.params['additionalProperties'] as string[] | undefined) ?? []) {
        push({ loc: [...loc, p], msg: 'Extra inputs are not permitted', type: 'extra_forbidden' });
      }
    } else if (err.keyword === 'const' || err.keyword === 'enum') {
      // One issue per field naming every allowed value (a union of literals fails once per branch).
      const allowed = err.keyword === 'const' ? [err.params['allowedValue']] : ((err.params['allowedValues'] as unknown[] | undefined) ?? []);
      const key = JSON.stringify(loc);
      const issue = literals.get(key);
      if (issue) issue.values.push(...allowed);
      else {
        const fresh = { loc, msg: '', type: 'literal_error', values: [...allowed] };
        literals.set(key, fresh);
        out.push(fresh);
      }
    } else if (err.keyword === 'anyOf' || err.keyword === 'oneOf') {
      // Says only "no branch matched"; kept as a fallback when no branch error is more precise.
      unions.push({ loc, msg: 'Input does not match any allowed shape', type: 'union' });
    } else {
      push({ loc, msg: err.message, type: err.keyword });
    }
  }
  for (const issue of literals.values()) {
    const values = [...new Set(issue.values.map((v) => JSON.stringify(v)))];
    issue.msg = `Input should be ${values.length > 1 ? `${values.slice(0, -1).join(', ')} or ${values.at(-1)}` : values[0]}`;
    delete (issue as { values?: unknown }).values;
  }
  if (out.length === 0) unions.forEach(push);
  if (out.length === 0 && !Value.Check(schema, value)) {
    out.push({ loc: [...prefix], msg: 'Invalid value', type: 'value_error' });
  }
  return out;
}

export interface ParseOptions {
  /** Prepended to every issue's `loc`, e.g. `['body']` for a request body. */
  prefix?: Loc;
  /** Drop undeclared properties of lenient (non-strict) objects, as Pydantic's `extra="ignore"`. */
  clean?: boolean;
  /** `value` is the caller's own fresh copy (e.g. Value.Convert's result): defaults go into it, no second copy. */
  owned?: boolean;
}

/**
 * Applies the schema's defaults to a copy of `value`, validates it, and returns it typed.
 * Throws `Invalid` (422) with ValidationIssue[] on failure. Never mutates `value` (unless `owned`).
 */
export function parseValue<T extends TSchema>(schema: T, value: unknown, opts: ParseOptions = {}): Static<T> {
  const v: unknown = applyDefaults(schema, opts.owned ? value : structuredClone(value));
  if (!validatorFor(schema).Check(v)) throw new Invalid(validationIssues(schema, v, opts.prefix ?? []));
  // Clean after checking, so nested strict objects still reject unknown properties.
  return (opts.clean ? clean(schema, v) : v) as Static<T>;
}

const prioritySorted = new WeakMap<TSchema, TSchema>();

/**
 * Value.Clean with the schema's unions sorted once per schema. Value.Clean sorts them on every
 * call (UnionPrioritySort rebuilds the whole schema, whatever the value): for StartConversationRequest
 * that was 2-40 ms per request on the agent server, on the path of every conversation start (issue
 * #16), against well under a millisecond for the clean itself. The sort depends on the schema only,
 * so cleaning with the sorted copy and the setting off is the same operation.
 */
function clean(schema: TSchema, value: unknown): unknown {
  if (!Settings.Get().unionPrioritySort) return Value.Clean(schema, value);
  let sorted = prioritySorted.get(schema);
  if (!sorted) {
    sorted = UnionPrioritySort(schema) as TSchema;
    prioritySorted.set(schema, sorted);
  }
  Settings.Set({ unionPrioritySort: false });
  try {
    return Value.Clean(sorted, value);
  } finally {
    Settings.Set({ unionPrioritySort: true });
  }
}
