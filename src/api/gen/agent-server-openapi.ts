// The OpenAPI 3.1 document of the agent server, generated from its route table and the TypeBox
// schemas (OpenAPI 3.1 schemas are JSON Schema, so they go in as they are). Served at /openapi.json.
import type { TSchema } from 'typebox';
import { AGENT_SERVER_ROUTES } from '../agent-server/routes.ts';
import { ConversationInfo, HTTPValidationError } from '../agent-server/index.ts';
import { Event } from '../events/index.ts';

type Json = Record<string, unknown>;

const plain = (s: TSchema): Json => JSON.parse(JSON.stringify(s)) as Json;
const jsonContent = (schema: Json) => ({ 'application/json': { schema } });

/** Schemas that appear in several places are components, referenced by name. */
const COMPONENTS: Record<string, TSchema> = { Event, ConversationInfo, HTTPValidationError };

function withRefs(node: unknown, byText: Map<string, string>): unknown {
  if (Array.isArray(node)) return node.map((n) => withRefs(n, byText));
  if (!node || typeof node !== 'object') return node;
  const name = byText.get(JSON.stringify(node));
  if (name) return { $ref: `#/components/schemas/${name}` };
  return Object.fromEntries(Object.entries(node).map(([k, v]) => [k, withRefs(v, byText)]));
}

export function agentServerOpenApiDocument(version: string): Json {
  const paths: Record<string, Json> = {};
  for (const route of AGENT_SERVER_ROUTES) {
    const pathParams = [...route.path.matchAll(/\{(\w+)\}/g)].map((m) => ({ name: m[1], in: 'path', required: true, schema: { type: 'string' } }));
    const queryParams = Object.entries(route.query ?? {}).map(([name, p]) => ({ name, in: 'query', required: p.required === true, schema: p.schema ? plain(p.schema) : {} }));
    const validated = route.body || pathParams.length || queryParams.length;
    paths[route.path] = {
      ...paths[route.path],
      [route.method]: {
        tags: [route.tag],
        summary: route.summary,
        operationId: `${route.method}${route.path.replace(/[^A-Za-z0-9]+(.)?/g, (_m, c: string | undefined) => (c ? c.toUpperCase() : ''))}`,
        parameters: [...pathParams, ...queryParams],
        ...(route.body ? { requestBody: { required: true, content: jsonContent(plain(route.body)) } } : {}),
        responses: {
          '200': { description: 'OK', ...(route.response ? { content: jsonContent(plain(route.response)) } : {}) },
          ...(validated ? { '422': { description: 'Validation error', content: jsonContent({ $ref: '#/components/schemas/HTTPValidationError' }) } } : {}),
          ...(route.public ? {} : { '401': { description: 'Missing or wrong session key' } }),
        },
        security: route.public ? [] : [{ sessionKey: [] }],
      },
    };
  }
  const byText = new Map(Object.entries(COMPONENTS).map(([name, schema]) => [JSON.stringify(plain(schema)), name]));
  return {
    openapi: '3.1.0',
    info: { title: 'agentyard agent server (OpenHands agent-server API)', version },
    paths: withRefs(paths, byText),
    components: {
      schemas: Object.fromEntries(Object.entries(COMPONENTS).map(([name, schema]) => [name, plain(schema)])),
      securitySchemes: { sessionKey: { type: 'apiKey', in: 'header', name: 'X-Session-API-Key', description: 'A session key (OH_SESSION_API_KEYS_0, ...)' } },
    },
  };
}
