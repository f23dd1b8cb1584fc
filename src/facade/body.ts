// Request bodies of the application API: read only by the routes that take one, after the caller
// is authenticated (auth.ts runs first, for every route), up to a limit chosen per route, and
// refused when nested deeper than MAX_JSON_DEPTH (validation recurses; a hostile body of a few
// thousand brackets would otherwise overflow the stack and answer 500). The agent server reuses
// the depth check after its own parser.
import { bodyParser } from '@koa/bodyparser';
import type { Middleware } from 'koa';
import { Invalid } from '../api/errors.ts';
import { closeIfBody } from './auth.ts';

/** Bodies of routes that carry no user message: settings, secrets, registrations, metadata. */
export const DEFAULT_BODY_LIMIT_BYTES = 1024 * 1024;
/** Deeper JSON is refused with a 422: far beyond any real request, far below a stack overflow (~2000). */
export const MAX_JSON_DEPTH = 128;

/** True when `value` nests objects/arrays deeper than `max` levels. Iterative: no recursion to overflow. */
export function nestedDeeperThan(value: unknown, max: number): boolean {
  const stack: [unknown, number][] = [[value, 1]];
  while (stack.length > 0) {
    const [v, depth] = stack.pop()!;
    if (v === null || typeof v !== 'object') continue;
    if (depth > max) return true;
    for (const child of Array.isArray(v) ? v : Object.values(v)) if (child !== null && typeof child === 'object') stack.push([child, depth + 1]);
  }
  return false;
}

/** 422 at `body` for a parsed body nested too deep (used by both apps, after their parser). */
export function refuseDeepJson(): Middleware {
  return async function jsonDepth(ctx, next) {
    if (nestedDeeperThan(ctx.request.body, MAX_JSON_DEPTH)) {
      throw new Invalid([{ loc: ['body'], msg: `JSON nested deeper than ${MAX_JSON_DEPTH} levels`, type: 'json_too_deep' }]);
    }
    await next();
  };
}

/**
 * Reads and parses a JSON body (once per request; later calls see it parsed) with this route's
 * limit. Over the limit: 413 from the parser, before anything is kept in memory past the limit.
 */
export function jsonBody(limitBytes: number = DEFAULT_BODY_LIMIT_BYTES): Middleware {
  const parse = bodyParser({ enableTypes: ['json'], jsonLimit: limitBytes });
  const depth = refuseDeepJson();
  return async function readJsonBody(ctx, next) {
    let parsed = false;
    try {
      await parse(ctx, () => {
        parsed = true;
        return depth(ctx, next);
      });
    } catch (err) {
      if (parsed || (err as { status?: unknown }).status !== 413) throw err;
      closeIfBody(ctx); // the rest of an oversized body is not read either
      ctx.throw(413, `The request body is larger than this route takes (${limitBytes} bytes)`);
    }
  };
}
