// The one place where errors become HTTP responses, for the facade and (by import) the agent
// server. Handlers throw AgentyardError subclasses; anything else is a bug: logged once with an
// id, answered without its message.
import { randomUUID } from 'node:crypto';
import { STATUS_CODES } from 'node:http';
import type { Middleware } from 'koa';
import { AgentyardError, InsufficientStorage, TooManyRequests, Unavailable, type ErrorCode } from '../api/errors.ts';
import { describeStorageFault, storageFaultOf } from '../util/storage-fault.ts';
import type { Logger } from '../util/log.ts';

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
  InsufficientStorage: 507,
  ServerError: 500,
  GatewayTimeout: 504,
};

/** Seconds a client is asked to wait before retrying a write refused for lack of storage. */
export const STORAGE_RETRY_AFTER_SECONDS = 30;

interface HttpishError {
  status?: unknown;
  expose?: unknown;
  type?: unknown;
  message?: unknown;
}

export interface ErrorMiddlewareOptions {
  /**
   * How a body that is not JSON is answered: `400 {detail}` (the application API), or a FastAPI-style
   * `422` validation error at `loc: ['body']` (the agent server, as OpenHands clients expect).
   */
  malformedJson?: 'bad-request' | 'validation-error';
}

export function errorMiddleware(log: Logger, opts: ErrorMiddlewareOptions = {}): Middleware {
  return async function errors(ctx, next) {
    try {
      await next();
      // Unmatched routes (404) and router.allowedMethods() (405, 501) set a status without a body.
      if (ctx.status >= 400 && ctx.body === undefined) {
        const status = ctx.status;
        ctx.body = { detail: STATUS_CODES[status] ?? 'Error' };
        ctx.status = status; // assigning a body resets the status to 200
      }
    } catch (err) {
      if (err instanceof AgentyardError) {
        ctx.status = STATUS_BY_CODE[err.code];
        ctx.body = { detail: err.detail };
        const retryAfter = err instanceof TooManyRequests || err instanceof Unavailable || err instanceof InsufficientStorage ? err.retryAfterSeconds : undefined;
        if (retryAfter !== undefined) ctx.set('Retry-After', String(Math.max(1, Math.ceil(retryAfter))));
        return;
      }
      const h = (err ?? {}) as HttpishError;
      // co-body rethrows JSON.parse's SyntaxError with status 400.
      if (h.status === 400 && (err instanceof SyntaxError || h.type === 'entity.parse.failed')) {
        if (opts.malformedJson === 'validation-error') {
          ctx.status = 422;
          ctx.body = { detail: [{ loc: ['body'], msg: 'JSON decode error', type: 'json_invalid' }] };
        } else {
          ctx.status = 400;
          ctx.body = { detail: 'Malformed JSON in request body' };
        }
        return;
      }
      // raw-body and body-parser errors (too large, bad encoding, unsupported type): safe messages.
      if (typeof h.status === 'number' && h.status >= 400 && h.status < 500 && h.expose === true) {
        ctx.status = h.status;
        ctx.body = { detail: typeof h.message === 'string' ? h.message : (STATUS_CODES[h.status] ?? 'Bad Request') };
        return;
      }
      // A full or failing disk is the machine's condition, not a bug: say so, and that it is temporary.
      const fault = storageFaultOf(err);
      if (fault) {
        log.warn({ code: fault.code, method: ctx.method, path: ctx.path }, 'storage fault: write refused');
        ctx.status = STATUS_BY_CODE.InsufficientStorage;
        ctx.body = { detail: `Insufficient storage: ${describeStorageFault(fault)}` };
        ctx.set('Retry-After', String(STORAGE_RETRY_AFTER_SECONDS));
        return;
      }
      const errorId = randomUUID();
      log.error({ err, errorId, method: ctx.method, path: ctx.path }, 'unhandled error');
      ctx.status = 500;
      ctx.body = { detail: 'Internal Server Error', error_id: errorId };
    }
  };
}
