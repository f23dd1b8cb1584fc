// Request input checked against TypeBox schemas before a handler runs; a route with a body schema
// reads its body here (body.ts), after authentication. Parsed values (defaults
// applied) go to ctx.state.body / .query / .params; failures are 422 with FastAPI-shaped issues
// located under `body`, `query` or `path`. Unknown query parameters are ignored (as FastAPI does);
// bodies are as strict as their schema.
import type { Context, Middleware } from 'koa';
import { IsOptional, type TSchema } from 'typebox';
import { Value } from 'typebox/value';
import { Invalid } from '../api/errors.ts';
import { parseValue } from '../api/events/validate.ts';
import { jsonBody } from './body.ts';

type Props = Record<string, { type?: string; anyOf?: { type?: string }[] }>;

function isArrayProp(p: Props[string] | undefined): boolean {
  return p?.type === 'array' || (p?.anyOf ?? []).some((b) => b.type === 'array');
}

/**
 * Value.Convert of an object of declared, defined properties, one property schema at a time: the
 * same conversion, since Convert of an object converts each present declared key by its property
 * schema and, without an additionalProperties schema, nothing else. Convert of the whole object
 * builds a RegExp per declared property on every call (typebox 1's Guard.EntriesRegExp), which was
 * the largest part of checking a search's query (issue #16).
 */
export function convertDeclared(schema: TSchema, value: Record<string, unknown>): unknown {
  const s = schema as unknown as { type?: unknown; properties?: Record<string, TSchema>; additionalProperties?: unknown };
  if (s.type !== 'object' || s.properties === undefined || (typeof s.additionalProperties === 'object' && s.additionalProperties !== null)) {
    return Value.Convert(schema, value);
  }
  for (const k of Object.keys(value)) {
    const p = Object.hasOwn(s.properties, k) ? s.properties[k]! : undefined;
    // As Convert does: an optional property that is undefined is left as it is.
    if (p !== undefined && !(value[k] === undefined && IsOptional(p))) value[k] = Value.Convert(p, value[k]);
  }
  return value;
}

/** Koa query values as a schema expects them: array params always arrays, numbers and booleans converted. */
export function parseQuery<T extends TSchema>(schema: T, query: Context['query']): ReturnType<typeof parseValue<T>> {
  const props = ((schema as unknown as { properties?: Props }).properties ?? {}) as Props;
  const raw: Record<string, unknown> = {};
  // Read the declared names only: what a route reads is what its schema (and so the document) declares.
  for (const k of Object.keys(props)) {
    const v = query[k];
    if (v === undefined) continue;
    // A repeated scalar keeps its last value, as FastAPI does.
    raw[k] = isArrayProp(props[k]) ? [v].flat() : Array.isArray(v) ? v[v.length - 1] : v;
  }
  // No `clean`: `raw` holds declared names only, so there is nothing to drop, and Value.Clean was
  // a measurable share of a fast request (issue #16).
  // `raw` and what Convert makes of it are this call's own, so they need no defensive copy either.
  return parseValue(schema, convertDeclared(schema, raw), { prefix: ['query'], owned: true });
}

/**
 * A body the JSON parser skipped (form-encoded, plain text) would otherwise read as `{}`: `curl -d`
 * sends form encoding unless told otherwise, and a start request would silently lose its message.
 * No body at all is still `{}`.
 */
function refuseUnparsedBody(ctx: Context): void {
  const sent = (ctx.request.length ?? 0) > 0 || ctx.get('transfer-encoding') !== '';
  if (!sent || (ctx.request as { rawBody?: string }).rawBody !== undefined) return;
  const type = ctx.request.type || 'no Content-Type';
  throw new Invalid([{ loc: ['body'], msg: `The body must be JSON (Content-Type: application/json), got ${type}`, type: 'content_type' }]);
}

export interface InputSchemas {
  body?: TSchema;
  query?: TSchema;
  params?: TSchema;
  /** Largest body this route reads (413 past it). Default DEFAULT_BODY_LIMIT_BYTES. */
  bodyLimitBytes?: number;
}

/** Reads the body (routes with a body schema only; auth has run by now), then checks all input. */
export function validate(schemas: InputSchemas): Middleware {
  const check = checkInput(schemas);
  if (!schemas.body) return check;
  const read = jsonBody(schemas.bodyLimitBytes);
  return function validateWithBody(ctx, next) {
    return read(ctx, () => check(ctx, next));
  };
}

function checkInput(schemas: InputSchemas): Middleware {
  return async function validateInput(ctx, next) {
    if (schemas.params) {
      const params = (ctx as unknown as { params?: Record<string, string> }).params ?? {};
      ctx.state.params = parseValue(schemas.params, convertDeclared(schemas.params, { ...params }), { prefix: ['path'] });
    }
    if (schemas.query) ctx.state.query = parseQuery(schemas.query, ctx.query);
    if (schemas.body) {
      refuseUnparsedBody(ctx);
      ctx.state.body = parseValue(schemas.body, ctx.request.body ?? {}, { prefix: ['body'] });
    }
    await next();
  };
}
