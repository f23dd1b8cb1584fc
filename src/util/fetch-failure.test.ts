import { createServer } from 'node:net';
import { describe, expect, it } from 'vitest';
import { fetchFailure } from './fetch-failure.ts';

async function failureOf(url: string, timeoutMs?: number): Promise<string> {
  try {
    await fetch(url, timeoutMs ? { signal: AbortSignal.timeout(timeoutMs) } : {});
  } catch (err) {
    return fetchFailure(err, timeoutMs);
  }
  throw new Error(`GET ${url} did not fail`);
}

describe('fetchFailure', () => {
  it('names the reason undici keeps in the cause: a refused connection, a timeout', async () => {
    // A port that was just free: nothing listens there.
    const probe = createServer();
    await new Promise<void>((r) => probe.listen(0, '127.0.0.1', r));
    const { port } = probe.address() as { port: number };
    await new Promise((r) => probe.close(r));
    expect(await failureOf(`http://127.0.0.1:${port}/`)).toBe('ECONNREFUSED');

    // A server that accepts and never answers.
    const silent = createServer(() => {});
    await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
    try {
      expect(await failureOf(`http://127.0.0.1:${(silent.address() as { port: number }).port}/`, 200)).toBe('no answer within 0.2 s');
    } finally {
      silent.close();
    }
  });
});
