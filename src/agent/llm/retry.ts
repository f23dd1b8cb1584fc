// Timeouts and retries of model calls, as a conversation's `agent.llm` sets them (OpenHands' LLM
// fields): `timeout` seconds per attempt, `num_retries` attempts in all (OpenHands stops after that
// many attempts), and between attempts tenacity's exponential wait: retry_multiplier × 2^(n-1)
// seconds, kept within [retry_min_wait, retry_max_wait]. A provider's retry-after wins over it.
// The defaults are what a user would choose: a hung model ends the run in about 6 minutes with an
// LLMTimeoutError, not OpenHands' 5 × 300 s (those values still apply when a client sends them).
import { loadedSdk, loadSdk, sdkInCall } from './sdk.ts';
import { ModelCallError, toModelCallError } from './errors.ts';

export interface RetrySettings {
  /** Per attempt. */
  timeoutSeconds: number;
  /** Attempts in all (the first included), at least 1. */
  attempts: number;
  minWaitSeconds: number;
  maxWaitSeconds: number;
  multiplier: number;
}

export const DEFAULT_RETRY: RetrySettings = { timeoutSeconds: 120, attempts: 3, minWaitSeconds: 4, maxWaitSeconds: 30, multiplier: 2 };

/** The `agent.llm` fields (OpenHands names) that set them; absent or null: the default. */
export interface LlmRetryFields {
  timeout?: number | null;
  num_retries?: number | null;
  retry_min_wait?: number | null;
  retry_max_wait?: number | null;
  retry_multiplier?: number | null;
}

export function retrySettings(fields: LlmRetryFields | undefined, defaults: RetrySettings = DEFAULT_RETRY): RetrySettings {
  const f = fields ?? {};
  const min = f.retry_min_wait ?? defaults.minWaitSeconds;
  return {
    timeoutSeconds: f.timeout && f.timeout > 0 ? f.timeout : defaults.timeoutSeconds,
    attempts: Math.max(1, f.num_retries ?? defaults.attempts),
    minWaitSeconds: min,
    maxWaitSeconds: Math.max(min, f.retry_max_wait ?? defaults.maxWaitSeconds),
    multiplier: f.retry_multiplier ?? defaults.multiplier,
  };
}

/** Seconds to wait after failed attempt `attempt` (1-based): tenacity's wait_exponential. */
export function backoffSeconds(s: RetrySettings, attempt: number): number {
  const raw = s.multiplier * 2 ** (attempt - 1);
  return Math.max(s.minWaitSeconds, Math.min(raw, s.maxWaitSeconds));
}

/** What OpenAI's SDK would retry: connection errors and timeouts, 408, 409, 429 (not an exhausted quota), 5xx; `x-should-retry` decides first. */
export function isRetryable(err: unknown): boolean {
  if (err instanceof ModelCallError) return err.code === 'LLMNoResponseError';
  const OpenAI = loadedSdk();
  if (!OpenAI) return false; // no SDK, no SDK error
  if (err instanceof OpenAI.APIUserAbortError) return false;
  if (err instanceof OpenAI.APIConnectionError) return true;
  if (!(err instanceof OpenAI.APIError)) return false;
  const header = err.headers?.get('x-should-retry');
  if (header === 'true') return true;
  if (header === 'false') return false;
  if (err instanceof OpenAI.RateLimitError && err.code === 'insufficient_quota') return false;
  const status = err.status ?? 0;
  return status === 408 || status === 409 || status === 429 || status >= 500;
}

/** The provider's requested wait (retry-after-ms, retry-after seconds or date), when sane (≤ 60 s). */
function retryAfterMs(err: unknown): number | undefined {
  const OpenAI = loadedSdk();
  const headers = OpenAI && err instanceof OpenAI.APIError ? err.headers : undefined;
  if (!headers) return undefined;
  let ms = Number.parseFloat(headers.get('retry-after-ms') ?? '');
  if (Number.isNaN(ms)) {
    const h = headers.get('retry-after');
    if (h) ms = Number.isNaN(Number.parseFloat(h)) ? Date.parse(h) - Date.now() : Number.parseFloat(h) * 1000;
  }
  return Number.isFinite(ms) && ms >= 0 && ms <= 60_000 ? ms : undefined;
}

function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  const OpenAI = sdkInCall();
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(new OpenAI.APIUserAbortError());
    const onAbort = () => {
      clearTimeout(timer);
      reject(new OpenAI.APIUserAbortError());
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/** The provider refused for its rate limit (429), as opposed to a failure or a timeout. */
export function isRateLimit(err: unknown): boolean {
  const OpenAI = loadedSdk();
  return OpenAI !== undefined && err instanceof OpenAI.APIError && err.status === 429;
}

/** A wait between attempts: after which failure, how long, and which attempt comes next. */
export interface RetryWait {
  error: unknown;
  ms: number;
  /** The attempt that follows the wait (2 for the first retry). */
  next: number;
  attempts: number;
}

export interface RetryHooks {
  /** May veto a retry (a streamed answer already shown in part). */
  canRetry?(): boolean;
  /** Before each wait between attempts. */
  waiting?(wait: RetryWait): void;
  /** After each wait, just before the next attempt (not when the wait was aborted). */
  resumed?(): void;
}

/**
 * Runs `attempt` until it succeeds, fails for good, or the attempts are used up. Rejects with a
 * ModelCallError (the timeout named with its settings), or the SDK's APIUserAbortError when `signal` aborts.
 */
export async function withRetries<T>(s: RetrySettings, signal: AbortSignal | undefined, attempt: () => Promise<T>, hooks: RetryHooks = {}): Promise<T> {
  const OpenAI = await loadSdk();
  for (let n = 1; ; n++) {
    try {
      return await attempt();
    } catch (err) {
      if (err instanceof OpenAI.APIUserAbortError || signal?.aborted) throw err instanceof OpenAI.APIUserAbortError ? err : new OpenAI.APIUserAbortError();
      if (n >= s.attempts || !isRetryable(err) || hooks.canRetry?.() === false) throw giveUp(err, s, n);
      const ms = retryAfterMs(err) ?? backoffSeconds(s, n) * 1000;
      hooks.waiting?.({ error: err, ms, next: n + 1, attempts: s.attempts });
      await sleep(ms, signal);
      hooks.resumed?.();
    }
  }
}

function giveUp(err: unknown, s: RetrySettings, attempts: number): ModelCallError {
  const tries = `${attempts} attempt${attempts === 1 ? '' : 's'} (llm.num_retries ${s.attempts})`;
  if (err instanceof sdkInCall().APIConnectionTimeoutError) {
    return new ModelCallError('LLMTimeoutError', `The model did not answer within ${s.timeoutSeconds} s (llm.timeout), in ${tries}`, { cause: err });
  }
  const e = toModelCallError(err);
  return attempts > 1 ? new ModelCallError(e.code, `${e.message} (after ${tries})`, { ...(e.status ? { status: e.status } : {}), cause: err }) : e;
}
