// Timeout and retry settings of a conversation's llm, against the scripted model over real HTTP.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startScriptedLlm, type ScriptedLlm } from '../../testing/scripted-llm/server.ts';
import { ModelClient } from './client.ts';
import { ModelCallError } from './errors.ts';
import { backoffSeconds, DEFAULT_RETRY, retrySettings } from './retry.ts';

let llm: ScriptedLlm;
beforeAll(async () => (llm = await startScriptedLlm()));
afterAll(() => llm.close());

const user = [{ role: 'user' as const, content: 'x' }];
/** A model that never answers: the step ends only when the client hangs up. */
const hung = () => (req: { signal: AbortSignal }) => new Promise<{ content: string }>((resolve) => req.signal.addEventListener('abort', () => resolve({ content: 'never seen' })));

describe('model call timeouts and retries', () => {
  it('takes timeout, num_retries and the backoff from the llm settings, OpenHands names and semantics', () => {
    expect(retrySettings(undefined)).toEqual(DEFAULT_RETRY);
    // OpenHands' own defaults, when a client sends them, are honoured as sent.
    const oh = retrySettings({ timeout: 300, num_retries: 5, retry_min_wait: 8, retry_max_wait: 64, retry_multiplier: 8 });
    expect(oh).toEqual({ timeoutSeconds: 300, attempts: 5, minWaitSeconds: 8, maxWaitSeconds: 64, multiplier: 8 });
    // tenacity's wait_exponential: multiplier x 2^(n-1), within [min, max].
    expect([1, 2, 3, 4, 5].map((n) => backoffSeconds(oh, n))).toEqual([8, 16, 32, 64, 64]);
    expect([1, 2, 3].map((n) => backoffSeconds(DEFAULT_RETRY, n))).toEqual([4, 4, 8]);
    // num_retries 0 still makes the one attempt; a null timeout is the default, not "wait forever".
    expect(retrySettings({ num_retries: 0, timeout: null })).toMatchObject({ attempts: 1, timeoutSeconds: DEFAULT_RETRY.timeoutSeconds });
  });

  it('a hung model ends after timeout x num_retries with an LLMTimeoutError naming both', async () => {
    const before = llm.requests.length;
    llm.push(hung(), hung());
    const model = new ModelClient({ model: 'openai/scripted', baseUrl: llm.url, retry: { timeout: 1, num_retries: 2, retry_min_wait: 0, retry_max_wait: 0 } });
    const started = Date.now();
    const err = await model.complete(user, []).then(
      () => undefined,
      (e: unknown) => e,
    );
    const took = Date.now() - started;
    expect(err).toBeInstanceOf(ModelCallError);
    expect(err).toMatchObject({ code: 'LLMTimeoutError', classification: { kind: 'transient', retryable: true } });
    expect((err as Error).message).toBe('The model did not answer within 1 s (llm.timeout), in 2 attempts (llm.num_retries 2)');
    expect(llm.requests.length - before).toBe(2);
    expect(took).toBeGreaterThanOrEqual(2000);
    expect(took).toBeLessThan(6000);
  });

  it('waits the backoff between attempts, and a provider retry-after instead when it sends one', async () => {
    const before = llm.requests.length;
    const at: number[] = [];
    const stamp = (reply: object) => () => (at.push(Date.now()), reply);
    llm.push(stamp({ status: 503 }), stamp({ status: 503, retryAfterMs: 50 }), stamp({ content: 'ok' }));
    const model = new ModelClient({ model: 'openai/scripted', baseUrl: llm.url, retry: { num_retries: 3, retry_min_wait: 1, retry_max_wait: 1, retry_multiplier: 1 } });
    expect((await model.complete(user, [])).content).toBe('ok');
    expect(llm.requests.length - before).toBe(3);
    expect(at[1]! - at[0]!).toBeGreaterThanOrEqual(950); // retry_min_wait 1 s
    expect(at[2]! - at[1]!).toBeLessThan(900); // retry-after-ms 50 wins
  });
});
