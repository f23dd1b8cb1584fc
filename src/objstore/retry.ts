// Retries with exponential backoff for object-store calls: a store that is briefly unreachable (a
// restarting SeaweedFS Pod, a network blip) costs a few seconds, not data. What is not transient
// (denied, no such bucket) fails at once. After the last attempt the error says what was tried,
// how often, for how long, and why — the caller (a reconcile, a route) decides what happens next.
import { setTimeout as sleep } from 'node:timers/promises';
import { Unavailable } from '../api/errors.ts';

export interface RetryPolicy {
  /** Attempts in all, the first included. Default 6. */
  attempts?: number;
  /** Wait before the second attempt; doubled each time. Default 200 ms. */
  baseDelayMs?: number;
  /** Longest wait between two attempts. Default 5 000 ms. */
  maxDelayMs?: number;
}

export async function withRetries<T>(what: string, policy: RetryPolicy, isTransient: (err: unknown) => boolean, op: () => Promise<T>): Promise<T> {
  const attempts = Math.max(1, policy.attempts ?? 6);
  const base = policy.baseDelayMs ?? 200;
  const max = policy.maxDelayMs ?? 5000;
  const started = Date.now();
  for (let attempt = 1; ; attempt++) {
    try {
      return await op();
    } catch (err) {
      if (!isTransient(err)) throw err;
      if (attempt >= attempts) {
        const seconds = ((Date.now() - started) / 1000).toFixed(1);
        throw new Unavailable(`${what}: the object store did not answer after ${attempts} attempts over ${seconds} s (${describe(err)}); nothing was lost, try again`, { cause: err, retryAfterSeconds: 10 });
      }
      // Full jitter on the upper half: spread retries of many callers, never shorter than half.
      const delay = Math.min(max, base * 2 ** (attempt - 1));
      await sleep(delay / 2 + Math.random() * (delay / 2));
    }
  }
}

/** A short reason without anything a credential could be in (codes and status only). */
export function describe(err: unknown): string {
  const e = err as { code?: string; name?: string; status?: unknown; $metadata?: { httpStatusCode?: number }; cause?: unknown };
  const status = e.$metadata?.httpStatusCode ?? (typeof e.status === 'number' ? e.status : undefined);
  const code = e.code ?? (e.cause as { code?: string } | undefined)?.code;
  return [e.name, code, status ? `HTTP ${status}` : undefined].filter(Boolean).join(', ') || 'unknown error';
}
