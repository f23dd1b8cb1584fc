// Model call failures, after the client's own retries, as the codes OpenHands puts on a
// ConversationErrorEvent (`LLMRateLimitError`, `LLMAuthenticationError`, ...) with a classification
// that tells a client whether to retry or fix settings. Branches on SDK error classes and the
// provider's `code` field; message text only for a refused key (AUTH_PHRASES, as OpenHands 1.58).
import { loadedSdk } from './sdk.ts';
import type { ErrorClassification } from '../../api/events/index.ts';

export type ModelErrorCode =
  | 'LLMRateLimitError'
  | 'LLMQuotaExceededError'
  | 'LLMAuthenticationError'
  | 'LLMContextWindowExceedError'
  | 'LLMBadRequestError'
  | 'LLMNotFoundError'
  | 'LLMTimeoutError'
  | 'LLMConnectionError'
  | 'LLMServiceUnavailableError'
  | 'LLMNoResponseError'
  | 'LLMConfigError'
  | 'LLMError';

export class ModelCallError extends Error {
  readonly code: ModelErrorCode;
  readonly status: number | undefined;
  readonly classification: ErrorClassification;
  constructor(code: ModelErrorCode, message: string, opts: { status?: number; cause?: unknown } = {}) {
    super(message, { cause: opts.cause });
    this.name = 'ModelCallError';
    this.code = code;
    this.status = opts.status;
    this.classification = CLASSIFICATION[code];
  }
}

const CLASSIFICATION: Record<ModelErrorCode, ErrorClassification> = {
  LLMRateLimitError: { kind: 'rate_limit', retryable: true, user_action: 'retry' },
  LLMQuotaExceededError: { kind: 'quota', retryable: false, user_action: 'settings' },
  LLMAuthenticationError: { kind: 'auth', retryable: false, user_action: 'settings' },
  LLMContextWindowExceedError: { kind: 'agent_action', retryable: false, user_action: 'none' },
  LLMBadRequestError: { kind: 'config', retryable: false, user_action: 'settings' },
  LLMNotFoundError: { kind: 'config', retryable: false, user_action: 'settings' },
  LLMTimeoutError: { kind: 'transient', retryable: true, user_action: 'retry' },
  LLMConnectionError: { kind: 'transient', retryable: true, user_action: 'retry' },
  LLMServiceUnavailableError: { kind: 'transient', retryable: true, user_action: 'retry' },
  LLMNoResponseError: { kind: 'transient', retryable: true, user_action: 'retry' },
  LLMConfigError: { kind: 'config', retryable: false, user_action: 'settings' },
  LLMError: { kind: 'unknown', retryable: false, user_action: 'none' },
};

const CONTEXT_WINDOW_CODES = new Set(['context_length_exceeded', 'context_window_exceeded', 'string_above_max_length']);

/**
 * A refused key that a provider or proxy answers with another status than 401/403 (a 400 saying
 * "Invalid API key", a 500 "Unauthorized" from a proxy): OpenHands 1.58 reads these phrases
 * (openhands.sdk.llm.exceptions.classifier.looks_like_auth_error) and reports LLMAuthenticationError,
 * which also triggers the managed key refresh (key-refresh.ts); a client must see the same code here,
 * and a managed key must be refreshed the same way.
 */
const AUTH_PHRASES = ['invalid api key', 'unauthorized', 'missing api key', 'invalid authentication', 'access denied', 'status 401', 'status 403'];
const refusesKey = (message: string) => AUTH_PHRASES.some((p) => message.toLowerCase().includes(p));

/** Maps whatever the SDK threw (after its retries) to a ModelCallError. */
export function toModelCallError(err: unknown): ModelCallError {
  if (err instanceof ModelCallError) return err;
  const OpenAI = loadedSdk();
  if (!OpenAI || !(err instanceof OpenAI.APIError)) {
    const e = err instanceof Error ? err : new Error(String(err));
    return new ModelCallError('LLMError', `The model call failed: ${e.message}`, { cause: err });
  }
  const status = typeof err.status === 'number' ? err.status : undefined;
  const say = (what: string) => `${what}${status ? ` (HTTP ${status})` : ''}: ${err.message}`;
  const make = (code: ModelErrorCode, what: string) => new ModelCallError(code, say(what), { ...(status ? { status } : {}), cause: err });
  if (err instanceof OpenAI.APIConnectionTimeoutError) return make('LLMTimeoutError', 'The model did not answer in time, also after retries');
  if (err instanceof OpenAI.APIConnectionError) return make('LLMConnectionError', 'The model endpoint could not be reached, also after retries');
  const contextWindow = (err instanceof OpenAI.BadRequestError || err instanceof OpenAI.UnprocessableEntityError) && !!err.code && CONTEXT_WINDOW_CODES.has(err.code);
  // OpenHands' order: the context window first, then a refused key (by class or by its phrases).
  if (!contextWindow && (err instanceof OpenAI.AuthenticationError || err instanceof OpenAI.PermissionDeniedError || refusesKey(err.message))) {
    return make('LLMAuthenticationError', 'The model endpoint refused the API key; check LLM_API_KEY');
  }
  if (err instanceof OpenAI.RateLimitError) {
    return err.code === 'insufficient_quota' ? make('LLMQuotaExceededError', 'The model provider quota is exhausted') : make('LLMRateLimitError', 'The model provider kept rate-limiting, also after retries');
  }
  if (err instanceof OpenAI.NotFoundError) return make('LLMNotFoundError', 'The model endpoint does not know this model or path; check LLM_MODEL and LLM_BASE_URL');
  if (err instanceof OpenAI.BadRequestError || err instanceof OpenAI.UnprocessableEntityError) {
    return contextWindow ? make('LLMContextWindowExceedError', 'The conversation no longer fits the model context window') : make('LLMBadRequestError', 'The model endpoint refused the request');
  }
  if (err instanceof OpenAI.InternalServerError) return make('LLMServiceUnavailableError', 'The model endpoint kept failing, also after retries');
  return make('LLMError', 'The model call failed');
}
