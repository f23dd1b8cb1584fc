// The OpenAPI 3.1 document of the agent server, generated from its route table and the TypeBox
// schemas (OpenAPI 3.1 schemas are JSON Schema, so they go in as they are). Served at /openapi.json.
import type { TSchema } from 'typebox';
import { AGENT_SERVER_ROUTES } from '../agent-server/routes.ts';
import { ConversationInfo, HTTPValidationError } from '../agent-server/index.ts';
import { Event } from '../events/index.ts';
import { jsonContent, operationId, pathParameters, plain, withComponents, type Json } from './openapi-parts.ts';

/** Schemas that appear in several places are components, referenced by name. */
const COMPONENTS: Record<string, TSchema> = { Event, ConversationInfo, HTTPValidationError };

const STATUS_TEXT: Record<number, string> = { 200: 'OK', 201: 'Created', 204: 'No Content', 404: 'Not Found' };

export function agentServerOpenApiDocument(version: string): Json {
  const paths: Record<string, Json> = {};
  for (const route of AGENT_SERVER_ROUTES) {
    const pathParams = pathParameters(route.path);
    const queryParams = Object.entries(route.query ?? {}).map(([name, p]) => ({ name, in: 'query', required: p.required === true, schema: p.schema ? plain(p.schema) : {} }));
    const headerParams = (route.headers ?? []).map((name) => ({ name, in: 'header', required: false, schema: { type: 'string' } }));
    const validated = route.body || pathParams.length || queryParams.length;
    paths[route.path] = {
      ...paths[route.path],
      [route.method]: {
        tags: [route.tag],
        summary: route.summary,
        operationId: operationId(route.method, route.path),
        parameters: [...pathParams, ...queryParams, ...headerParams],
        ...(route.body ? { requestBody: { required: route.bodyOptional !== true, content: jsonContent(plain(route.body)) } } : {}),
        responses: {
          [String(route.status ?? 200)]: {
            description: STATUS_TEXT[route.status ?? 200],
            ...(route.response ? { content: route.textResponse ? { 'text/plain': { schema: plain(route.response) } } : jsonContent(plain(route.response)) } : {}),
          },
          ...(validated ? { '422': { description: 'Validation error', content: jsonContent({ $ref: '#/components/schemas/HTTPValidationError' }) } } : {}),
          ...(route.public ? {} : { '401': { description: 'Missing or wrong session key' } }),
        },
        security: route.public ? [] : [{ sessionKey: [] }],
      },
    };
  }
  const { paths: referenced, schemas } = withComponents(paths, COMPONENTS);
  return {
    openapi: '3.1.0',
    info: { title: 'agentyard agent server (OpenHands agent-server API)', version },
    paths: referenced,
    components: {
      schemas,
      securitySchemes: { sessionKey: { type: 'apiKey', in: 'header', name: 'X-Session-API-Key', description: 'A session key (OH_SESSION_API_KEYS_0, ...)' } },
    },
  };
}
