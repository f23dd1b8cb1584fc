// Turns what @kubernetes/client-node throws into agentyard's domain errors, so callers of
// KubeStore branch on the same classes as with SqliteStore and never on HTTP codes.
import { ApiException } from '@kubernetes/client-node';
import {
  AgentyardError,
  BadRequest,
  Conflict,
  Forbidden,
  Gone,
  Invalid,
  NotFound,
  TooManyRequests,
  Unauthorized,
  Unavailable,
  type ValidationIssue,
} from '../../api/errors.ts';

/** The parts of a metav1.Status that we read. */
export interface KubeStatus {
  kind?: string;
  status?: string;
  message?: string;
  reason?: string;
  code?: number;
  details?: {
    name?: string;
    kind?: string;
    retryAfterSeconds?: number;
    causes?: { reason?: string; message?: string; field?: string }[];
  };
}

/** ApiException.body is the raw response text for undeclared codes, or already parsed. */
export function statusOf(err: ApiException<unknown>): KubeStatus | undefined {
  const body = err.body;
  if (typeof body === 'string') {
    try {
      const parsed: unknown = JSON.parse(body);
      return typeof parsed === 'object' && parsed !== null ? (parsed as KubeStatus) : undefined;
    } catch {
      return undefined;
    }
  }
  return typeof body === 'object' && body !== null ? (body as KubeStatus) : undefined;
}

/** `spec.plugins[0].source` → ['spec', 'plugins', 0, 'source']; dots inside [...] stay in the key. */
export function fieldPath(field: string): (string | number)[] {
  const loc: (string | number)[] = [];
  for (const m of field.matchAll(/([^.[\]]+)|\[([^\]]*)\]/g)) {
    if (m[1] !== undefined) loc.push(m[1]);
    else {
      const key = (m[2] ?? '').replace(/^"|"$/g, '');
      loc.push(/^\d+$/.test(key) ? Number(key) : key);
    }
  }
  return loc;
}

const CAUSE_TYPES: Record<string, string> = {
  FieldValueRequired: 'missing',
  FieldValueInvalid: 'value_error',
  FieldValueNotSupported: 'enum',
  FieldValueTypeInvalid: 'type_error',
  FieldValueDuplicate: 'value_error.duplicate',
  FieldValueTooLong: 'value_error.too_long',
  FieldValueTooMany: 'value_error.too_many',
  FieldValueForbidden: 'value_error.forbidden',
  FieldValueNotFound: 'value_error.not_found',
};

export function issuesFromStatus(status: KubeStatus | undefined): ValidationIssue[] {
  const causes = status?.details?.causes ?? [];
  if (causes.length === 0) return [{ loc: [], msg: status?.message ?? 'invalid', type: 'value_error' }];
  return causes.map((c) => ({
    loc: c.field ? fieldPath(c.field) : [],
    msg: c.message ?? status?.message ?? 'invalid',
    type: CAUSE_TYPES[c.reason ?? ''] ?? 'value_error',
  }));
}

/** Maps a client-node error (or a watch ERROR Status) to an AgentyardError; other errors pass through. */
export function fromKube(err: unknown, what: string): unknown {
  if (err instanceof AgentyardError) return err;
  if (err instanceof ApiException) return fromStatus(err.code, statusOf(err), what, err);
  if (isNetworkError(err)) return new Unavailable(`${what}: API server unreachable`, { cause: err });
  return err;
}

const NETWORK_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EPIPE', 'EAI_AGAIN']);

/**
 * undici's fetch reports every transport failure as a TypeError with the underlying error as its
 * cause (socket codes, TLS errors, refused ports); our own bugs do not carry a cause.
 */
export function isNetworkError(err: unknown): boolean {
  if (err instanceof TypeError && err.cause instanceof Error) return true;
  for (let e: unknown = err, depth = 0; e instanceof Error && depth < 4; e = e.cause, depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && (NETWORK_CODES.has(code) || code.startsWith('UND_ERR_'))) return true;
  }
  return false;
}

export function fromStatus(code: number, status: KubeStatus | undefined, what: string, cause?: unknown): AgentyardError {
  const message = status?.message ?? `${what}: HTTP ${code}`;
  const options = cause === undefined ? undefined : { cause };
  switch (code) {
    case 400:
      return new BadRequest(message, options);
    case 401:
      return new Unauthorized(message, options);
    case 403:
      return new Forbidden(message, options);
    case 404:
      return new NotFound(message, options);
    case 409:
      return new Conflict(message, options);
    case 410:
      return new Gone(message, options);
    case 422:
      return new Invalid(issuesFromStatus(status), options);
    case 429:
      return new TooManyRequests(message, status?.details?.retryAfterSeconds ?? 1, options);
    default:
      return new Unavailable(message, options);
  }
}
