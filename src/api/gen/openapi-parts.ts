// What the two OpenAPI 3.1 documents (the application API's and the agent server's) build the same
// way from their route tables: plain JSON of TypeBox schemas (OpenAPI 3.1 schemas are JSON Schema,
// so they go in as they are), path parameters, operation ids, and shared schemas as components.
import type { TSchema } from 'typebox';
import { discriminatorKey, KIND_UNIONS, unionKinds } from './discriminator.ts';

export type Json = Record<string, unknown>;

export const plain = (s: TSchema): Json => JSON.parse(JSON.stringify(s)) as Json;

export const jsonContent = (schema: Json) => ({ 'application/json': { schema } });

export function pathParameters(path: string): Json[] {
  return [...path.matchAll(/\{(\w+)\}/g)].map((m) => ({ name: m[1], in: 'path', required: true, schema: { type: 'string' } }));
}

/** `getApiConversationsConversationId` for `GET /api/conversations/{conversation_id}`. */
export function operationId(method: string, path: string): string {
  return `${method}${path.replace(/[^A-Za-z0-9]+(.)?/g, (_m, c: string | undefined) => (c ? c.toUpperCase() : ''))}`;
}

function withRefs(node: unknown, byText: Map<string, string>): unknown {
  if (Array.isArray(node)) return node.map((n) => withRefs(n, byText));
  if (!node || typeof node !== 'object') return node;
  const name = byText.get(JSON.stringify(node));
  if (name) return { $ref: `#/components/schemas/${name}` };
  return Object.fromEntries(Object.entries(node).map(([k, v]) => [k, withRefs(v, byText)]));
}

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });

/**
 * A union discriminated by `kind`, as an OpenAPI component: `oneOf` references to one component per
 * member (named by its kind), with the versioned discriminator mapping (spec part 9 rule 3).
 */
function kindUnionComponent(union: TSchema): Json {
  const kinds = unionKinds(union);
  return {
    oneOf: kinds.map(ref),
    discriminator: { propertyName: 'kind', mapping: Object.fromEntries(kinds.map((k) => [discriminatorKey(k), ref(k).$ref])) },
  };
}

/**
 * Schemas that appear in several places become components: every copy in `paths` and inside other
 * components is replaced by a reference to its name. The `kind` unions (KIND_UNIONS) and each of
 * their members become components too. Returns the paths with references and the component schemas.
 */
export function withComponents(paths: Record<string, Json>, components: Record<string, TSchema>): { paths: unknown; schemas: Json } {
  const all: Record<string, TSchema> = { ...components };
  const used = JSON.stringify(paths) + JSON.stringify(Object.values(components).map(plain));
  for (const [name, union] of Object.entries(KIND_UNIONS)) {
    if (!used.includes(JSON.stringify(plain(union)))) continue;
    all[name] = union;
    const members = (union as { anyOf: TSchema[] }).anyOf;
    unionKinds(union).forEach((kind, i) => (all[kind] = members[i]!));
  }
  const byText = new Map(Object.entries(all).map(([name, schema]) => [JSON.stringify(plain(schema)), name]));
  const schemas: Json = {};
  for (const [name, schema] of Object.entries(all)) {
    if (KIND_UNIONS[name]) schemas[name] = kindUnionComponent(schema);
    else schemas[name] = Object.fromEntries(Object.entries(plain(schema)).map(([k, v]) => [k, withRefs(v, byText)]));
  }
  return { paths: withRefs(paths, byText), schemas };
}
