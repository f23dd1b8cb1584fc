// Domain errors. Code throws these; only src/facade/errors.ts turns them into HTTP.
// No code matches on err.message: callers branch on the class or on `code`.

export type ErrorCode =
  | 'BadRequest'
  | 'Unauthorized'
  | 'Forbidden'
  | 'NotFound'
  | 'Conflict'
  | 'Gone'
  | 'Invalid'
  | 'TooManyRequests'
  | 'NotImplemented'
  | 'BadGateway'
  | 'Unavailable'
  | 'InsufficientStorage'
  | 'ServerError'
  | 'GatewayTimeout';

/** One entry of a 422 body, in the FastAPI/OpenHands `HTTPValidationError` shape. */
export interface ValidationIssue {
  loc: (string | number)[];
  msg: string;
  type: string;
}

export abstract class AgentyardError extends Error {
  abstract readonly code: ErrorCode;
  /** What goes into the `detail` of the response body; safe to show to the caller. */
  readonly detail: unknown;
  constructor(detail: unknown, options?: ErrorOptions) {
    super(typeof detail === 'string' ? detail : JSON.stringify(detail), options);
    this.detail = detail;
    this.name = new.target.name;
  }
}

export class BadRequest extends AgentyardError {
  readonly code = 'BadRequest' as const;
}
export class Unauthorized extends AgentyardError {
  readonly code = 'Unauthorized' as const;
}
export class Forbidden extends AgentyardError {
  readonly code = 'Forbidden' as const;
}
export class NotFound extends AgentyardError {
  readonly code = 'NotFound' as const;
}
/** A stale resourceVersion, an existing name, or a state that forbids the operation. */
export class Conflict extends AgentyardError {
  readonly code = 'Conflict' as const;
}
/** A watch asked for a resourceVersion older than the store still remembers. */
export class Gone extends AgentyardError {
  readonly code = 'Gone' as const;
}
export class Invalid extends AgentyardError {
  readonly code = 'Invalid' as const;
  declare readonly detail: ValidationIssue[];
  constructor(issues: ValidationIssue[], options?: ErrorOptions) {
    super(issues, options);
  }
}
export class TooManyRequests extends AgentyardError {
  readonly code = 'TooManyRequests' as const;
  readonly retryAfterSeconds: number;
  constructor(detail: unknown, retryAfterSeconds: number, options?: ErrorOptions) {
    super(detail, options);
    this.retryAfterSeconds = retryAfterSeconds;
  }
}
export class NotImplemented extends AgentyardError {
  readonly code = 'NotImplemented' as const;
}
export class BadGateway extends AgentyardError {
  readonly code = 'BadGateway' as const;
}
/** Try again later; `retryAfterSeconds`, when known, becomes the Retry-After header. */
export class Unavailable extends AgentyardError {
  readonly code = 'Unavailable' as const;
  readonly retryAfterSeconds: number | undefined;
  constructor(detail: unknown, options?: ErrorOptions & { retryAfterSeconds?: number }) {
    super(detail, options);
    this.retryAfterSeconds = options?.retryAfterSeconds;
  }
}

/** A failure the caller may be told about (500 with this detail), e.g. an agent run that ended in error. */
export class ServerError extends AgentyardError {
  readonly code = 'ServerError' as const;
}
/** What the request waited for did not happen in time (504); it may still happen. */
export class GatewayTimeout extends AgentyardError {
  readonly code = 'GatewayTimeout' as const;
}

/** The disk is full or failing (507): the write was not made; retry once space returns. */
export class InsufficientStorage extends AgentyardError {
  readonly code = 'InsufficientStorage' as const;
  readonly retryAfterSeconds: number | undefined;
  constructor(detail: unknown, options?: ErrorOptions & { retryAfterSeconds?: number }) {
    super(detail, options);
    this.retryAfterSeconds = options?.retryAfterSeconds;
  }
}

export function isAgentyardError(err: unknown): err is AgentyardError {
  return err instanceof AgentyardError;
}
