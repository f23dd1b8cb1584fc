// The one place where errors become HTTP responses in the agent server. Handlers throw
// AgentyardError subclasses; anything else is a bug: logged with an id, answered without details.
import { randomUUID } from 'node:crypto';
import type { Middleware } from 'koa';
import { AgentyardError, TooManyRequests, type ErrorCode } from '../../api/errors.ts';
import type { Logger } from '../../util/log.ts';

export const STATUS_BY_CODE: Record<ErrorCode, number> = {
  BadRequest: 400,
  Unauthorized: 401,
  Forbidden: 403,
  NotFound: 404,
  Conflict: 409,
  Gone: 410,
  Invalid: 422,
  TooManyRequests: 429,
  NotImplemented: 501,
  BadGateway: 502,
  Unavailable: 503,
};

interface HttpishError {
  status?: unknown;
  expose?: unknown;
  type?: unknown;
  message?: unknown;
}

export function errorMiddleware(log: Logger): Middleware {
  return async function errors(ctx, next) {
    try {
      await next();
      if (ctx.status === 404 && ctx.body === undefined) {
        ctx.body = { detail: 'Not Found' };
        ctx.status = 404; // assigning a body sets 200
      }
    } catch (err) {
      if (err instanceof AgentyardError) {
        ctx.status = STATUS_BY_CODE[err.code];
        ctx.body = { detail: err.detail };
        if (err instanceof TooManyRequests) ctx.set('Retry-After', String(err.retryAfterSeconds));
        return;
      }
      const h = (err ?? {}) as HttpishError;
      // Body parser errors: co-body rethrows JSON.parse's SyntaxError with status 400.
      if (h.status === 400 && (err instanceof SyntaxError || h.type === 'entity.parse.failed')) {
        ctx.status = 422;
        ctx.body = { detail: [{ loc: ['body'], msg: 'JSON decode error', type: 'json_invalid' }] };
        return;
      }
      // raw-body errors (too large, bad encoding): client mistakes with a safe message.
      if (typeof h.status === 'number' && h.status >= 400 && h.status < 500 && h.expose === true) {
        ctx.status = h.status;
        ctx.body = { detail: typeof h.message === 'string' ? h.message : 'Bad Request' };
        return;
      }
      const errorId = randomUUID();
      log.error({ err, errorId, method: ctx.method, path: ctx.path }, 'unhandled error');
      ctx.status = 500;
      ctx.body = { detail: 'Internal Server Error', error_id: errorId };
    }
  };
}
