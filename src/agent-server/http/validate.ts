// Request input checked against TypeBox schemas before a handler runs. Parsed values (defaults
// applied, unknown fields dropped) go to ctx.state.body / ctx.state.query; failures are 422 with
// FastAPI-shaped issues located under `body` or `query`.
import type Router from '@koa/router';
import type { Context, Middleware } from 'koa';
import type { TSchema } from 'typebox';
import { parseBody } from '../../api/agent-server/index.ts';
import { Invalid } from '../../api/errors.ts';
import { parseQuery } from '../../facade/validate.ts';
import { normalizeConversationId } from '../conversation/service.ts';

/** OpenHands types conversation ids as UUIDs (dashed or 32 hex digits): anything else is a 422, never a lookup. */
export function uuidIssue(value: string, loc: (string | number)[]): Invalid | undefined {
  if (normalizeConversationId(value) !== undefined) return undefined;
  return new Invalid([{ loc, msg: 'Input should be a valid UUID', type: 'uuid_parsing' }]);
}

/** Checks `:conversation_id` on every route of `router` that has it, before the route's own middleware. */
export function withConversationIdParam<R extends Router>(router: R): R {
  router.param('conversation_id', (id, _ctx, next) => {
    const bad = uuidIssue(id, ['path', 'conversation_id']);
    if (bad) throw bad;
    return next();
  });
  return router;
}

// Query strings are read as the application API reads them (one implementation for both servers).
export { parseQuery };

export function validate(schemas: { body?: TSchema; query?: TSchema }): Middleware {
  return async function validateInput(ctx, next) {
    if (schemas.query) ctx.state['query'] = parseQuery(schemas.query, ctx.query);
    if (schemas.body) ctx.state['body'] = parseBody(schemas.body, ctx.request.body);
    await next();
  };
}

const MAX_RAW_BODY = 1024 * 1024;

/**
 * The JSON body of a request whatever its method and content type (OpenHands' batch event read
 * is a GET with a JSON array body). Undefined when there is no body.
 */
export async function readJsonBody(ctx: Context): Promise<unknown> {
  if (ctx.request.body !== undefined && ctx.request.rawBody !== undefined) return ctx.request.body;
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of ctx.req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_RAW_BODY) throw new Invalid([{ loc: ['body'], msg: 'Body too large', type: 'too_long' }]);
    chunks.push(chunk);
  }
  const text = Buffer.concat(chunks).toString('utf8');
  if (text.trim() === '') return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new Invalid([{ loc: ['body'], msg: 'JSON decode error', type: 'json_invalid' }]);
  }
}
