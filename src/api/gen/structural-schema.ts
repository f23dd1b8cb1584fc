// Converts a TypeBox (JSON Schema) schema into a Kubernetes structural schema for a CRD.
// The API server accepts only a subset of JSON Schema: no `const`, no `additionalProperties: false`
// (unknown fields are pruned instead), and unions must share one type.

type JsonSchema = Record<string, unknown>;

const DROPPED_KEYS = new Set(['$id', '$schema', 'additionalProperties', 'const', 'anyOf', 'oneOf', '~kind', '~optional', '~readonly']);

function isObject(v: unknown): v is JsonSchema {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/**
 * A union of string constants becomes a string enum; a union with null is the rest of it made
 * `nullable` (the API server otherwise drops a null and then reports a required field as missing);
 * any other union keeps its value unchecked.
 */
function convertUnion(variants: JsonSchema[], base: JsonSchema): JsonSchema {
  const nonNull = variants.filter((v) => v.type !== 'null');
  if (nonNull.length > 0 && nonNull.length < variants.length) {
    const rest = nonNull.length === 1 ? { ...toStructuralSchema(nonNull[0]!), ...copyAnnotations(base) } : convertUnion(nonNull, base);
    return { ...rest, nullable: true };
  }
  const consts = variants.map((v) => v.const);
  if (consts.every((c) => typeof c === 'string')) {
    return { ...copyAnnotations(base), type: 'string', enum: consts };
  }
  const types = new Set(variants.map((v) => v.type));
  if (types.size === 1 && !types.has('object') && !types.has('array')) {
    return { ...copyAnnotations(base), type: variants[0]!.type };
  }
  return { ...copyAnnotations(base), 'x-kubernetes-preserve-unknown-fields': true };
}

function copyAnnotations(schema: JsonSchema): JsonSchema {
  const out: JsonSchema = {};
  for (const key of ['description', 'default']) if (key in schema) out[key] = schema[key];
  return out;
}

export function toStructuralSchema(schema: JsonSchema): JsonSchema {
  const variants = (schema.anyOf ?? schema.oneOf) as JsonSchema[] | undefined;
  if (variants) return convertUnion(variants, schema);
  if ('const' in schema) {
    return { ...copyAnnotations(schema), type: typeof schema.const, enum: [schema.const] };
  }
  if (schema.type === undefined && !schema.properties) {
    return { ...copyAnnotations(schema), 'x-kubernetes-preserve-unknown-fields': true };
  }
  const out: JsonSchema = {};
  for (const [key, value] of Object.entries(schema)) {
    if (DROPPED_KEYS.has(key)) continue;
    if (key === 'properties' && isObject(value)) {
      out.properties = Object.fromEntries(Object.entries(value).map(([k, v]) => [k, toStructuralSchema(v as JsonSchema)]));
    } else if (key === 'items' && isObject(value)) {
      out.items = toStructuralSchema(value);
    } else if (key === 'patternProperties' && isObject(value)) {
      // A Record: every value has the same schema.
      const [inner] = Object.values(value);
      out.additionalProperties = toStructuralSchema(inner as JsonSchema);
    } else {
      out[key] = value;
    }
  }
  if (Array.isArray(out.required) && out.required.length === 0) delete out.required;
  return out;
}
