// What the two OpenAPI 3.1 documents (the application API's and the agent server's) build the same
// way from their route tables: plain JSON of TypeBox schemas (OpenAPI 3.1 schemas are JSON Schema,
// so they go in as they are), path parameters, operation ids, and shared schemas as components.
import type { TSchema } from 'typebox';

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

/**
 * Schemas that appear in several places become components: every copy in `paths` is replaced by a
 * reference to its name. Returns the paths with references and the component schemas.
 */
export function withComponents(paths: Record<string, Json>, components: Record<string, TSchema>): { paths: unknown; schemas: Json } {
  const byText = new Map(Object.entries(components).map(([name, schema]) => [JSON.stringify(plain(schema)), name]));
  return {
    paths: withRefs(paths, byText),
    schemas: Object.fromEntries(Object.entries(components).map(([name, schema]) => [name, plain(schema)])),
  };
}
