// Client-side schema check before writes. The CRD's structural schema cannot say
// "additionalProperties: false" (the API server silently prunes unknown fields instead), so
// without this an object SqliteStore rejects as Invalid would be accepted and trimmed here.
import { Value } from 'typebox/value';
import { Invalid, type ValidationIssue } from '../../api/errors.ts';
import { validatorFor } from '../../api/events/defaults.ts';
import type { KubeObject, ResourceKind } from '../../api/meta.ts';

const TYPES: Record<string, string> = {
  additionalProperties: 'extra_forbidden',
  boolean: 'extra_forbidden',
  required: 'missing',
  type: 'type_error',
  pattern: 'string_pattern_mismatch',
  const: 'literal_error',
  enum: 'enum',
};

export function validateObject(kind: ResourceKind, obj: KubeObject): void {
  const schema = kind.schema;
  // Compiled once per schema: Value.Check interprets the schema on every write, and every status
  // write of the controller checks the whole object (a third of a warm-pool start's reconcile CPU
  // in `agentyard up`, issue #16). The issues of a refused object still come from Value.Errors.
  if (!schema || validatorFor(schema).Check(obj)) return;
  const issues: ValidationIssue[] = [];
  const seen = new Set<string>();
  for (const e of Value.Errors(schema, obj)) {
    const base = pointerToLoc(e.instancePath);
    const params = e.params as { requiredProperties?: string[]; additionalProperties?: string[] };
    // One issue per offending property, at the property itself, rather than one at its parent.
    const locs =
      e.keyword === 'required' && params.requiredProperties
        ? params.requiredProperties.map((p) => [...base, p])
        : e.keyword === 'additionalProperties' && params.additionalProperties
          ? params.additionalProperties.map((p) => [...base, p])
          : [base];
    for (const loc of locs) {
      const key = `${JSON.stringify(loc)}:${TYPES[e.keyword] ?? e.keyword}`;
      if (seen.has(key)) continue;
      seen.add(key);
      issues.push({ loc, msg: e.message, type: TYPES[e.keyword] ?? e.keyword });
    }
  }
  throw new Invalid(issues);
}

function pointerToLoc(pointer: string): (string | number)[] {
  if (pointer === '') return [];
  return pointer
    .slice(1)
    .split('/')
    .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'))
    .map((s) => (/^\d+$/.test(s) ? Number(s) : s));
}
